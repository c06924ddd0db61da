"""SGLang's KV pool: ``mem_fraction_static``, ``max_total_num_tokens``, SWA pools, admission.

Mirrors SGLang 0.5.23 (``research/engines.md`` section 2): ``memory_hook.py``
``handle_gpu_memory_settings`` (the ``mem_fraction_static`` default),
``kv_cache_configurator.py`` ``_profile_available_bytes`` (what is left for the pool),
``pool_configurator.py`` (cell size, ``max_total_num_tokens``, the hybrid SWA pool) and
``resolve_max_num_reqs`` (the ``max_running_requests`` default and cap).
"""

from __future__ import annotations

from dataclasses import replace

from kvlint.arith.kv import CacheTypes
from kvlint.arith.kv import KvSize
from kvlint.arith.weights import pp_layer_ranges
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.deployment import Deployment
from kvlint.engines.common import flag
from kvlint.engines.common import head_dims
from kvlint.engines.common import positive
from kvlint.engines.common import setting
from kvlint.engines.common import val
from kvlint.engines.sglang import defaults as D
from kvlint.engines.versions import NEWEST
from kvlint.engines.vllm.accounting import SPARSE_MLA_INDEXER_BYTES
from kvlint.engines.vllm.accounting import SPARSE_MLA_MODEL_TYPES
from kvlint.engines.vllm.accounting import cache_types
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB

# CUDA context, NCCL and cuBLAS before the weights load ("pre_model_load_memory" is the free
# memory then): ~0.5 GiB on one GPU, ~1.9 GiB at TP 8 (DeepSeek-V4-Pro on H200: 12.25 + 125.65
# GB free + used after loading, of 139.80 GiB).
_INIT_TP1 = 0.5 * GiB
_INIT_TP = 1.9 * GiB


def context_length(spec: ModelSpec) -> int:
    """``_derive_context_length``: the first length key, times the RoPE factor unless the
    scaling carries ``original_max_position_embeddings`` or is llama3."""
    derived = spec.max_position_embeddings or 2048
    rope = spec.rope_scaling
    if rope is None or not rope.factor:
        return derived
    if rope.original_max_position_embeddings or rope.rope_type == "llama3":
        return derived
    return int(derived * rope.factor)


