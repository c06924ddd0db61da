"""SGLang's KV pool: ``mem_fraction_static``, ``max_total_num_tokens``, SWA pools, admission.

Mirrors SGLang 0.5.23 (``research/engines.md`` section 2): ``memory_hook.py``
``handle_gpu_memory_settings`` (the ``mem_fraction_static`` default),
``kv_cache_configurator.py`` ``_profile_available_bytes`` (what is left for the pool),
``pool_configurator.py`` (cell size, ``max_total_num_tokens``, the hybrid SWA pool) and
``resolve_max_num_reqs`` (the ``max_running_requests`` default and cap).

The predicted pool memory carries the 90% band of the corpora's SGLang logs once they come from
enough sources (kvlint/engines/band.py; band_logs.py holds the table): the pool, concurrency
and verdict are read at both ends. Below the floor the table is empty and the estimate says
"no band" with the count.
"""

from __future__ import annotations

from dataclasses import replace

from kvlint.arith.kv import KvSize
from kvlint.arith.parallel import tp_problem
from kvlint.arith.weights import pp_layer_ranges
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.engines.band import BandTable
from kvlint.engines.band import regime_chain
from kvlint.engines.band import shipped
from kvlint.engines.band import with_band
from kvlint.engines.common import head_dims
from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import reserved_note
from kvlint.engines.common import without_storage
from kvlint.engines.sglang import defaults as D
from kvlint.engines.sglang.effective import SglangSettled
from kvlint.engines.sglang.facts import FACTS
from kvlint.engines.vllm.accounting import SPARSE_MLA_INDEXER_BYTES
from kvlint.estimate import REFUSES
from kvlint.estimate import STARTS
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.storage import CacheTypes
from kvlint.units import GiB

# CUDA context, NCCL and cuBLAS before the weights load ("pre_model_load_memory" is the free
# memory then): ~0.5 GiB on one GPU, ~1.9 GiB at TP 8 (DeepSeek-V4-Pro on H200: 12.25 + 125.65
# GB free + used after loading, of 139.80 GiB).
_INIT_TP1 = 0.5 * GiB
_INIT_TP = 1.9 * GiB


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
    return types.k.bytes_for(heads * head_k, heads) + types.v.bytes_for(heads * head_v, heads)


def regime_keys(s: SglangSettled) -> tuple[str, ...]:
    """The band's regimes of a deployment, most specific first: one line (SGLang's memory is
    modelled for one release line), then model class and TP (kvlint.engines.band)."""
    gpus = s.tensor_parallel_size.value * s.pipeline_parallel_size.value
    return regime_chain("current", s.spec, gpus)


# Refusals the memory band cannot change: the length and the parallel layout.
_BEFORE_MEMORY = frozenset({Refusal.BEYOND_POSITIONS, Refusal.LAYOUT})


def estimate(s: SglangSettled, band: BandTable | None = None) -> EngineEstimate:
    """What ``sglang.launch_server`` allocates for the settled deployment, with the 90% band
    on the pool memory where the corpora's logs give one, and the three-valued verdict.
    ``band`` is the band's table (the shipped one by default)."""
    point = _point(s)
    if point.fits is None:
        return point
    table = band if band is not None else shipped(FACTS.name)
    found = table.band_of(regime_keys(s))
    total, predicted = point.gpu_total_bytes, point.available_kv_bytes
    if point.refusal in _BEFORE_MEMORY or found is None or total is None or predicted is None:
        return replace(point, verdict=STARTS if point.fits else REFUSES)
    assert s.memory_fraction is not None

    def at(memory: int) -> EngineEstimate:
        return _point(s, memory=memory)

    return with_band(point, found, total * s.memory_fraction.value, at, predicted=predicted)


