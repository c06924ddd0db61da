"""Ollama: llama.cpp underneath, ``num_ctx`` x ``num_parallel`` cells in one cache.

Ollama's runner sizes the llama.cpp context as ``OLLAMA_CONTEXT_LENGTH`` (``num_ctx``) times
``OLLAMA_NUM_PARALLEL`` slots, each slot getting ``num_ctx`` (``llm/server.go``: ``numCtx *
numParallel``). ``OLLAMA_KV_CACHE_TYPE`` (f16, q8_0, q4_0) applies to K and V alike and is only
honoured with ``OLLAMA_FLASH_ATTENTION=1``; without it Ollama falls back to f16.
"""

from __future__ import annotations

from kvlint.deployment import Deployment
from kvlint.engines.common import positive
from kvlint.engines.common import val
from kvlint.engines.llamacpp.accounting import estimate_with
from kvlint.engines.llamacpp.accounting import settings_for
from kvlint.engines.ollama import defaults as D
from kvlint.engines.versions import NEWEST
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec


def _flash_attention(dep: Deployment) -> bool:
    raw = val(dep.flash_attention)
    if raw is None and "OLLAMA_FLASH_ATTENTION" in dep.env:
        raw = dep.env["OLLAMA_FLASH_ATTENTION"].value
    return str(raw or "").strip().lower() in ("1", "true", "on", "yes")


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """What Ollama's llama.cpp runner allocates for ``dep``."""
    notes: list[str] = []
    version = val(dep.engine_version) or NEWEST["ollama"]
    num_ctx = val(dep.max_model_len)
    if not num_ctx:
        num_ctx = D.OLLAMA_CONTEXT_LENGTH
        notes.append(f"default OLLAMA_CONTEXT_LENGTH {num_ctx}")
    num_parallel = val(dep.max_num_seqs)
    if not num_parallel:
        num_parallel = D.OLLAMA_NUM_PARALLEL
        notes.append(f"default OLLAMA_NUM_PARALLEL {num_parallel}")
    cache_type = (val(dep.kv_cache_dtype) or D.OLLAMA_KV_CACHE_TYPE).lower()
    if cache_type != "f16" and not _flash_attention(dep):
        notes.append(
            f"OLLAMA_KV_CACHE_TYPE {cache_type} needs OLLAMA_FLASH_ATTENTION=1: Ollama uses f16"
        )
        cache_type = "f16"
    filled: list[tuple[str, object]] = []
    if dep.engine_version is None:
        filled.append(("engine_version", version))
    if not val(dep.max_model_len):
        filled.append(("max_model_len", num_ctx))
    if not val(dep.max_num_seqs):
        filled.append(("max_num_seqs", num_parallel))
    if dep.kv_cache_dtype is None:
        filled.append(("kv_cache_dtype", cache_type))
    s = settings_for(
        spec,
        n_ctx=num_ctx * num_parallel,
        n_parallel=num_parallel,
        unified=False,  # each slot gets num_ctx cells
        type_k=cache_type,
        type_v=cache_type,
        swa_full=False,
        flash_attention="on" if _flash_attention(dep) else "off",
    )
    return estimate_with(
        spec,
        s,
        gpu,
        engine="ollama",
        version=version,
        gpu_count=positive(val(dep.gpu_count)),
        quantization=val(dep.quantization) or "q4_k_m",
        notes=[f"Ollama {version}: llama.cpp with num_ctx x num_parallel cells", *notes],
        # Ollama's scheduler offloads layers that do not fit to the CPU; it never lowers
        # num_ctx (it is always set), so only the offload applies.
        auto_fit=True,
        layers_pinned=False,
        defaults=tuple(filled),
    )
