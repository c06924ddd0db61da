"""What SGLang does when a file is silent, release by release.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). SGLang's start-up memory defaults changed
shape several times; each line below was read in that release's own wheel
(``sglang/srt/server_args.py`` ``__post_init__`` / ``_handle_gpu_memory_settings``, from 0.5.18
on also ``sglang/srt/arg_groups/memory_hook.py``). The releases read are ``RELEASES_READ``; a
release between two of them is sized as the newest one read before it.
"""

from __future__ import annotations

from kvlint.engines.versions import NEWEST
from kvlint.versions import parse_version

Release = tuple[int, ...]

RELEASES_READ = (
    "0.4.3.post4",
    "0.4.5",
    "0.4.6.post1",
    "0.4.7",
    "0.4.8",
    "0.4.9.post2",
    "0.5.1",
    "0.5.2",
    "0.5.3",
    "0.5.4",
    "0.5.5",
    "0.5.6",
    "0.5.8",
    "0.5.9",
    "0.5.10",
    "0.5.11",
    "0.5.13.post1",
    "0.5.18",
    "0.5.20",
    "0.5.23",
)

NEWEST_RELEASE: Release = parse_version(NEWEST["sglang"]) or (0, 5, 23)

# 0.4.6: a card above 81,920 MiB leaves 13 GiB: mem_fraction_static = (gpu - 13 GiB) / gpu.
FRACTION_BY_GPU_SINCE: Release = (0, 4, 6)
# 0.4.7: above 81,920 MiB 0.88, then 0.79 above 180,000 MB, min(f + 48 GiB (1 - f) / gpu,
# (gpu - 18 GiB) / gpu) above 96 GiB; chunked prefill 16,384 above 180,000 MB.
FRACTION_BY_GPU_SIZE_SINCE: Release = (0, 4, 7)
# 0.4.8: a reserve per GPU tier, (2.8 + tp pp / 10) GiB below 35 GiB ... 32 GiB above 160 GiB.
RESERVE_BY_TIER_SINCE: Release = (0, 4, 8)
# 0.5.3: reserve = 512 + 1.5 max(chunked prefill, 2048) + 2 graph bs + tp pp / 8 x 1024 (MB).
RESERVE_FORMULA_SINCE: Release = (0, 5, 3)
# 0.5.5: CUDA graphs up to bs 24 (was 16) below 35 GiB at TP < 4.
GRAPH_BS_24_SINCE: Release = (0, 5, 5)
# 0.5.10: piecewise (prefill) CUDA graphs on by default, their capture reserved (8 MB a size).
PREFILL_GRAPHS_SINCE: Release = (0, 5, 10)
# 0.5.18: the decode graph's reserve only while decode graphs are on (cuda_graph_config).
GRAPH_RESERVE_GATED_SINCE: Release = (0, 5, 18)
# 0.5.20: below 35 GiB chunked prefill 4,096 and graphs to bs 48 (160 at TP >= 4); a GPU of
# unknown size gets 0.95 (0.88 before).
WIDER_24GB_DEFAULTS_SINCE: Release = (0, 5, 20)
# 0.5.23: a default decode graph range no wider than --max-running-requests (0.5.20 has no cap).
GRAPH_BS_CAPPED_SINCE: Release = (0, 5, 23)

_GIB_MB = 1024  # SGLang counts these reserves in MiB


def _line(release: Release | None) -> Release:
    return release if release is not None else NEWEST_RELEASE


