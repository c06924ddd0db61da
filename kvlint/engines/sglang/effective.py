"""SGLang's settle step: what ``sglang.launch_server`` will run with for one deployment.

The only place kvlint reads SGLang's settings off a Deployment: the typed fields its flag table
fills and the flags without a field (``--enable-dp-attention``, ``--disable-hybrid-swa-memory``,
``--swa-full-tokens-ratio``, ``--max-total-tokens``). ``--json-model-override-args`` is applied
to the model; the defaults of the release the file names (else 0.5.23, ``research/engines.md``
section 2) are filled in: ``defaults.py`` holds them release by release.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.common import computed_dtype
from kvlint.engines.common import given
from kvlint.engines.common import parallel_size
from kvlint.engines.common import plain
from kvlint.engines.common import stated_release
from kvlint.engines.common import storage
from kvlint.engines.common import switch
from kvlint.engines.sglang import defaults as D
from kvlint.engines.sglang.facts import FACTS
from kvlint.gpus import GpuSpec
from kvlint.model.overrides import with_length_overrides
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.settled import PoolSwitch
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.versions import parse_version


@dataclass(frozen=True)
class SglangSettled(Settled):
    """SGLang's Settled, with what only its accounting reads."""

    dp_attention: int = 0  # data-parallel attention ranks (--enable-dp-attention), else 0
    hybrid_swa: bool = True  # a separate pool for sliding-window layers (not disabled)
    swa_full_tokens_ratio: float = D.SGLANG_SWA_FULL_TOKENS_RATIO
    max_total_tokens: int | None = None  # --max-total-tokens: can only lower the pool
    sparse_mla: bool = False  # DeepSeek sparse attention's fp8 latent and indexer keys


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


SPARSE_MLA_MODEL_TYPES = frozenset({"deepseek_v32"})


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of SGLang: its typed fields, and the flags and environment variables
    it reads that have no field (read here and nowhere else)."""
    return Request.of(
        dep,
        **{
            "enable-dp-attention": dep.settings.get("enable-dp-attention"),
            "disable-hybrid-swa-memory": dep.settings.get("disable-hybrid-swa-memory"),
            "swa-full-tokens-ratio": dep.settings.get("swa-full-tokens-ratio"),
            "max-total-tokens": dep.settings.get("max-total-tokens"),
            "speculative-draft-model-path": dep.speculative_model,
        },
    )


def default_fraction(
    req: Request,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    layout: tuple[int, int, int],
    version: Sourced[str],
) -> float:
    """``mem_fraction_static`` as ``version`` computes it when the file sets none: from the
    file's chunked prefill size and running-request limit where it sets them, the prefill CUDA
    graphs' reserve where that release turns them on (CUDA only; off with speculative decoding,
    DP attention, PP > 1, a vision tower, and from 0.5.18 with --disable-cuda-graph)."""
    tp, pp, dp_attention = layout
    release = parse_version(str(version.value))
    total = gpu.total_bytes if gpu is not None else None
    chunked = plain(req.max_num_batched_tokens)
    chunked = (
        chunked if isinstance(chunked, int) else D.sglang_chunked_prefill_size(total, tp, release)
    )
    running = plain(req.max_num_seqs)
    graph_bs = D.sglang_graph_max_bs(
        total, tp, release, running if isinstance(running, int) else None
    )
    eager = bool(plain(req.enforce_eager))
    gated = (release or D.NEWEST_RELEASE) >= D.GRAPH_RESERVE_GATED_SINCE
    prefill_off = (
        gpu is None
        or gpu.vendor != "nvidia"
        or req.extra("speculative-draft-model-path") is not None
        or dp_attention > 1
        or pp > 1
        or spec.vision_param_count is not None
        or (eager and gated)
    )
    user_total = plain(req.extra("max-total-tokens"))
    prefill_mb = 0.0
    if not prefill_off:
        prefill_mb = D.prefill_graph_reserve_mb(
            release,
            mla=any(layer.kind is CacheKind.MLA for layer in spec.layers),
            chunked_prefill=chunked,
            max_total_tokens=user_total if isinstance(user_total, int) else None,
        )
    return D.sglang_mem_fraction_static(
        total,
        tp,
        pp,
        dp_attention,
        release,
        chunked_prefill=chunked,
        graph_bs=graph_bs,
        decode_graphs=not eager,
        prefill_graph_mb=prefill_mb,
    )


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> SglangSettled:
    """What SGLang will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> SglangSettled:
    """SGLang's defaults filled into ``req``, its overrides applied to ``model``."""
    spec = model
    here = req.span
    version = stated_release(req, FACTS.name)
    spec = with_length_overrides(model, req.hf_overrides.value if req.hf_overrides else None)
    derived = context_length(spec)
    notes = [f"SGLang {version.value}" + ("" if req.engine_version else " (newest known)")]
    context = req.max_model_len
    if not (context and context.value):
        context = Sourced(derived, here, default=True)
        notes.append(f"default context length {context.value:,} (the model's)")
    tp = parallel_size(req.tensor_parallel_size, here)
    pp = parallel_size(req.pipeline_parallel_size, here)
    dp = parallel_size(req.data_parallel_size, here)
    dp_attention = dp.value if switch(req.extra("enable-dp-attention")) else 0
    user_total = plain(req.extra("max-total-tokens"))
    fraction = req.memory_fraction
    if fraction is None:
        value = default_fraction(req, spec, gpu, (tp.value, pp.value, dp_attention), version)
        fraction = Sourced(value, here, default=True)
        notes.append(f"default mem_fraction_static {value:g}")
    cache = req.kv_cache_dtype
    cache_dtype = (
        Sourced(str(cache.value).lower(), cache.span, cache.raw)
        if cache is not None
        else Sourced("auto", here, default=True)
    )
    # `auto` is the model dtype (never the weight quantisation), or the --dtype a file sets.
    types, cache_note = storage(cache_dtype.value, computed_dtype(req.dtype, spec))
    disable_swa = req.extra("disable-hybrid-swa-memory")
    switches: tuple[PoolSwitch, ...] = ()
    if disable_swa is not None and switch(disable_swa):
        switches = (
            PoolSwitch("disable_hybrid_swa_memory", disable_swa, "the hybrid SWA pool is disabled"),
        )
    ratio = plain(req.extra("swa-full-tokens-ratio"))
    return SglangSettled(
        **given(FACTS, req, model, gpu, spec=spec, version=version, derived=derived),
        max_model_len=context,
        allow_long=req.allow_long_max_model_len,
        max_num_seqs=req.max_num_seqs,
        max_num_batched_tokens=req.max_num_batched_tokens,
        memory_fraction=fraction,
        kv_cache_memory_bytes=None,
        cache_dtype=cache_dtype,
        cache_dtype_v=None,
        cache_types=types,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        data_parallel_size=dp,
        block_size=req.block_size or Sourced(D.SGLANG_PAGE_SIZE, here, default=True),
        enforce_eager=req.enforce_eager,
        hf_overrides=req.hf_overrides,
        pool_switches=switches,
        cache_note=cache_note,
        notes=tuple(notes),
        dp_attention=dp_attention,
        hybrid_swa=not switches,
        swa_full_tokens_ratio=float(str(ratio)) if ratio else D.SGLANG_SWA_FULL_TOKENS_RATIO,
        max_total_tokens=user_total if isinstance(user_total, int) else None,
        sparse_mla=spec.model_type in SPARSE_MLA_MODEL_TYPES and cache is None,
    )
