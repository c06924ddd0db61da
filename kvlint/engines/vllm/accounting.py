"""vLLM's own KV accounting, version-aware: the 0.11 line (through 0.20) and the current one.

Mirrors ``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory`` (the budget),
``vllm/v1/core/kv_cache_utils.py`` (blocks, the capacity log lines, the start-up check) and
``vllm/engine/arg_utils.py`` (defaults); ``research/engines.md`` section 1 quotes each.
"""

from __future__ import annotations

import math

from kvlint.arith.kv import KvSize
from kvlint.arith.memo import by_model
from kvlint.arith.parallel import tp_problem
from kvlint.arith.weights import draft_weight_bytes_per_gpu
from kvlint.arith.weights import pp_layer_ranges
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.deployment import Sourced
from kvlint.engines.band import banded
from kvlint.engines.common import computed_dtype
from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import reserved_note
from kvlint.engines.common import without_storage
from kvlint.engines.vllm import defaults as D
from kvlint.engines.vllm.band import BandTable
from kvlint.engines.vllm.band import shipped
from kvlint.engines.vllm.effective import SPARSE_MLA_MODEL_TYPES
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.engines.vllm.errors import fmt_gib
from kvlint.engines.vllm.errors import free_memory_message
from kvlint.engines.vllm.errors import no_memory_message
from kvlint.engines.vllm.errors import oom_message
from kvlint.engines.vllm.errors import too_long_message
from kvlint.engines.vllm.errors import v0_too_long_message
from kvlint.engines.vllm.facts import FACTS
from kvlint.engines.vllm.memory import CONSTANTS
from kvlint.engines.vllm.memory import MemoryConstants
from kvlint.engines.vllm.memory import Overheads
from kvlint.engines.vllm.memory import encoder_profile
from kvlint.engines.vllm.memory import lora_bytes
from kvlint.engines.vllm.memory import overheads
from kvlint.engines.vllm.paging import PagedLayer
from kvlint.engines.vllm.paging import StageLayout
from kvlint.engines.vllm.paging import draft_layers
from kvlint.engines.vllm.paging import paged_layer
from kvlint.engines.vllm.paging import stage_layout
from kvlint.engines.vllm.paging import state_paging
from kvlint.estimate import BORDERLINE
from kvlint.estimate import REFUSES
from kvlint.estimate import STARTS
from kvlint.estimate import Admission
from kvlint.estimate import EngineEstimate
from kvlint.estimate import PoolCause
from kvlint.estimate import Refusal
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.record_replace import replace
from kvlint.storage import CacheTypes
from kvlint.units import GiB
from kvlint.versions import version_label

# DeepSeek sparse attention (V3.2): beside its fp8 latent, an indexer key cache of 128 fp8
# values plus a 4-byte scale per token, in every layer.
SPARSE_MLA_INDEXER_BYTES = 128 + 4

# The CUDA context (and NCCL with more than one GPU) before vLLM loads anything: the 0.19 logs'
# "worker init memory snapshot" non_torch_memory, 0.51 GiB on one GPU (42 H100 cases), 1.43-2.05
# with TP or PP (17 cases). The start-up check's band is that range (one GPU: 0.45-0.60 GiB,
# the single figure give or take a context's growth), the point figure inside it.
INIT_NON_TORCH = round(0.51 * GiB)
INIT_NON_TORCH_TP = round(1.5 * GiB)
INIT_NON_TORCH_BAND = (
    (round(0.45 * GiB), round(0.60 * GiB)),
    (round(1.43 * GiB), round(2.05 * GiB)),
)
# Tensor parallelism without NVLink-class links (VllmSettled.peer_links false: cards without
# NVLink, NCCL_P2P_DISABLE, ranks on several nodes): the TP growth above is NCCL's device
# buffers over many NVLink channels and NVLS, which such a group does not allocate (the profiled
# non-torch memory is charged as one GPU for the same reason, memory.non_torch_bytes). The
# context is one GPU's; the band's top adds the 0.2 GiB NCCL left on dennislee22's A100 pairs
# without P2P. club-3090's 4 x RTX 3090 PCIe compose file (TP 4, 0.95 of 23.69 GiB) started,
# so its init took at most 1.18 GiB: the NVLink figure's 1.5 would have refused it.
INIT_NON_TORCH_UNLINKED_BAND = (round(0.45 * GiB), round(0.80 * GiB))