def sglang_batch_defaults(
    gpu_total_bytes: int | None, tp: int, release: Release | None = None
) -> tuple[int, int]:
    """(``chunked_prefill_size``, ``cuda_graph_max_bs``) when a file sets neither, by GPU
    memory and release ("T4, 4080", "A10, 4090, 5090", "A100 (40GB), L40", "H100, A100",
    "H20, H200", "B200, MI300" in 0.5.x)."""
    r = _line(release)
    mb = gpu_total_bytes / 2**20 if gpu_total_bytes is not None else None
    large_tp = tp >= 4
    if r < RESERVE_BY_TIER_SINCE:
        # 0.4.x: "when serving TP1/TP2 models on lower-end GPUs with HBM<25G ... set
        # cuda_graph_max_bs to a very small value"; 80 at TP4/TP8, else 160.
        if mb is not None and r >= FRACTION_BY_GPU_SIZE_SINCE and mb > 180_000:
            return 16384, 160
        if mb is not None and mb < 25_000:
            return 2048, 80 if large_tp else 8
        return 8192, 160
    if r < RESERVE_FORMULA_SINCE:
        if mb is None:
            return 4096, 160
        graph_bs = (80 if large_tp else 8) if mb < 35 * _GIB_MB else 160
        if mb < 35 * _GIB_MB:
            return 2048, graph_bs
        return (8192 if mb < 160 * _GIB_MB else 16384), graph_bs
    if mb is None:
        return 4096, 160
    if mb < 20 * _GIB_MB:
        return 2048, 8
    if mb < 35 * _GIB_MB:
        if r >= WIDER_24GB_DEFAULTS_SINCE:
            return 4096, 160 if large_tp else 48
        return 2048, 80 if large_tp else (24 if r >= GRAPH_BS_24_SINCE else 16)
    if mb < 60 * _GIB_MB:
        return 4096, 160 if large_tp else 32
    if mb < 160 * _GIB_MB:
        return 8192, 512 if large_tp else 256
    return 16384, 512


def sglang_graph_max_bs(
    gpu_total_bytes: int | None,
    tp: int,
    release: Release | None = None,
    max_running_requests: int | None = None,
) -> int:
    """The decode CUDA graphs' largest batch when a file sets none (0.5.23 caps a default range
    at --max-running-requests)."""
    bs = sglang_batch_defaults(gpu_total_bytes, tp, release)[1]
    if max_running_requests and _line(release) >= GRAPH_BS_CAPPED_SINCE:
        bs = min(bs, max_running_requests)
    return bs


def sglang_chunked_prefill_size(
    gpu_total_bytes: int | None, tp: int = 1, release: Release | None = None
) -> int:
    return sglang_batch_defaults(gpu_total_bytes, tp, release)[0]


def prefill_graph_sizes(max_tokens: int) -> int:
    """How many token counts the prefill (piecewise) CUDA graphs capture up to ``max_tokens``
    (0.5.10 ``_generate_piecewise_cuda_graph_tokens``, 0.5.23
    ``generate_prefill_cuda_graph_batch_sizes``)."""
    sizes = (
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, max_tokens + 1, 512),
    )
    return sum(1 for size in sizes if size <= max_tokens)


def prefill_graph_reserve_mb(
    release: Release | None, *, mla: bool, chunked_prefill: int, max_total_tokens: int | None
) -> float:
    """What the prefill CUDA graphs add to the reserve where they are on (``disable`` is the
    caller's): 8 MB a captured size, 1.5 GiB on an MLA backend. Their token range is the chunked
    prefill size (2,048 on MLA, capped by --max-total-tokens) through 0.5.18, the documented
    prefill default 2,048 from 0.5.20."""
    r = _line(release)
    if r < PREFILL_GRAPHS_SINCE:
        return 0.0
    if mla:
        return 1.5 * _GIB_MB
    if r >= WIDER_24GB_DEFAULTS_SINCE:
        max_tokens = 2048
    else:
        max_tokens = chunked_prefill if chunked_prefill > 0 else 2048
        if max_total_tokens is not None:
            max_tokens = min(max_tokens, max_total_tokens)
    return prefill_graph_sizes(max_tokens) * 8.0


