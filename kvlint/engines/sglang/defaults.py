"""What SGLang does when a file is silent.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations


def sglang_batch_defaults(gpu_total_bytes: int | None, tp: int) -> tuple[int, int]:
    """(``chunked_prefill_size``, ``cuda_graph_max_bs``) by GPU memory
    (``sglang/srt/server_args.py`` ``_handle_gpu_memory_settings``: "T4, 4080", "A10, 4090,
    5090", "A100 (40GB), L40", "H100, A100", "H20, H200", "B200, MI300")."""
    if gpu_total_bytes is None:
        return 4096, 160
    mb = gpu_total_bytes / 2**20
    large_tp = tp >= 4
    if mb < 20 * 1024:
        return 2048, 8
    if mb < 35 * 1024:
        return 2048, 80 if large_tp else 24
    if mb < 60 * 1024:
        return 4096, 160 if large_tp else 32
    if mb < 160 * 1024:
        return 8192, 512 if large_tp else 256
    return 16384, 512


def sglang_chunked_prefill_size(gpu_total_bytes: int | None, tp: int = 1) -> int:
    return sglang_batch_defaults(gpu_total_bytes, tp)[0]


def sglang_mem_fraction_static(
    gpu_total_bytes: int | None, tp: int, pp: int, dp_attention: int = 0
) -> float:
    """``mem_fraction_static`` when unset (``_handle_gpu_memory_settings``):
    ``round((gpu_mem - reserved) / gpu_mem, 3)``, ``reserved`` in MB = 512 + 1.5 x
    max(chunked_prefill_size, 2048) + 2 x cuda_graph_max_bs + tp x pp / 8 x 1024, plus
    3 x cuda_graph_max_bs x dp (and 1.5 x more above 300) with DP attention, at least 10 GiB
    above 60 GiB of GPU memory. 0.95 when the GPU is unknown (0.5.23; 0.88 in earlier 0.5)."""
    if gpu_total_bytes is None:
        return 0.95
    gpu_mb = gpu_total_bytes / 2**20
    chunked, graph_bs = sglang_batch_defaults(gpu_total_bytes, tp)
    reserved = 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024
    if dp_attention > 1:
        reserved += graph_bs * dp_attention * 3
        if graph_bs > 300:
            reserved += graph_bs * dp_attention * 1.5
    if gpu_mb > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mb - reserved) / gpu_mb, 3)


# Models whose hybrid SWA pool SGLang turns off (_handle_model_specific_adjustments): every
# layer then keeps the full context.
SGLANG_NO_HYBRID_SWA = frozenset(
    {"gpt_oss", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "olmo2", "olmo3"}
)
SGLANG_SWA_FULL_TOKENS_RATIO = 0.8
SGLANG_PAGE_SIZE = 1