def init_non_torch(s: VllmSettled) -> tuple[int, tuple[int, int]]:
    """What the CUDA context and NCCL hold before ``init_device``'s free-memory check: the
    point figure and its band, by parallel size and links."""
    if s.tp * s.pp == 1:
        return INIT_NON_TORCH, INIT_NON_TORCH_BAND[0]
    if not s.peer_links:
        return INIT_NON_TORCH, INIT_NON_TORCH_UNLINKED_BAND
    return INIT_NON_TORCH_TP, INIT_NON_TORCH_BAND[1]


# vLLM 0.14.0 and 0.15 compare one request of the whole model with each stage's memory under
# pipeline parallelism (get_kv_cache_configs "check memory using the unified spec"; the
# regression of vllm-project/vllm#29431, reported as #32105 on a 0.14 nightly with GLM-4.7 at
# PP 8: "71.16 GiB KV cache is needed ... available KV cache memory (28.57 GiB)"), fixed by
# vllm-project/vllm#33698 (February 2026, in 0.16).
PP_WHOLE_MODEL_CHECK = ((0, 14), (0, 16))

# Tokens a decoding request schedules per step (one; speculative decoding aside): what a
# request holds ahead of its window once its prompt is in.
DECODE_TOKENS = 1


def stage_layouts(spec: ModelSpec, s: VllmSettled, types: CacheTypes) -> list[StageLayout]:
    """The paged layout of every pipeline stage (each rank of a stage is alike)."""
    assert s.block_size is not None
    return list(
        _stage_layouts(
            spec,
            types,
            tp=s.tp,
            pp=s.pp,
            block_size=s.block_size.value,
            cache_dtype=s.cache_dtype.value,
            hybrid=s.hybrid_kv_cache,
            conv_dtype=s.mamba_cache_dtype,
            ssm_dtype=s.mamba_ssm_cache_dtype,
            speculative_tokens=s.speculative_tokens,
            cache_mode=s.mamba_cache_mode,
            speculative_method=s.speculative_method,
            draft_model_layers=s.draft.layers if s.draft is not None else (),
        )
    )


# Remembered per model and settings (kvlint.arith.memo): every release line of a file naming
# none and the deployments of one model in a repository page the same layers the same way.
# It reads only its arguments: a setting the paging comes to depend on is a parameter here.
@by_model
def _stage_layouts(
    spec: ModelSpec,
    types: CacheTypes,
    *,
    tp: int,
    pp: int,
    block_size: int,
    cache_dtype: str,
    hybrid: bool,
    conv_dtype: str,
    ssm_dtype: str,
    speculative_tokens: int,
    cache_mode: str,
    speculative_method: str | None,
    draft_model_layers: tuple[LayerSpec, ...] = (),
) -> tuple[StageLayout, ...]:
    layouts: list[StageLayout] = []
    indexer = SPARSE_MLA_INDEXER_BYTES if spec.model_type in SPARSE_MLA_MODEL_TYPES else 0
    state = state_paging(
        types,
        conv_dtype=conv_dtype,
        ssm_dtype=ssm_dtype,
        speculative_tokens=speculative_tokens,
        cache_mode=cache_mode,
        chunk=spec.mamba_chunk_size or 0,
    )

    def paged(layer: LayerSpec) -> PagedLayer | None:
        return paged_layer(
            layer,
            types,
            tp=tp,
            block_size=block_size,
            cache_dtype=cache_dtype,
            hybrid_enabled=hybrid,
            indexer_bytes=indexer,
            state=state,
        )

    # A model repeats a few layer shapes: each is paged once.
    pages = [paged(layer) for layer, _ in spec.layer_shapes]
    # A drafter's layers run on the last stage, in the target's KV cache groups: an MTP
    # drafter's are the checkpoint's own, a draft model's (EAGLE, DFlash, draft_model) its
    # config's. Each is its own spec type where its heads differ from the target's (paging.py).
    drafts = [paged(layer) for layer in draft_layers(spec, speculative_method, speculative_tokens)]
    drafts += [paged(layer) for layer in draft_model_layers]
    shapes = spec.shape_indexes
    ranges = pp_layer_ranges(spec.num_layers, pp)
    for stage, (start, end) in enumerate(ranges):
        stage_pages = [pages[i] for i in shapes[start:end]]
        if stage == len(ranges) - 1:
            stage_pages.extend(drafts)
        layouts.append(stage_layout([p for p in stage_pages if p is not None]))
    return tuple(layouts)


