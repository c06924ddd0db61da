"""Hugging Face TGI: the token budget ``max_batch_total_tokens`` it infers at warm-up.

Mirrors ``server/text_generation_server/models/flash_causal_lm.py`` ``FlashCausalLM.warmup``
(blocks from the free memory after warm-up, ``TGI_WIGGLE_ROOM`` 0.90), ``utils/import_utils.py``
``get_free_memory`` (``free - (1 - fraction) x total``), ``models/globals.py`` (``BLOCK_SIZE``
by attention backend) and the router's checks (``backends/v3/src/lib.rs``); ``research/engines.md``
section 4 quotes each. The warm-up activations are released (``empty_cache``) before the free
memory is read, so what is left is ``total x fraction x 0.90 - weights - CUDA context``: on
Llama-3.1-70B over two A100 80GB that gives 30,3xx tokens against the 30,816 logged
(``tgi-llama-3.1-70b-2xa100-80g-30816`` in the calibration set).
"""

from __future__ import annotations

from dataclasses import replace

from kvlint.arith.kv import KvSize
from kvlint.arith.parallel import tp_problem
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.engines.common import head_dims
from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import reserved_note
from kvlint.engines.common import without_storage
from kvlint.engines.tgi.effective import TgiSettled
from kvlint.engines.tgi.facts import FACTS
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheTypes
from kvlint.units import GiB

# CUDA context, NCCL and cuBLAS workspaces outside the torch allocator.
_CONTEXT_ONE = 0.5 * GiB
_CONTEXT_SHARDED = 1.0 * GiB


def _token_bytes(spec: ModelSpec, types: CacheTypes, shards: int) -> int:
    """One token over every layer on one shard (MLA keeps its latent whole on each)."""
    per_token = 0
    for layer in spec.layers:
        if layer.kind in (CacheKind.SHARED, CacheKind.STATE, CacheKind.NONE):
            continue
        heads = 1 if layer.kind is CacheKind.MLA else max(1, layer.kv_heads // shards)
        head_k, head_v = head_dims(layer)
        per_token += types.k.bytes_for(heads * head_k, heads)
        per_token += types.v.bytes_for(heads * head_v, heads)
    return per_token


def estimate(s: TgiSettled) -> EngineEstimate:
    """What ``text-generation-launcher`` infers for the settled deployment."""
    spec, gpu = s.spec, s.gpu
    version = str(s.version.value)
    shards = s.tensor_parallel_size.value
    notes = list(s.notes)
    assert s.block_size is not None and s.memory_fraction is not None
    block = s.block_size.value
    fraction = s.memory_fraction.value
    wiggle = s.wiggle_room
    quantization = s.quantization.value if s.quantization is not None else None
    dtype = s.dtype.value if s.dtype is not None else None
    weights = weight_bytes_per_gpu(spec, tp=shards, quantization=quantization, dtype=dtype)
    positions = spec.max_position_embeddings or 4096
    filled: list[tuple[str, object]] = []
    if s.version.default:
        filled.append(("engine_version", version))
    if s.memory_fraction.default:
        filled.append(("memory_fraction", fraction))
    types = s.cache_types
    per_token = _token_bytes(spec, types, shards) if types is not None else 0
    asked = None if s.max_model_len.default else s.max_model_len.value
    base = EngineEstimate(
        defaults=tuple(filled),
        engine="tgi",
        version=version,
        max_model_len=asked or positions,
        memory_fraction=fraction,
        weights_bytes=weights,
        bytes_per_token=per_token,
        block_size=block,
        notes=tuple(notes),
    )
    if types is None:
        return without_storage(s, base)
    problem = tp_problem(spec, FACTS.parallel, shards)
    if problem is not None:
        return replace(base, fits=False, error=problem, refusal=Refusal.LAYOUT)
    if gpu is None:
        return replace(base, missing=("GPU type",))
    context = _CONTEXT_SHARDED if shards > 1 else _CONTEXT_ONE
    # get_free_memory is the device's free memory less (1 - fraction) x total: other residents
    # come off it before the wiggle room applies.
    others = reserved_bytes(s)
    available = round((gpu.total_bytes * fraction - others) * wiggle - weights - context)
    held = reserved_note(s, "taken off the free memory")
    if held is not None:
        notes.append(held)
    blocks = max(0, available) // (per_token * block) if per_token else 0
    inferred = blocks * block
    notes.append(f"Setting max batch total tokens to {inferred}")
    max_total = asked
    if max_total is None:
        max_total = min(inferred, positions)
        notes.append(f"default max_total_tokens {max_total} (min of the budget and the model)")
        filled.append(("max_model_len", max_total))
    if s.max_batch_total_tokens is not None:
        notes.append(
            "`--max-batch-total-tokens` is deprecated for Flash Attention models: "
            f"{s.max_batch_total_tokens} is ignored, the inferred {inferred} applies"
        )
    fits = max_total <= inferred and available > 0
    error = None
    refusal = None
    if available <= 0:
        refusal = (
            Refusal.WEIGHTS if weights > gpu.total_bytes * fraction else Refusal.NO_CACHE_MEMORY
        )
        error = (
            f"the weights ({weights / GiB:.2f} GiB per shard) leave no memory for the KV cache "
            f"under --cuda-memory-fraction {fraction:g} and TGI_WIGGLE_ROOM {wiggle:g}"
        )
    elif not fits:
        refusal = Refusal.ONE_REQUEST
        error = f"Not enough memory to handle `max_total_tokens={max_total}`"
    first = KvSize(spec, types).tokens_fitting(max(0, available) * shards)
    return replace(
        base,
        max_model_len=max_total,
        gpu_total_bytes=gpu.total_bytes,
        available_kv_bytes=available,
        num_blocks=blocks,
        kv_cache_tokens=inferred,
        max_concurrency=round(inferred / max_total, 2) if max_total else None,
        fits=fits,
        needed_bytes_one_sequence=per_token * max_total,
        first_principles_tokens=first,
        error=error,
        refusal=refusal,
        notes=tuple(notes),
        defaults=tuple(filled),
    )
