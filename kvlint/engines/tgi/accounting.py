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
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.deployment import Deployment
from kvlint.engines.common import head_dims
from kvlint.engines.common import positive
from kvlint.engines.common import setting
from kvlint.engines.common import val
from kvlint.engines.tgi import defaults as D
from kvlint.engines.versions import NEWEST
from kvlint.engines.vllm.accounting import cache_types
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB

# CUDA context, NCCL and cuBLAS workspaces outside the torch allocator.
_CONTEXT_ONE = 0.5 * GiB
_CONTEXT_SHARDED = 1.0 * GiB


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """What ``text-generation-launcher`` infers for ``dep``."""
    version = val(dep.engine_version) or NEWEST["tgi"]
    shards = positive(val(dep.tensor_parallel_size) or val(dep.gpu_count))
    notes = [f"TGI {version}" + ("" if dep.engine_version else " (newest known)")]
    attention = dep.env["ATTENTION"].value if "ATTENTION" in dep.env else None
    block = D.tgi_block_size(attention)
    fraction = val(dep.memory_fraction)
    if fraction is None:
        fraction = D.TGI_CUDA_MEMORY_FRACTION
    wiggle = D.TGI_WIGGLE_ROOM
    if "TGI_WIGGLE_ROOM" in dep.env:
        wiggle = float(dep.env["TGI_WIGGLE_ROOM"].value)
    types = cache_types(spec, (val(dep.kv_cache_dtype) or "auto").lower(), val(dep.dtype))
    per_token = 0
    for layer in spec.layers:
        if layer.kind in (CacheKind.SHARED, CacheKind.STATE, CacheKind.NONE):
            continue
        heads = 1 if layer.kind is CacheKind.MLA else max(1, layer.kv_heads // shards)
        head_k, head_v = head_dims(layer)
        per_token += types.k.bytes_for(heads * head_k) + types.v.bytes_for(heads * head_v)
    weights = weight_bytes_per_gpu(
        spec, tp=shards, quantization=val(dep.quantization), dtype=val(dep.dtype)
    )
    positions = spec.max_position_embeddings or 4096
    filled: list[tuple[str, object]] = []
    if dep.engine_version is None:
        filled.append(("engine_version", version))
    if dep.memory_fraction is None:
        filled.append(("memory_fraction", fraction))
    base = EngineEstimate(
        defaults=tuple(filled),
        engine="tgi",
        version=version,
        max_model_len=val(dep.max_model_len) or positions,
        memory_fraction=fraction,
        weights_bytes=weights,
        bytes_per_token=per_token,
        block_size=block,
        notes=tuple(notes),
    )
    if gpu is None:
        return replace(base, missing=("GPU type",))
    context = _CONTEXT_SHARDED if shards > 1 else _CONTEXT_ONE
    available = round(gpu.total_bytes * fraction * wiggle - weights - context)
    blocks = max(0, available) // (per_token * block) if per_token else 0
    inferred = blocks * block
    notes.append(f"Setting max batch total tokens to {inferred}")
    max_total = val(dep.max_model_len)
    if max_total is None:
        max_total = min(inferred, positions)
        notes.append(f"default max_total_tokens {max_total} (min of the budget and the model)")
        filled.append(("max_model_len", max_total))
    user_batch = setting(dep.settings, "max-batch-total-tokens")
    if isinstance(user_batch, int):
        notes.append(
            "`--max-batch-total-tokens` is deprecated for Flash Attention models: "
            f"{user_batch} is ignored, the inferred {inferred} applies"
        )
    fits = max_total <= inferred and available > 0
    error = None
    if available <= 0:
        error = (
            f"the weights ({weights / GiB:.2f} GiB per shard) leave no memory for the KV cache "
            f"under --cuda-memory-fraction {fraction:g} and TGI_WIGGLE_ROOM {wiggle:g}"
        )
    elif not fits:
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
        notes=tuple(notes),
        defaults=tuple(filled),
    )