def _cell_bytes(layer: LayerSpec, types: CacheTypes, tp: int, sparse: bool = False) -> int:
    """One token in one layer on one GPU (``_compute_cell_size``). DeepSeek sparse attention
    stores an fp8 latent (656 bytes) and the indexer's keys (132 bytes) per token."""
    if layer.kind in (CacheKind.SHARED, CacheKind.STATE, CacheKind.NONE):
        return 0
    if layer.kind is CacheKind.MLA:
        if sparse:
            return 656 + SPARSE_MLA_INDEXER_BYTES
        return types.k.bytes_for(layer.head_dim_k)
    heads = max(1, layer.kv_heads // max(1, tp))
    head_k, head_v = head_dims(layer)
    return types.k.bytes_for(heads * head_k) + types.v.bytes_for(heads * head_v)


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """What ``sglang.launch_server`` allocates for ``dep``."""
    version = val(dep.engine_version) or NEWEST["sglang"]
    tp = positive(val(dep.tensor_parallel_size))
    pp = positive(val(dep.pipeline_parallel_size))
    notes = [f"SGLang {version}" + ("" if dep.engine_version else " (newest known)")]
    derived = context_length(spec)
    context = val(dep.max_model_len) or derived
    if not val(dep.max_model_len):
        notes.append(f"default context length {context:,} (the model's)")
    types = cache_types(spec, (val(dep.kv_cache_dtype) or "auto").lower(), val(dep.dtype))
    total = gpu.total_bytes if gpu is not None else None
    dp = positive(val(dep.data_parallel_size))
    dp_attention = dp if setting(dep.settings, "enable-dp-attention") else 0
    mfs = val(dep.memory_fraction)
    if mfs is None:
        mfs = D.sglang_mem_fraction_static(total, tp, pp, dp_attention)
        notes.append(f"default mem_fraction_static {mfs:g}")
    start, end = pp_layer_ranges(spec.num_layers, pp)[0]
    stage_layers = spec.layers[start:end]
    hybrid_swa = not bool(setting(dep.settings, "disable-hybrid-swa-memory")) and any(
        layer.kind.bounded for layer in stage_layers
    )
    if hybrid_swa and spec.model_type in D.SGLANG_NO_HYBRID_SWA:
        hybrid_swa = False
        notes.append(f"SGLang turns the hybrid SWA pool off for {spec.model_type}")
    ratio = float(
        str(setting(dep.settings, "swa-full-tokens-ratio") or D.SGLANG_SWA_FULL_TOKENS_RATIO)
    )
    sparse = spec.model_type in SPARSE_MLA_MODEL_TYPES and not val(dep.kv_cache_dtype)
    if sparse:
        notes.append("DeepSeek sparse attention: fp8 latent and indexer keys (788 B per layer)")
    full_cell = sum(
        _cell_bytes(layer, types, tp, sparse)
        for layer in stage_layers
        if not (hybrid_swa and layer.kind.bounded)
    )
    swa_cell = sum(_cell_bytes(layer, types, tp) for layer in stage_layers if layer.kind.bounded)
    cell = full_cell + (ratio * swa_cell if hybrid_swa else 0)
    if hybrid_swa:
        notes.append(f"hybrid SWA pool: SWA-layer tokens = {ratio:g} x full-layer tokens")
    weights = weight_bytes_per_gpu(
        spec, tp=tp, pp=pp, stage=0, quantization=val(dep.quantization), dtype=val(dep.dtype)
    )
    filled: list[tuple[str, object]] = []
    if dep.engine_version is None:
        filled.append(("engine_version", version))
    if not val(dep.max_model_len):
        filled.append(("max_model_len", context))
    if dep.memory_fraction is None:
        filled.append(("memory_fraction", mfs))
    base = EngineEstimate(
        defaults=tuple(filled),
        engine="sglang",
        version=version,
        max_model_len=context,
        memory_fraction=mfs,
        weights_bytes=weights,
        bytes_per_token=round(cell),
        block_size=D.SGLANG_PAGE_SIZE,
        notes=tuple(notes),
    )
    if context > derived and not flag(dep.allow_long_max_model_len):
        return replace(
            base,
            fits=False,
            error=(
                f"User-specified context_length ({context}) is greater than the derived "
                f"context_length ({derived}). This may lead to incorrect model outputs or CUDA "
                "errors. Note that the derived context_length may differ from "
                "max_position_embeddings in the model's config. To allow overriding this "
                "maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
            ),
        )
    if total is None:
        return replace(base, missing=("GPU type",))
    pre_model_load = total - (_INIT_TP if tp * pp > 1 else _INIT_TP1)
    states = sum(
        types.state.bytes_for(layer.state_elements) // tp
        for layer in stage_layers
        if layer.kind is CacheKind.STATE
    )
    running = val(dep.max_num_seqs)
    mamba_pool = states * (running or 0)  # the Mamba state pool is set apart first
    available = round(pre_model_load * mfs - weights - mamba_pool)
    if available <= 0:
        minimum = weights / pre_model_load
        return replace(
            base,
            gpu_total_bytes=total,
            available_kv_bytes=available,
            fits=False,
            error=(
                f"Loaded weights leave no GPU memory for the KV cache under "
                f"--mem-fraction-static={mfs:g}. Raise --mem-fraction-static above "
                f"{minimum:.3f} (minimum viable = 1 - available/pre = {minimum:.4f})."
            ),
        )
    tokens = int(available // cell) if cell else 0
    tokens = tokens // D.SGLANG_PAGE_SIZE * D.SGLANG_PAGE_SIZE
    user_total = setting(dep.settings, "max-total-tokens")
    if isinstance(user_total, int) and 0 < user_total < tokens:
        tokens = user_total
        notes.append(f"--max-total-tokens {user_total} lowers the pool")
    estimated = max(min(int(tokens / context * 512), 4096), 2048) if context else 2048
    if running is None:
        running = min(estimated, tokens // 2)
        notes.append(f"default max_running_requests {running}")
        filled.append(("max_num_seqs", running))
    elif running > tokens // 2:
        notes.append(
            f"max_running_requests was reduced from the requested {running} to {tokens // 2} "
            "(per dp worker) due to the available KV cache capacity."
        )
        running = tokens // 2
    if context > tokens:
        notes.append(
            f"context length {context:,} exceeds the pool ({tokens:,} tokens): longer inputs are "
            "refused at request time"
        )
    first = KvSize(spec, types).tokens_fitting(available * tp * pp)
    return replace(
        base,
        gpu_total_bytes=total,
        available_kv_bytes=available,
        kv_cache_tokens=tokens,
        max_concurrency=round(tokens / context, 2) if context else None,
        fits=True,
        needed_bytes_one_sequence=round(cell * context),
        first_principles_tokens=first,
        notes=tuple(notes),
        defaults=tuple(filled),
    )
