"""Ollama: llama.cpp underneath, ``num_ctx`` x ``num_parallel`` cells in one cache.

Ollama's runner sizes the llama.cpp context as ``OLLAMA_CONTEXT_LENGTH`` (``num_ctx``) times
``OLLAMA_NUM_PARALLEL`` slots, each slot getting ``num_ctx`` (``llm/server.go``: ``numCtx *
numParallel``). ``OLLAMA_KV_CACHE_TYPE`` (f16, q8_0, q4_0) applies to K and V alike and is only
honoured with ``OLLAMA_FLASH_ATTENTION=1``; without it Ollama falls back to f16.
"""

from __future__ import annotations

from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import without_storage
from kvlint.engines.llamacpp.accounting import estimate_with
from kvlint.engines.llamacpp.accounting import settings_for
from kvlint.engines.ollama.effective import OllamaSettled
from kvlint.estimate import EngineEstimate


def estimate(s: OllamaSettled) -> EngineEstimate:
    """What Ollama's llama.cpp runner allocates for the settled deployment."""
    spec = s.spec
    version = str(s.version.value)
    num_ctx = s.max_model_len.value
    assert s.max_num_seqs is not None
    num_parallel = s.max_num_seqs.value
    filled: list[tuple[str, object]] = []
    if s.version.default:
        filled.append(("engine_version", version))
    if s.max_model_len.default:
        filled.append(("max_model_len", num_ctx))
    if s.max_num_seqs.default:
        filled.append(("max_num_seqs", num_parallel))
    types = s.cache_types
    if types is None:
        base = EngineEstimate(engine="ollama", version=version, max_model_len=num_ctx)
        return without_storage(s, base)
    if s.cache_dtype.default:
        filled.append(("kv_cache_dtype", s.cache_dtype.value))
    cells = settings_for(
        spec,
        n_ctx=num_ctx * num_parallel,
        n_parallel=num_parallel,
        unified=False,  # each slot gets num_ctx cells
        types=types,
        swa_full=False,
        flash_attention="on" if s.flash else "off",
    )
    quantization = s.quantization.value if s.quantization is not None else None
    return estimate_with(
        spec,
        cells,
        s.gpu,
        engine="ollama",
        version=version,
        gpu_count=s.gpu_count.value if s.gpu_count is not None and s.gpu_count.value > 0 else 1,
        quantization=quantization or "q4_k_m",
        notes=[f"Ollama {version}: llama.cpp with num_ctx x num_parallel cells", *s.notes],
        # Ollama's scheduler offloads layers that do not fit to the CPU; it never lowers
        # num_ctx (it is always set), so only the offload applies.
        auto_fit=True,
        layers_pinned=False,
        defaults=tuple(filled),
        reserved=reserved_bytes(s),
    )