def recurrent_note(spec: ModelSpec, s: VllmSettled) -> str | None:
    """How the recurrent state is paged, for a model that has one."""
    if not any(layer.state_elements for layer, _ in spec.layer_shapes):
        return None
    blocks = {"all": "one per block of tokens", "align": str(2 + s.speculative_tokens)}
    held = blocks.get(s.mamba_cache_mode, str(1 + s.speculative_tokens))
    ssm = s.mamba_ssm_cache_dtype if s.mamba_ssm_cache_dtype != "auto" else "the conv dtype"
    drafts = len(draft_layers(spec, s.speculative_method, s.speculative_tokens))
    extra = f"; the MTP drafter adds {drafts} attention layer(s)" if drafts else ""
    return (
        f"recurrent state: Mamba cache mode {s.mamba_cache_mode} (prefix caching "
        f"{'on' if s.prefix_caching else 'off'}), {held} state block(s) a request, "
        f"recurrent state in {ssm}{extra}"
    )


def _check_memory(s: VllmSettled, layout: StageLayout, available: int) -> int:
    """What the start-up check compares with: the current line reserves one block as the
    null block first (``check_memory = avail - bytes_per_block``); 0.11 compares it all."""
    return available if s.old else available - layout.bytes_per_block


def estimate_max_model_len(layout: StageLayout, s: VllmSettled, available: int) -> int:
    """The binary search vLLM runs for its error message: the longest length that fits."""
    lo, hi = 0, s.length
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if layout.needed_bytes(mid, s.in_flight, s.old) <= available:
            lo = mid
        else:
            hi = mid - 1
    return lo


_FP32 = frozenset({"float32", "float", "fp32"})


def _stage_budgets(
    s: VllmSettled, total: int | None, offload: int, constants: MemoryConstants = CONSTANTS
) -> tuple[list[int], list[int], list[Overheads]]:
    """Per pipeline stage: the KV memory left, the weights and the overheads on each GPU.

    The KV memory is empty when neither the GPU nor ``kv_cache_memory_bytes`` is known;
    ``offload`` is the weight bytes per GPU that ``--cpu-offload-gb`` keeps in CPU memory.
    """
    spec = s.spec
    quant = s.quantization.value if s.quantization is not None else None
    kv_bytes = s.kv_cache_memory_bytes.value if s.kv_cache_memory_bytes is not None else None
    available: list[int] = []
    weights: list[int] = []
    stage_overheads = []
    eager = s.enforce_eager is not None and bool(s.enforce_eager.value)
    # MoE layers shard their experts over every data-parallel rank too, with or without
    # --enable-expert-parallel (FusedMoEParallelConfig.make: flatten_tp_across_dp, in
    # vllm/model_executor/layers/fused_moe/config.py); attention stays whole on each DP rank.
    dp = s.data_parallel_size.value
    encoder = spec.vision_encoder
    profile = encoder_profile(
        encoder.at_max_pixels(s.mm_max_pixels) if encoder is not None else None,
        max_num_batched_tokens=s.batched,
        max_num_seqs=s.seqs,
        v0=s.v0,
        limit=s.mm_image_limit,
        skip=s.skip_mm_profiling or s.language_model_only,
    )
    # --language-model-only: the tower is never built, so its weights are not loaded.
    loaded = replace(spec, vision_param_count=None) if s.language_model_only else spec
    for stage, (start, end) in enumerate(pp_layer_ranges(spec.num_layers, s.pp)):
        w = weight_bytes_per_gpu(
            loaded,
            tp=s.tp,
            pp=s.pp,
            stage=stage,
            quantization=quant,
            dtype=s.dtype.value if s.dtype is not None else None,
            expert_shards=dp,
            mtp=bool(draft_layers(spec, s.speculative_method, s.speculative_tokens)),
        )
        o = overheads(
            spec,
            tp=s.tp,
            pp=s.pp,
            stage=stage,
            layers_on_gpu=end - start,
            max_num_batched_tokens=s.batched,
            max_num_seqs=s.seqs,
            cudagraphs=not s.old and not eager,
            version=s.numbers,
            vendor=s.gpu.vendor if s.gpu is not None else None,
            constants=constants,
            v0=s.v0,
            flashinfer=s.flashinfer_sampler,
            linked=s.peer_links,
            encoder=profile,
        )
        if stage == s.pp - 1 and s.draft is not None:
            w += draft_weight_bytes_per_gpu(s.draft, tp=s.tp, dtype=_target_dtype(s))
        w = max(0, w - offload)
        if s.lora_rank is not None:
            w += lora_bytes(
                spec,
                rank=s.lora_rank,
                max_loras=s.max_loras,
                tp=s.tp,
                layers=end - start,
                first_stage=stage == 0,
                last_stage=stage == s.pp - 1,
                dtype_bytes=4 if computed_dtype(s.dtype, spec) in _FP32 else 2,
            )
        weights.append(w)
        stage_overheads.append(o)
        if kv_bytes is not None:
            available.append(kv_bytes)
        elif total is not None:
            requested = math.ceil(total * s.fraction)
            # Before 0.9 the profile run charged what other processes hold too (peak = total
            # - free); from 0.9 on the budget is the requested share less this process's own
            # use, and other residents only meet init_device's free-memory check.
            others = reserved_bytes(s) if s.numbers < (0, 9) else 0
            available.append(requested - w - o.total - others)
    return available, weights, stage_overheads


