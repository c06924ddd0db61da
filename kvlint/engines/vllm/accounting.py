"""vLLM's own KV accounting, version-aware: the 0.11 line (through 0.20) and the current one.

Mirrors ``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory`` (the budget),
``vllm/v1/core/kv_cache_utils.py`` (blocks, the capacity log lines, the start-up check) and
``vllm/engine/arg_utils.py`` (defaults); ``research/engines.md`` section 1 quotes each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import replace

from kvlint.arith.dtypes import resolve_cache_dtype
from kvlint.arith.kv import CacheTypes
from kvlint.arith.kv import KvSize
from kvlint.arith.weights import pp_layer_ranges
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.deployment import Deployment
from kvlint.engines.common import derived_max_model_len
from kvlint.engines.common import flag
from kvlint.engines.common import positive
from kvlint.engines.common import setting
from kvlint.engines.common import val
from kvlint.engines.versions import version_label
from kvlint.engines.vllm import defaults as D
from kvlint.engines.vllm.errors import fmt_gib
from kvlint.engines.vllm.errors import free_memory_message
from kvlint.engines.vllm.errors import no_memory_message
from kvlint.engines.vllm.errors import oom_message
from kvlint.engines.vllm.errors import too_long_message
from kvlint.engines.vllm.errors import v0_too_long_message
from kvlint.engines.vllm.memory import Overheads
from kvlint.engines.vllm.memory import overheads
from kvlint.engines.vllm.paging import StageLayout
from kvlint.engines.vllm.paging import paged_layer
from kvlint.engines.vllm.paging import stage_layout
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.units import INT64_MAX
from kvlint.units import GiB

# DeepSeek sparse attention (V3.2): an fp8 latent of 656 bytes per token and an indexer key
# cache of 128 fp8 values plus a 4-byte scale per token, in every layer.
SPARSE_MLA_MODEL_TYPES = frozenset({"deepseek_v32"})
SPARSE_MLA_INDEXER_BYTES = 128 + 4

# The CUDA context (and NCCL with more than one GPU) before vLLM loads anything: the 0.19 logs'
# "worker init memory snapshot" non_torch_memory, 0.51 GiB on one GPU, 1.48-2.05 with TP or PP.
INIT_NON_TORCH = round(0.51 * GiB)
INIT_NON_TORCH_TP = round(1.5 * GiB)

# vllm-project/vllm#43308: Gemma-4-31B on an A100 80GB with the same ~50 GB of KV memory held
# ~55k tokens on 0.20.0 (901,120 B per token: all 60 layers at full length) and ~525k on 0.21.0.
GEMMA4_HYBRID_SINCE = (0, 21)


@dataclass(frozen=True)
class VllmSettings:
    """Every setting the accounting uses, after defaults (``defaulted`` names the defaults)."""

    version: tuple[int, ...]
    version_defaulted: bool
    tp: int
    pp: int
    max_model_len: int
    derived_max_model_len: int
    block_size: int
    cache_dtype: str
    gpu_memory_utilization: float
    max_num_seqs: int
    max_num_batched_tokens: int
    kv_cache_memory_bytes: int | None
    num_gpu_blocks_override: int | None
    enforce_eager: bool
    hybrid_enabled: bool
    allow_long: bool
    defaulted: tuple[str, ...]
    auto_max_model_len: bool = False  # -1 / auto: the current line shrinks it to fit

    @property
    def old(self) -> bool:
        """The 0.11 accounting (no CUDA-graph term, two capacity lines)."""
        return self.version < D.VLLM_CUDAGRAPH_PROFILING_SINCE

    @property
    def v0(self) -> bool:
        """The V0 engine (before 0.8, where V1 became the default)."""
        return self.version < (0, 8)

    @property
    def in_flight(self) -> int:
        """Tokens scheduled ahead of a sliding window (``max_in_flight_tokens``)."""
        if self.old:
            return self.max_num_batched_tokens
        batches = self.pp if self.pp > 1 else 2  # async scheduling on V1: 2 batches in flight
        return batches * self.max_num_batched_tokens


def resolve_settings(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> VllmSettings:
    """The deployment's vLLM settings with vLLM's defaults filled in."""
    version, version_defaulted = D.vllm_version(val(dep.engine_version))
    defaults = D.vllm_defaults(version, gpu)
    defaulted: list[str] = []
    tp = positive(val(dep.tensor_parallel_size))
    pp = positive(val(dep.pipeline_parallel_size))
    derived = derived_max_model_len(spec, version)
    mml = val(dep.max_model_len)
    raw = dep.max_model_len.raw if dep.max_model_len is not None else None
    auto = (mml is not None and mml < 0) or (raw or "").strip().lower() == "auto"
    if mml is None or mml <= 0:
        mml = derived
        defaulted.append(f"max_model_len {mml:,} (the model's)")
    has_mla = any(layer.kind is CacheKind.MLA for layer in spec.layers)
    block_size = val(dep.block_size) or D.vllm_block_size(has_mla, version, gpu)
    cache_dtype = (val(dep.kv_cache_dtype) or "auto").lower()
    if cache_dtype == "auto" and spec.model_type in SPARSE_MLA_MODEL_TYPES:
        # "Some models (namely DeepSeekV3.2) default to fp8" (vllm/config/cache.py docstring).
        cache_dtype = "fp8_ds_mla"
        defaulted.append("kv_cache_dtype fp8_ds_mla (DeepSeek sparse attention's default)")
    gmu = val(dep.memory_fraction)
    if gmu is None:
        gmu = defaults.gpu_memory_utilization
        defaulted.append(f"gpu_memory_utilization {gmu:g}")
    mns = val(dep.max_num_seqs)
    if mns is None:
        mns = defaults.max_num_seqs
        defaulted.append(f"max_num_seqs {mns}")
    mnbt = val(dep.max_num_batched_tokens)
    if mnbt is None:
        mnbt = defaults.max_num_batched_tokens
        if version < (0, 8) and mml <= 32768:
            # V0: chunked prefill is off up to 32K, so a batch holds a whole prompt.
            mnbt = max(mml, mnbt)
        defaulted.append(f"max_num_batched_tokens {mnbt}")
    hybrid = not flag(dep.disable_hybrid_kv_cache_manager)
    if hybrid and any(layer.kind is CacheKind.CHUNKED for layer in spec.layers):
        # Chunked-local attention and the hybrid manager, by release (vllm/config/vllm.py;
        # defaults.vllm_chunked_local_hybrid says which releases turn it off by default).
        allow = dep.env.get(D.CHUNKED_LOCAL_ENV)
        if not D.vllm_chunked_local_hybrid(version, allow.value if allow else None):
            hybrid = False
            defaulted.append(
                f"hybrid KV cache off for chunked attention ({D.CHUNKED_LOCAL_ENV} unset or 0)"
            )
    if flag(dep.disable_sliding_window):
        hybrid = False
    if hybrid and spec.model_type.startswith("gemma4") and version < GEMMA4_HYBRID_SINCE:
        hybrid = False
        defaulted.append(
            "hybrid KV cache off: before 0.21 vLLM pages Gemma 4's sliding layers as full "
            "attention (vllm-project/vllm#43308)"
        )
    allow_long = flag(dep.allow_long_max_model_len)
    env_long = dep.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
    if env_long is not None and env_long.value.lower() in ("1", "true"):
        allow_long = True
    return VllmSettings(
        version=version,
        version_defaulted=version_defaulted,
        tp=tp,
        pp=pp,
        max_model_len=mml,
        derived_max_model_len=derived,
        block_size=block_size,
        cache_dtype=cache_dtype,
        gpu_memory_utilization=gmu,
        max_num_seqs=mns,
        max_num_batched_tokens=mnbt,
        kv_cache_memory_bytes=val(dep.kv_cache_memory_bytes),
        num_gpu_blocks_override=val(dep.num_gpu_blocks_override),
        enforce_eager=flag(dep.enforce_eager) or _eager_setting(dep),
        hybrid_enabled=hybrid,
        allow_long=allow_long,
        defaulted=tuple(defaulted),
        auto_max_model_len=auto,
    )


def _defaults(dep: Deployment, s: VllmSettings) -> tuple[tuple[str, object], ...]:
    """The settings ``dep`` leaves unset, as vLLM fills them."""
    filled: list[tuple[str, object]] = []
    if dep.engine_version is None:
        filled.append(("engine_version", version_label(s.version)))
    if dep.max_model_len is None or dep.max_model_len.value <= 0 or s.auto_max_model_len:
        filled.append(("max_model_len", s.max_model_len))
    if dep.memory_fraction is None and s.kv_cache_memory_bytes is None:
        filled.append(("memory_fraction", s.gpu_memory_utilization))
    if dep.max_num_seqs is None:
        filled.append(("max_num_seqs", s.max_num_seqs))
    if dep.max_num_batched_tokens is None:
        filled.append(("max_num_batched_tokens", s.max_num_batched_tokens))
    if dep.kv_cache_dtype is None:
        filled.append(("kv_cache_dtype", s.cache_dtype))
    if dep.block_size is None:
        filled.append(("block_size", s.block_size))
    return tuple(filled)


def _eager_setting(dep: Deployment) -> bool:
    return bool(setting(dep.settings, "enforce-eager"))


def cache_types(spec: ModelSpec, cache_dtype: str, model_dtype: str | None = None) -> CacheTypes:
    """K/V storage: ``auto`` is the model dtype (never the weight quantisation)."""
    dtype = model_dtype if model_dtype and model_dtype.lower() != "auto" else spec.dtype
    name = cache_dtype
    if name.startswith("fp8") or name in ("int8_per_token_head", "fp8_per_token_head"):
        name = "fp8"  # fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla (its page is set apart)
    elif name.startswith("nvfp4"):
        name = "nvfp4"
    k = resolve_cache_dtype(name, dtype)
    state = resolve_cache_dtype("auto", dtype)
    return CacheTypes(k=k, v=k, state=state)


def stage_layouts(spec: ModelSpec, s: VllmSettings, types: CacheTypes) -> list[StageLayout]:
    """The paged layout of every pipeline stage (each rank of a stage is alike)."""
    layouts: list[StageLayout] = []
    indexer = SPARSE_MLA_INDEXER_BYTES if spec.model_type in SPARSE_MLA_MODEL_TYPES else 0
    for start, end in pp_layer_ranges(spec.num_layers, s.pp):
        paged = [
            paged_layer(
                layer,
                types,
                tp=s.tp,
                block_size=s.block_size,
                cache_dtype=s.cache_dtype,
                hybrid_enabled=s.hybrid_enabled,
                indexer_bytes=indexer,
            )
            for layer in spec.layers[start:end]
        ]
        layouts.append(stage_layout([p for p in paged if p is not None]))
    return layouts


def _check_memory(s: VllmSettings, layout: StageLayout, available: int) -> int:
    """What the start-up check compares with: the current line reserves one block as the
    null block first (``check_memory = avail - bytes_per_block``); 0.11 compares it all."""
    return available if s.old else available - layout.bytes_per_block


def estimate_max_model_len(layout: StageLayout, s: VllmSettings, available: int) -> int:
    """The binary search vLLM runs for its error message: the longest length that fits."""
    lo, hi = 0, s.max_model_len
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if layout.needed_bytes(mid, s.in_flight, s.old) <= available:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _stage_budgets(
    dep: Deployment, spec: ModelSpec, s: VllmSettings, total: int | None, offload: int
) -> tuple[list[int], list[int], list[Overheads]]:
    """Per pipeline stage: the KV memory left, the weights and the overheads on each GPU.

    The KV memory is empty when neither the GPU nor ``kv_cache_memory_bytes`` is known;
    ``offload`` is the weight bytes per GPU that ``--cpu-offload-gb`` keeps in CPU memory.
    """
    quant = val(dep.quantization)
    available: list[int] = []
    weights: list[int] = []
    stage_overheads = []
    # MoE layers shard their experts over every data-parallel rank too, with or without
    # --enable-expert-parallel (FusedMoEParallelConfig.make: flatten_tp_across_dp, in
    # vllm/model_executor/layers/fused_moe/config.py); attention stays whole on each DP rank.
    dp = positive(val(dep.data_parallel_size))
    for stage, (start, end) in enumerate(pp_layer_ranges(spec.num_layers, s.pp)):
        w = weight_bytes_per_gpu(
            spec,
            tp=s.tp,
            pp=s.pp,
            stage=stage,
            quantization=quant,
            dtype=val(dep.dtype),
            expert_shards=dp,
        )
        o = overheads(
            spec,
            tp=s.tp,
            pp=s.pp,
            stage=stage,
            layers_on_gpu=end - start,
            max_num_batched_tokens=s.max_num_batched_tokens,
            max_num_seqs=s.max_num_seqs,
            cudagraphs=not s.old and not s.enforce_eager,
            version=s.version,
        )
        w = max(0, w - offload)
        weights.append(w)
        stage_overheads.append(o)
        if s.kv_cache_memory_bytes is not None:
            available.append(s.kv_cache_memory_bytes)
        elif total is not None:
            requested = math.ceil(total * s.gpu_memory_utilization)
            available.append(requested - w - o.total)
    return available, weights, stage_overheads


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """What vLLM will allocate for ``dep`` serving ``spec`` on ``gpu``."""
    s = resolve_settings(dep, spec, gpu)
    types = cache_types(spec, s.cache_dtype, val(dep.dtype))
    layouts = stage_layouts(spec, s, types)
    line = "0.11" if s.old else "current"
    version = version_label(s.version)
    notes = [f"vLLM {version} accounting ({line} line)"]
    if s.version_defaulted:
        notes.append(f"no engine version given: sized as vLLM {version}, the newest known")
    notes.extend(f"default {d}" for d in s.defaulted)
    missing: list[str] = []
    padding = max((layout.padding_layers for layout in layouts), default=0)
    if padding:
        notes.append(f"the hybrid allocator adds {padding} padding layers per stage")
    base = EngineEstimate(
        engine="vllm",
        version=version,
        max_model_len=s.max_model_len,
        block_size=layouts[-1].block_size if layouts else s.block_size,
        defaults=_defaults(dep, s),
    )
    if s.max_model_len > s.derived_max_model_len and not s.allow_long:
        return replace(
            base,
            fits=False,
            error=too_long_message(s, spec),
            notes=tuple(notes),
        )

    total = gpu.total_bytes if gpu is not None else None
    if total is not None and s.kv_cache_memory_bytes is None and s.version >= (0, 9):
        # init_device: the free memory after the CUDA context and NCCL must cover the request.
        init = INIT_NON_TORCH_TP if s.tp * s.pp > 1 else INIT_NON_TORCH
        free = total - init
        requested = math.ceil(total * s.gpu_memory_utilization)
        if free < requested:
            return replace(
                base,
                gpu_total_bytes=total,
                memory_fraction=s.gpu_memory_utilization,
                fits=False,
                error=free_memory_message(s, free, total, requested),
                notes=tuple(notes),
            )

    # --cpu-offload-gb: GiB of weights per GPU kept in CPU memory (vllm/config/cache.py).
    offload_setting = setting(dep.settings, "cpu-offload-gb")
    offload = 0
    if (
        isinstance(offload_setting, (int, float))
        and not isinstance(offload_setting, bool)
        # an untyped setting: NaN, infinity, negatives and 400-digit ints are not an offload
        and 0 < offload_setting <= INT64_MAX // GiB
    ):
        offload = round(float(offload_setting) * GiB)
        notes.append(f"cpu_offload_gb {offload_setting:g}: weights on each GPU reduced")
    # Available KV memory per stage (each rank of a stage alike).
    available, weights, stage_overheads = _stage_budgets(dep, spec, s, total, offload)
    if s.kv_cache_memory_bytes is not None:
        notes.append("kv_cache_memory_bytes set: gpu_memory_utilization is ignored")
    if not available:
        missing.append("GPU type")
        return replace(
            base,
            weights_bytes=weights[0],
            missing=tuple(missing),
            notes=tuple(notes),
        )

    # The bottleneck stage: fewest blocks (get_kv_cache_configs takes the minimum).
    blocks = [
        max(0, avail // layout.bytes_per_block) if layout.bytes_per_block else 0
        for avail, layout in zip(available, layouts, strict=True)
    ]
    worst = min(range(len(blocks)), key=lambda i: blocks[i])
    layout = layouts[worst]
    avail = available[worst]
    num_blocks = blocks[worst]
    if s.num_gpu_blocks_override is not None:
        num_blocks = s.num_gpu_blocks_override
        notes.append(f"num_gpu_blocks_override={num_blocks}")
    fits = True
    error: str | None = None
    estimated_len: int | None = None
    groups = max(1, len(layout.groups))
    check = _check_memory(s, layout, avail)
    if (
        s.auto_max_model_len
        and not s.old
        and avail > 0
        and layout.needed_bytes(s.max_model_len, s.in_flight, s.old) > check
    ):
        # _auto_fit_max_model_len: "-1" / "auto" shrinks the length to what fits.
        fitted = estimate_max_model_len(layout, s, check)
        if fitted > 0:
            notes.append(
                f"Auto-fit max_model_len: reduced from {s.max_model_len} to {fitted} to fit in "
                f"available KV cache memory ({fmt_gib(avail)} GiB)"
            )
            s = replace(s, max_model_len=fitted)
            base = replace(base, max_model_len=fitted, defaults=_defaults(dep, s))
        else:
            fits = False
            error = (
                "Cannot auto-fit max_model_len: not enough GPU memory available to serve even "
                "a single token. Try increasing `gpu_memory_utilization`."
            )
    per_request = layout.blocks_per_request(s.max_model_len, s.in_flight, s.old)
    concurrency = num_blocks / per_request if per_request else 0.0
    if s.v0:
        tokens = num_blocks * layout.block_size
    elif s.old:
        # 0.11: num_blocks // len(kv_cache_groups) * min_block_size (understates hybrids).
        tokens = num_blocks // groups * layout.block_size
    else:
        # current: int(max_concurrency * max_model_len) (get_kv_cache_capacity).
        tokens = int(concurrency * s.max_model_len)
    needed = layout.needed_bytes(s.max_model_len, s.in_flight, s.old)
    if error is None and avail <= 0:
        fits = False
        error = no_memory_message(s)
    elif error is None and s.v0 and s.max_model_len > tokens:
        fits = False
        error = v0_too_long_message(s, tokens)
    elif error is None and not s.v0 and needed > check:
        fits = False
        estimated_len = estimate_max_model_len(layout, s, check)
        error = oom_message(s, needed, avail, estimated_len)
    kv = KvSize(spec, types)
    gpus = s.tp * s.pp
    first_principles = kv.tokens_fitting(max(0, min(available)) * gpus) if available else None
    bytes_per_token = layout.bytes_per_block * groups // max(1, layout.block_size)
    o = stage_overheads[worst]
    return replace(
        base,
        gpu_total_bytes=total,
        memory_fraction=s.gpu_memory_utilization if s.kv_cache_memory_bytes is None else None,
        weights_bytes=weights[worst],
        activation_bytes=o.activation,
        non_torch_bytes=o.non_torch,
        cudagraph_bytes=o.cudagraph,
        available_kv_bytes=avail,
        bytes_per_token=bytes_per_token,
        num_blocks=num_blocks,
        blocks_per_request=per_request,
        kv_cache_tokens=max(0, tokens),
        max_concurrency=round(concurrency, 2),
        fits=fits,
        needed_bytes_one_sequence=needed,
        estimated_max_model_len=estimated_len,
        first_principles_tokens=first_principles,
        error=error,
        missing=tuple(missing),
        notes=tuple(notes),
    )