def _point(s: SglangSettled, *, memory: int | None = None) -> EngineEstimate:
    """The point prediction; with ``memory``, one end of the band: the pool and outcome with
    that much memory per GPU left for the KV cache (only its pool, concurrency and fits are
    read)."""
    spec, gpu = s.spec, s.gpu
    version = str(s.version.value)
    tp, pp = s.tensor_parallel_size.value, s.pipeline_parallel_size.value
    notes = list(s.notes)
    context = s.max_model_len.value
    assert s.memory_fraction is not None
    mfs = s.memory_fraction.value
    total = gpu.total_bytes if gpu is not None else None
    start, end = pp_layer_ranges(spec.num_layers, pp)[0]
    stage_layers = spec.layers[start:end]
    hybrid_swa = s.hybrid_swa and any(layer.kind.bounded for layer in stage_layers)
    if hybrid_swa and spec.model_type in D.SGLANG_NO_HYBRID_SWA:
        hybrid_swa = False
        notes.append(f"SGLang turns the hybrid SWA pool off for {spec.model_type}")
    ratio = s.swa_full_tokens_ratio
    if s.sparse_mla:
        notes.append("DeepSeek sparse attention: fp8 latent and indexer keys (788 B per layer)")
    filled: list[tuple[str, object]] = []
    if s.version.default:
        filled.append(("engine_version", version))
    if s.max_model_len.default:
        filled.append(("max_model_len", context))
    if s.memory_fraction.default:
        filled.append(("memory_fraction", mfs))
    quantization = s.quantization.value if s.quantization is not None else None
    dtype = s.dtype.value if s.dtype is not None else None
    # DP attention runs each rank's attention at tp / dp ranks: its weights are split that much.
    attention_tp = tp // s.dp_attention if s.dp_attention > 1 else None
    weights = weight_bytes_per_gpu(
        spec,
        tp=tp,
        pp=pp,
        stage=0,
        quantization=quantization,
        dtype=dtype,
        attention_tp=attention_tp,
    )
    base = EngineEstimate(
        defaults=tuple(filled),
        engine="sglang",
        version=version,
        max_model_len=context,
        memory_fraction=mfs,
        weights_bytes=weights,
        block_size=D.SGLANG_PAGE_SIZE,
        notes=tuple(notes),
    )
    types = s.cache_types
    if types is None:
        return without_storage(s, base)
    full_cell = sum(
        _cell_bytes(layer, types, tp, s.sparse_mla)
        for layer in stage_layers
        if not (hybrid_swa and layer.kind.bounded)
    )
    swa_cell = sum(_cell_bytes(layer, types, tp) for layer in stage_layers if layer.kind.bounded)
    cell = full_cell + (ratio * swa_cell if hybrid_swa else 0)
    if hybrid_swa:
        notes.append(f"hybrid SWA pool: SWA-layer tokens = {ratio:g} x full-layer tokens")
    base = replace(base, bytes_per_token=round(cell), notes=tuple(notes))
    if context > s.derived_max_model_len and not (s.allow_long and s.allow_long.value):
        return replace(
            base,
            fits=False,
            refusal=Refusal.BEYOND_POSITIONS,
            error=(
                f"User-specified context_length ({context}) is greater than the derived "
                f"context_length ({s.derived_max_model_len}). This may lead to incorrect model "
                "outputs or CUDA errors. Note that the derived context_length may differ from "
                "max_position_embeddings in the model's config. To allow overriding this "
                "maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
            ),
        )
    problem = tp_problem(spec, FACTS.parallel, tp)
    if problem is not None:
        return replace(base, fits=False, error=problem, refusal=Refusal.LAYOUT)
    if total is None:
        return replace(base, missing=("GPU type",))
    # get_available_gpu_memory reads the device's free memory: other residents come off it.
    pre_model_load = total - (_INIT_TP if tp * pp > 1 else _INIT_TP1) - reserved_bytes(s)
    held = reserved_note(s, "taken off the free memory before the model loads")
    if held is not None:
        notes.append(held)
        base = replace(base, notes=tuple(notes))
    states = sum(
        types.state.bytes_for(layer.state_elements) // tp
        for layer in stage_layers
        if layer.kind is CacheKind.STATE
    )
    running = s.max_num_seqs.value if s.max_num_seqs is not None else None
    mamba_pool = states * (running or 0)  # the Mamba state pool is set apart first
    available = round(pre_model_load * mfs - weights - mamba_pool) if memory is None else memory
    if available <= 0:
        minimum = weights / pre_model_load
        return replace(
            base,
            gpu_total_bytes=total,
            available_kv_bytes=available,
            fits=False,
            refusal=Refusal.WEIGHTS if weights > pre_model_load * mfs else Refusal.NO_CACHE_MEMORY,
            error=(
                f"Loaded weights leave no GPU memory for the KV cache under "
                f"--mem-fraction-static={mfs:g}. Raise --mem-fraction-static above "
                f"{minimum:.3f} (minimum viable = 1 - available/pre = {minimum:.4f})."
            ),
        )
    tokens = int(available // cell) if cell else 0
    tokens = tokens // D.SGLANG_PAGE_SIZE * D.SGLANG_PAGE_SIZE
    user_total = s.max_total_tokens
    if user_total is not None and 0 < user_total < tokens:
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
    windowed = None
    if swa_cell:
        # The pool with the SWA layers in their own pool of `swa_full_tokens_ratio` x the full
        # layers' tokens: what disabling the hybrid SWA memory gives away (KV305).
        full_only = sum(
            _cell_bytes(layer, types, tp, s.sparse_mla)
            for layer in stage_layers
            if not layer.kind.bounded
        )
        windowed_cell = full_only + ratio * swa_cell
        windowed = int(available // windowed_cell) // D.SGLANG_PAGE_SIZE * D.SGLANG_PAGE_SIZE
    return replace(
        base,
        gpu_total_bytes=total,
        available_kv_bytes=available,
        kv_cache_tokens=tokens,
        max_concurrency=round(tokens / context, 2) if context else None,
        fits=True,
        needed_bytes_one_sequence=round(cell * context),
        first_principles_tokens=first,
        windowed_tokens=windowed,
        notes=tuple(notes),
        defaults=tuple(filled),
    )