def _target_dtype(s: VllmSettled) -> str:
    """The dtype vLLM loads a draft model at: the target's (SpeculativeConfig builds the draft
    model config with ``dtype=target_model_config.dtype``)."""
    return str(s.dtype.value) if s.dtype is not None else s.spec.dtype


def draft_note(s: VllmSettled) -> str | None:
    """What the estimate counts of a draft model of its own, or that it cannot."""
    if s.draft_model is None:
        return None
    if s.draft is None:
        return (
            f"draft model {s.draft_model} is not known here: its weights and its cache layers "
            "are not counted (give its config.json or a Hub id kvlint knows)"
        )
    weights = draft_weight_bytes_per_gpu(s.draft, tp=s.tp, dtype=_target_dtype(s))
    return (
        f"draft model {s.draft_model}: {len(s.draft.layers)} cache layer(s) in the target's KV "
        f"cache groups, {weights / GiB:.2f} GiB of weights a GPU"
    )


def windowed_layers(spec: ModelSpec) -> str:
    """'the 50 sliding-window layers': the layers a pool cause is about."""
    local = [layer for layer in spec.layers if layer.kind.bounded]
    chunked = bool(local) and local[0].kind is CacheKind.CHUNKED
    return f"the {len(local)} {'chunked-attention' if chunked else 'sliding-window'} layers"


def pool_cause(s: VllmSettled) -> PoolCause | None:
    """Why vLLM keeps more than the window of a windowed model's layers (KV305's cause), when
    no setting of the file turned the windows off (the rule names those itself)."""
    if s.pool_switches or not any(layer.kind.bounded for layer, _ in s.spec.layer_shapes):
        return None
    layers = windowed_layers(s.spec)
    if s.hybrid_off_by_default == "chunked":
        # vLLM 0.10.1-0.13 turn the hybrid manager off for chunked local attention unless
        # this variable is set; 0.14 and later only when it is 0 (defaults.py).
        text = (
            f"vLLM turns the hybrid KV cache manager off for chunked attention, so {layers} "
            f"get blocks for every token"
        )
        return PoolCause(text, None, f"Set `{D.CHUNKED_LOCAL_ENV}=1` in the environment")
    window = max(layer.window or 0 for layer, _ in s.spec.layer_shapes if layer.kind.bounded)
    # vllm/v1/kv_cache_interface.py SlidingWindowSpec: each request reserves
    # cdiv(window - 1 + max_in_flight_tokens, block) + 1 blocks in every local layer.
    batches = s.in_flight // max(1, s.batched)
    ahead = (
        f"{s.in_flight:,} in-flight tokens ({batches} batches of `max_num_batched_tokens` "
        f"{s.batched})"
        if batches > 1
        else f"the in-flight tokens of `max_num_batched_tokens` {s.batched}"
    )
    text = f"vLLM reserves each request's window ({window}) plus {ahead} in each of {layers}"
    title = f"Lower `max_num_batched_tokens` toward the {window}-token window"
    return PoolCause(text, "max_num_batched_tokens", title)