def sglang_mem_fraction_static(
    gpu_total_bytes: int | None,
    tp: int,
    pp: int,
    dp_attention: int = 0,
    release: Release | None = None,
    *,
    chunked_prefill: int | None = None,
    max_prefill_tokens: int = 16384,
    graph_bs: int | None = None,
    decode_graphs: bool = True,
    prefill_graph_mb: float = 0.0,
) -> float:
    """``mem_fraction_static`` when unset, for ``release`` (the newest when None).

    Up to 0.4.5 by TP alone (0.88, 0.87 at TP 2, 0.85 at 4, 0.81 at 8, 0.79 at 16); 0.4.6 and
    0.4.7 by TP up to 81,920 MiB and by GPU size above; 0.4.8 to 0.5.2 a reserve per GPU tier
    (+4 GiB with DP attention); from 0.5.3 ``round((gpu_mem - reserved) / gpu_mem, 3)``,
    ``reserved`` in MB = 512 + 1.5 x max(chunked_prefill_size, 2048) (``max_prefill_tokens``
    when chunking is off) + 2 x cuda_graph_max_bs + tp x pp / 8 x 1024, plus 3 x
    cuda_graph_max_bs x dp (and 1.5 x more above 300) with DP attention, plus the prefill
    graphs' reserve, at least 10 GiB above 60 GiB of GPU memory. A GPU of unknown size: 0.88,
    0.95 from 0.5.20. ``chunked_prefill`` and ``graph_bs`` are the file's, else the release's
    defaults for the GPU."""
    r = _line(release)
    parallel = tp * pp
    if r < FRACTION_BY_GPU_SINCE:
        return _by_parallel(tp)
    if gpu_total_bytes is None:
        return 0.95 if r >= WIDER_24GB_DEFAULTS_SINCE else 0.88
    gpu_mb = gpu_total_bytes / 2**20
    if r < FRACTION_BY_GPU_SIZE_SINCE:
        return _by_parallel(tp) if gpu_mb <= 81920 else (gpu_mb - 13 * _GIB_MB) / gpu_mb
    if r < RESERVE_BY_TIER_SINCE:
        fraction = _by_parallel(parallel) if gpu_mb <= 81920 else 0.88
        if gpu_mb > 180_000:
            return 0.79
        if gpu_mb > 96 * _GIB_MB:
            return min(fraction + 48 * _GIB_MB * (1 - fraction) / gpu_mb, 1 - 18 * _GIB_MB / gpu_mb)
        return fraction
    if r < RESERVE_FORMULA_SINCE:
        reserved = _tier_reserve_gib(gpu_mb, parallel) * _GIB_MB
        if dp_attention > 1:
            reserved += 4 * _GIB_MB
        return round((gpu_mb - reserved) / gpu_mb, 3)
    default_chunked, default_bs = sglang_batch_defaults(gpu_total_bytes, tp, r)
    chunked = chunked_prefill if chunked_prefill is not None else default_chunked
    bs = graph_bs if graph_bs is not None else default_bs
    reserved = 512 + max(chunked if chunked > 0 else max_prefill_tokens, 2048) * 1.5
    if decode_graphs or r < GRAPH_RESERVE_GATED_SINCE:
        reserved += bs * 2
    reserved += parallel / 8 * 1024
    if dp_attention > 1:
        reserved += bs * dp_attention * 3
        if bs > 300:
            reserved += bs * dp_attention * 1.5
    reserved += prefill_graph_mb
    if gpu_mb > 60 * _GIB_MB:
        reserved = max(reserved, 10 * _GIB_MB)
    return round((gpu_mb - reserved) / gpu_mb, 3)


def _by_parallel(size: int) -> float:
    """0.4.x's table: more ranks, more NCCL and graph buffers."""
    if size >= 16:
        return 0.79
    if size >= 8:
        return 0.81
    if size >= 4:
        return 0.85
    if size >= 2:
        return 0.87
    return 0.88


def _tier_reserve_gib(gpu_mb: float, parallel: int) -> float:
    """0.4.8 to 0.5.2: "T4, 4080" and "A10, L40, 4090, 5090" (2.8 + p/10), "H100, A100"
    (9.5 + p/2), "H20" and "H200" (12 + p/2), "B200, MI300" 32 GiB."""
    if gpu_mb < 35 * _GIB_MB:
        return 2.8 + parallel / 10
    if gpu_mb < 90 * _GIB_MB:
        return 9.5 + parallel / 2
    if gpu_mb < 160 * _GIB_MB:
        return 12 + parallel / 2
    return 32


# Models whose hybrid SWA pool SGLang turns off (_handle_model_specific_adjustments): every
# layer then keeps the full context.
SGLANG_NO_HYBRID_SWA = frozenset(
    {"gpt_oss", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "olmo2", "olmo3"}
)
SGLANG_SWA_FULL_TOKENS_RATIO = 0.8
SGLANG_PAGE_SIZE = 1