def admitted(
    layout: StageLayout, s: VllmSettled, num_blocks: int, length: int, in_flight: int | None = None
) -> int:
    """Requests of ``length`` tokens the scheduler holds at once: whole blocks of every group
    for each, block 0 being the null block (vllm/v1/core/block_pool.py). ``in_flight`` is the
    tokens scheduled ahead of a window (the start-up check's worst case by default)."""
    ahead = s.in_flight if in_flight is None else in_flight
    per_request = layout.blocks_per_request(length, ahead, s.old)
    return max(0, (num_blocks - 1) // per_request) if per_request else 0


def cap_length(layout: StageLayout, s: VllmSettled, num_blocks: int) -> int | None:
    """The longest ``max_model_len`` (a multiple of the block) at which ``max_num_seqs``
    requests of that length are admitted; None when not even one block each fits."""
    block = max(1, layout.block_size)
    lo, hi = 0, s.length // block
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if admitted(layout, s, num_blocks, mid * block) >= s.seqs:
            lo = mid
        else:
            hi = mid - 1
    return lo * block if lo else None


def _defaults(s: VllmSettled) -> tuple[tuple[str, object], ...]:
    """The settings the files leave unset, as vLLM fills them (in the JSON report's order)."""
    filled: list[tuple[str, object]] = []
    if s.version.default:
        filled.append(("engine_version", version_label(s.numbers)))
    if s.max_model_len.default:
        filled.append(("max_model_len", s.length))
    if s.memory_fraction is not None and s.memory_fraction.default and not s.kv_cache_memory_bytes:
        filled.append(("memory_fraction", s.fraction))
    for name, value in (
        ("max_num_seqs", s.max_num_seqs),
        ("max_num_batched_tokens", s.max_num_batched_tokens),
        ("kv_cache_dtype", s.cache_dtype),
        ("block_size", s.block_size),
    ):
        if value is not None and value.default:
            filled.append((name, value.value))
    return tuple(filled)


def estimate(
    s: VllmSettled, constants: MemoryConstants = CONSTANTS, band: BandTable | None = None
) -> EngineEstimate:
    """What vLLM will allocate for the settled deployment, with the 90% band and the
    three-valued verdict. ``constants`` and ``band`` are the memory model's and the band's
    (the shipped ones by default; the fidelity benchmark refits both without the source it
    predicts)."""
    # One paging for the point and the band's ends: only the memory differs between them.
    layouts = stage_layouts(s.spec, s, s.cache_types) if s.cache_types is not None else []
    budgets: list[tuple[list[int], list[Overheads]]] = []
    point = _point(s, constants, layouts=layouts, budgets=budgets)
    if point.fits is None:
        return point
    free_check = _free_check(s, point)
    at_risk = Refusal.FREE_MEMORY if free_check else None
    if point.refusal in _BEFORE_MEMORY:
        return replace(point, verdict=free_check or REFUSES, band_refusal=at_risk)
    table = band if band is not None else shipped()
    found = table.band(s) if s.kv_cache_memory_bytes is None else None
    if found is None or point.available_kv_bytes is None or point.gpu_total_bytes is None:
        verdict = free_check or (STARTS if point.fits else REFUSES)
        return replace(point, verdict=verdict, band_refusal=at_risk)
    budget = point.gpu_total_bytes * s.fraction
    ends = []
    for share in (found.low, found.high):
        memory = max(0, round(point.available_kv_bytes + share * budget))
        pinned = replace(s, kv_cache_memory_bytes=Sourced(memory, s.span, default=True))
        end = _point(pinned, constants, layouts=layouts, band_end=True, budgets=budgets)
        ends.append((memory, end))
    low, high = ends
    return banded(
        point, found, low, high, verdict=BORDERLINE if free_check else None, refusal=at_risk
    )


def _free_check(s: VllmSettled, point: EngineEstimate) -> str | None:
    """``borderline`` when the start-up free-memory check (``init_device``) passes at one end
    of the CUDA context's band and fails at the other, else None (the point decides)."""
    total = point.gpu_total_bytes
    if total is None or s.kv_cache_memory_bytes is not None or s.numbers < (0, 9):
        return None
    _, (low, high) = init_non_torch(s)
    requested = math.ceil(total * s.fraction)
    passes = [total - init >= requested for init in (low, high)]
    return BORDERLINE if passes[0] != passes[1] else None


# Refusals the memory band cannot change: the length, the layout, the free memory at start.
_BEFORE_MEMORY = frozenset({Refusal.BEYOND_POSITIONS, Refusal.LAYOUT, Refusal.FREE_MEMORY})


def _point(
    s: VllmSettled,
    constants: MemoryConstants = CONSTANTS,
    *,
    layouts: list[StageLayout] | None = None,
    band_end: bool = False,
    budgets: list[tuple[list[int], list[Overheads]]] | None = None,
) -> EngineEstimate:
    """The point prediction: what vLLM allocates at the model's central figures. ``layouts``
    are ``s``'s stage layouts when already paged; a ``band_end`` estimate is one end of the
    band, whose pool, concurrency and verdict alone are read: the figures only the point
    reports (the length cap's search, the windowed and workload admissions, first principles,
    the pool cause) are left out. ``budgets`` holds the point's weights and overheads per
    stage once worked out: the band's ends differ from the point only in the KV memory, which
    neither depends on, so they take them from there."""
    spec, gpu = s.spec, s.gpu
    line = "0.11" if s.old else "current"
    version = version_label(s.numbers)
    notes = [f"vLLM {version} accounting ({line} line)"]
    if s.version_assumed:
        notes.append(f"no engine version given: sized as vLLM {version}, the newest known")
    notes.extend(f"default {d}" for d in s.defaulted)
    assert s.block_size is not None
    types = s.cache_types
    if layouts is None:
        layouts = stage_layouts(spec, s, types) if types is not None else []
    padding = max((layout.padding_layers for layout in layouts), default=0)
    if padding:
        notes.append(f"the hybrid allocator adds {padding} padding layers per stage")
    held = recurrent_note(spec, s)
    if held is not None:
        notes.append(held)
    drafted = draft_note(s) if not band_end else None
    if drafted is not None:
        notes.append(drafted)
    base = EngineEstimate(
        engine="vllm",
        version=version,
        max_model_len=s.length,
        block_size=layouts[-1].block_size if layouts else s.block_size.value,
        defaults=_defaults(s),
    )
    if s.length > s.derived_max_model_len and not (s.allow_long and s.allow_long.value):
        return replace(
            base,
            fits=False,
            error=too_long_message(s, spec),
            refusal=Refusal.BEYOND_POSITIONS,
            notes=tuple(notes),
        )
    if types is None:
        return without_storage(s, replace(base, notes=tuple(notes)))
    problem = tp_problem(spec, FACTS.parallel, s.tp)
    if problem is not None:
        return replace(base, fits=False, error=problem, refusal=Refusal.LAYOUT, notes=tuple(notes))

    total = gpu.total_bytes if gpu is not None else None
    kv_bytes = s.kv_cache_memory_bytes.value if s.kv_cache_memory_bytes is not None else None
    if total is not None and kv_bytes is None and s.numbers < (0, 9):
        held = reserved_note(s, "the profile run counts it as used")
        if held is not None:
            notes.append(held)
    if total is not None and kv_bytes is None and s.numbers >= (0, 9):
        # init_device: the free memory after the CUDA context and NCCL must cover the request.
        init, _ = init_non_torch(s)
        free = total - init - reserved_bytes(s)
        requested = math.ceil(total * s.fraction)
        held = reserved_note(s, "free memory at start reduced by it")
        if held is not None:
            notes.append(held)
        if free < requested:
            return replace(
                base,
                gpu_total_bytes=total,
                memory_fraction=s.fraction,
                fits=False,
                error=free_memory_message(s, free, total, requested),
                refusal=Refusal.FREE_MEMORY,
                notes=tuple(notes),
            )

    offload = 0
    if s.cpu_offload_bytes is not None:
        offload = s.cpu_offload_bytes.value
        notes.append(f"cpu_offload_gb {offload / GiB:g}: weights on each GPU reduced")
    # Available KV memory per stage (each rank of a stage alike).
    if budgets and kv_bytes is not None:
        weights, stage_overheads = budgets[0]
        available = [kv_bytes] * len(weights)
    else:
        available, weights, stage_overheads = _stage_budgets(s, total, offload, constants)
        if budgets is not None:
            budgets.append((weights, stage_overheads))
    if kv_bytes is not None:
        notes.append("kv_cache_memory_bytes set: gpu_memory_utilization is ignored")
    if not available:
        return replace(
            base,
            weights_bytes=weights[0],
            missing=("GPU type",),
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
    refusal: Refusal | None = None
    estimated_len: int | None = None
    groups = max(1, len(layout.groups))
    check = _check_memory(s, layout, avail)
    if (
        s.auto_max_model_len
        and not s.old
        and avail > 0
        and layout.needed_bytes(s.length, s.in_flight, s.old) > check
    ):
        # _auto_fit_max_model_len: "-1" / "auto" shrinks the length to what fits.
        fitted = estimate_max_model_len(layout, s, check)
        if fitted > 0:
            notes.append(
                f"Auto-fit max_model_len: reduced from {s.length} to {fitted} to fit in "
                f"available KV cache memory ({fmt_gib(avail)} GiB)"
            )
            s = replace(s, max_model_len=Sourced(fitted, s.max_model_len.span, default=True))
            base = replace(base, max_model_len=fitted, defaults=_defaults(s))
        else:
            fits = False
            refusal = Refusal.NO_CACHE_MEMORY
            error = (
                "Cannot auto-fit max_model_len: not enough GPU memory available to serve even "
                "a single token. Try increasing `gpu_memory_utilization`."
            )
    # Decode context parallelism splits each request's tokens over dcp ranks: a rank holds
    # cdiv(max_model_len, dcp) of them (max_memory_usage_bytes), and the capacity line counts
    # every rank's share ("Multiplying the GPU KV cache size by the dcp_world_size 8", the
    # Kimi K2 Thinking recipe on 8 x H200: 5,721,088 tokens beside 715,072 without it).
    dcp = s.decode_context_parallel
    per_request = layout.blocks_per_request(-(-s.length // dcp), s.in_flight, s.old)
    concurrency = num_blocks / per_request if per_request else 0.0
    if s.v0:
        tokens = num_blocks * layout.block_size
    elif not s.capacity_by_concurrency:
        # before 0.20.2: num_blocks // len(kv_cache_groups) * min_block_size (understates
        # hybrids), times the DCP ranks.
        tokens = num_blocks // groups * layout.block_size * dcp
    else:
        # current: int(max_concurrency * max_model_len) (get_kv_cache_capacity).
        tokens = int(concurrency * s.length)
    needed = layout.needed_bytes(-(-s.length // dcp), s.in_flight, s.old)
    if s.pp > 1 and PP_WHOLE_MODEL_CHECK[0] <= s.numbers < PP_WHOLE_MODEL_CHECK[1]:
        # 0.14-0.15 check one request against the whole model's layers (every stage's) and
        # the smallest stage's memory (vllm#29431's regression, fixed by vllm#33698).
        needed = sum(st.needed_bytes(s.length, s.in_flight, s.old) for st in layouts)
        check = _check_memory(s, layout, min(available)) if available else check
    if error is None and avail <= 0:
        fits = False
        # Loading runs out of memory when the weights alone pass the budget; otherwise the
        # profile run's activations and runtime leave nothing for the cache.
        budget = kv_bytes if kv_bytes is not None else math.ceil((total or 0) * s.fraction)
        refusal = Refusal.WEIGHTS if weights[worst] > budget else Refusal.NO_CACHE_MEMORY
        error = no_memory_message(s)
    elif error is None and s.v0 and s.length > tokens:
        fits = False
        refusal = Refusal.ONE_REQUEST
        error = v0_too_long_message(s, tokens)
    elif error is None and not s.v0 and needed > check:
        fits = False
        refusal = Refusal.ONE_REQUEST
        estimated_len = estimate_max_model_len(layout, s, check)
        error = oom_message(s, needed, avail, estimated_len)
    kv = KvSize(spec, types)
    gpus = s.tp * s.pp
    first_principles = (
        kv.tokens_fitting(max(0, min(available)) * gpus) if available and not band_end else None
    )
    bytes_per_token = layout.bytes_per_block * groups // max(1, layout.block_size)
    o = stage_overheads[worst]
    caveat = None
    if (
        refusal is Refusal.ONE_REQUEST
        and s.version.default
        and kv_bytes is None
        and o.cudagraph
        and needed <= avail + o.cudagraph
    ):
        # No file names the release, so the newest was sized; only from 0.21 does vLLM
        # subtract its CUDA-graph estimate from the budget (VLLM_MEMORY_PROFILER_ESTIMATE_
        # CUDAGRAPHS, research/engines.md 1a): an older release starts.
        caveat = (
            f"vLLM {version} will refuse to start, charging {fmt_gib(o.cudagraph)} GiB of CUDA "
            "graphs to the budget (no image names the version; releases before 0.21 do not "
            "charge them and start)"
        )
    return replace(
        base,
        gpu_total_bytes=total,
        memory_fraction=s.fraction if kv_bytes is None else None,
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
        # vLLM prints num_blocks / blocks_per_request as its "Maximum concurrency", but block 0
        # of the pool is the null block the scheduler never hands out (vllm/v1/core/
        # block_pool.py): the scheduler holds (num_blocks - 1) // blocks_per_request, one fewer
        # than the printed figure at an exact multiple.
        admitted=max(0, (num_blocks - 1) // per_request) if per_request else 0,
        fits=fits,
        needed_bytes_one_sequence=needed,
        estimated_max_model_len=estimated_len,
        first_principles_tokens=first_principles,
        error=error,
        refusal=refusal,
        caveat=caveat,
        pool_cause=None if band_end else pool_cause(s),
        windowed_tokens=None if band_end else windowed_tokens(s, types, available),
        admitted_at=() if band_end else _workload_admission(layout, s, num_blocks),
        cap_length=cap_length(layout, s, num_blocks) if fits and not band_end else None,
        notes=tuple(notes),
    )


def windowed_tokens(s: VllmSettled, types: CacheTypes, available: list[int]) -> int | None:
    """Tokens of full-length requests admitted were the windows kept as windows: every stage
    paged with the hybrid allocator on, a window plus the decoding token per windowed layer."""
    if not any(layer.kind.bounded for layer, _ in s.spec.layer_shapes):
        return None
    layouts = stage_layouts(s.spec, replace(s, hybrid_kv_cache=True), types)
    counts = []
    for avail, layout in zip(available, layouts, strict=True):
        if not layout.bytes_per_block:
            continue
        blocks = max(0, avail // layout.bytes_per_block)
        per_request = layout.blocks_per_request(s.length, DECODE_TOKENS, s.old)
        if per_request:
            counts.append(blocks * s.length // per_request)
    return min(counts) if counts else None


def _workload_admission(
    layout: StageLayout, s: VllmSettled, num_blocks: int
) -> tuple[Admission, ...]:
    """What the scheduler holds at each request length the workload states, while those
    requests decode: every token in full-attention groups, the window and the token being
    decoded in sliding ones (SlidingWindowManager frees the blocks the window has left; the
    start-up check's in-flight reservation is the worst case at ``max_model_len``, not what a
    short request holds)."""
    if s.workload is None:
        return ()
    return tuple(
        Admission(
            length.tokens,
            admitted(layout, s, num_blocks, length.tokens, in_flight=DECODE_TOKENS),
            layout.needed_bytes(length.tokens, DECODE_TOKENS, s.old),
        )
        for length in s.workload.lengths()
    )
