"""What each engine does when a file is silent, keyed by engine version.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvlint.arith.gpus import GpuSpec
from kvlint.arith.units import GiB

# The newest release of each engine whose accounting kvlint mirrors; a deployment that names
# no version is sized as this one.
NEWEST: dict[str, str] = {
    "vllm": "0.33.0",
    "sglang": "0.5.23",
    "llamacpp": "0c1e570",  # the git commit research/engines.md read (2026)
    "tgi": "3.3.6",
    "ollama": "0.12.0",
}


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``v0.11.0``, ``0.10.1.1``, ``vllm/vllm-openai:v0.11.0``, ``0.19.0rc1`` -> (0, 11, 0).

    None when the text holds no dotted number (``latest``, ``nightly``).
    """
    if not text:
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def version_label(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


# --- vLLM ---------------------------------------------------------------------------------

# vLLM PR #38284 ("[Startup][UX] Enable CUDAGraph memory profiling by default", merged
# 2026-04, "slated for default enablement in v0.21") turned VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
# on and raised the default gpu_memory_utilization from 0.9 to 0.92 in the same change; the
# engine's own log says "CUDA graph memory profiling is enabled (default since v0.21.0)".
VLLM_CUDAGRAPH_PROFILING_SINCE = (0, 21)
# The capacity log: tokens = int(concurrency x max_model_len) on one merged line ("GPU KV cache
# size: N tokens, Maximum concurrency ..."), replacing num_blocks // groups x min block size
# (vllm-project/vllm#40691 reports the old figure on 0.19.0; #38364 / #40694 change it). The
# 0.19.0 logs of the calibration set print the old figure (gemma-3-27b: 36,560 = 2285 x 16);
# the release that first printed the new one was not traced: kvlint places it at 0.21.
VLLM_MERGED_CAPACITY_LINE_SINCE = (0, 21)
# The "≥160 GiB" batch tier (B200 / B300) is absent from 0.11.0 and present in 0.33.0.
VLLM_LARGE_TIER_SINCE = (0, 21)
# The 0.11 error text says "models's"; 0.33 says "model's" (engines.md 1d).
VLLM_MODELS_TYPO_FIXED_SINCE = (0, 21)
# The V1 engine's GPU-size batch defaults (engines.md 1h) exist in 0.10 and 0.11; before the
# V1 engine became the default the API server used 2048 batched tokens / 256 sequences.
VLLM_V1_DEFAULT_SINCE = (0, 10)
# Llama 4's chunked-local layers and the hybrid KV cache manager (read in the wheels):
# ChunkedLocalAttentionSpec first ships in 0.10.0, which windows them whenever the manager is
# on (0.9.2 pages them as full attention); vllm-project/vllm#21761 (0.10.1) turns the manager
# off for them unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE is set, its default
# "0" through 0.13.0; from 0.14.0 the default is "1" (#29627), so only an explicit 0 turns it off.
VLLM_CHUNKED_LOCAL_SPEC_SINCE = (0, 10)
VLLM_CHUNKED_LOCAL_OFF_SINCE = (0, 10, 1)
VLLM_CHUNKED_LOCAL_ON_AGAIN_SINCE = (0, 14)
CHUNKED_LOCAL_ENV = "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE"


def vllm_chunked_local_hybrid(version: tuple[int, ...], env: str | None) -> bool:
    """Whether vLLM ``version`` windows chunked-local layers (the hybrid manager stays on for
    them), given the environment's VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE."""
    if version < VLLM_CHUNKED_LOCAL_SPEC_SINCE:
        return False
    if version < VLLM_CHUNKED_LOCAL_OFF_SINCE:
        return True
    default = "1" if version >= VLLM_CHUNKED_LOCAL_ON_AGAIN_SINCE else "0"
    value = (env if env is not None else default).strip().lower()
    return value in ("1", "true")


@dataclass(frozen=True)
class VllmDefaults:
    """vLLM's defaults for one version on one GPU (the API server usage context)."""

    version: tuple[int, ...]
    gpu_memory_utilization: float
    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    cudagraph_profiling: bool  # the CUDA-graph estimate is charged against the KV budget
    merged_capacity_line: bool  # 0.33-style capacity tokens and one log line
    models_typo: bool  # the error says "models's"

    @property
    def line(self) -> str:
        """``0.11`` or ``current``: which accounting applies."""
        return "current" if self.cudagraph_profiling else "0.11"


def vllm_version(text: str | None) -> tuple[tuple[int, ...], bool]:
    """The version to size as, and whether it was defaulted to the newest known."""
    parsed = parse_version(text)
    if parsed is None:
        newest = parse_version(NEWEST["vllm"])
        assert newest is not None
        return newest, True
    return parsed, False


def vllm_defaults(version: tuple[int, ...], gpu: GpuSpec | None) -> VllmDefaults:
    """vLLM's defaults (``vllm/engine/arg_utils.py`` ``get_batch_defaults``,
    ``vllm/config/cache.py``) for the API server on ``gpu``."""
    current = version >= VLLM_CUDAGRAPH_PROFILING_SINCE
    max_num_seqs, max_num_batched = vllm_batch_defaults(version, gpu)
    return VllmDefaults(
        version=version,
        gpu_memory_utilization=0.92 if current else 0.9,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched,
        block_size=16,
        cudagraph_profiling=current,
        merged_capacity_line=version >= VLLM_MERGED_CAPACITY_LINE_SINCE,
        models_typo=version < VLLM_MODELS_TYPO_FIXED_SINCE,
    )


def vllm_batch_defaults(version: tuple[int, ...], gpu: GpuSpec | None) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) for ``vllm serve`` (engines.md 1h).

    0.33: >= 160 GiB -> 1024 / 16384; >= 70 GiB and not A100 / GB10 -> 1024 / 8192; otherwise
    256 / 2048. 0.11 lacks the first tier. Before the V1 engine: 256 / 2048.
    """
    if version < VLLM_V1_DEFAULT_SINCE or gpu is None:
        return 256, 2048
    total_gib = gpu.total_bytes / GiB
    name = gpu.key.lower()
    if version >= VLLM_LARGE_TIER_SINCE and total_gib >= 160:
        return 1024, 16384
    if total_gib >= 70 and "a100" not in name and "gb10" not in name:
        return 1024, 8192
    return 256, 2048


def vllm_block_size(
    spec_has_mla: bool, version: tuple[int, ...], gpu: GpuSpec | None = None
) -> int:
    """Default block size: 16 (``CacheConfig.DEFAULT_BLOCK_SIZE``). MLA backends pick their own
    on CUDA (``vllm/platforms/cuda.py``): CUTLASS MLA's 128 on Blackwell data-centre parts
    (compute capability 10.x), FlashMLA's 64 elsewhere."""
    if not spec_has_mla:
        return 16
    if (
        gpu is not None
        and gpu.vendor == "nvidia"
        and (gpu.compute_capability or "").startswith("10.")
    ):
        return 128
    return 64


# --- SGLang -------------------------------------------------------------------------------


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


# --- llama.cpp ----------------------------------------------------------------------------

# llama-server: -c 0 = the model's training context (common/common.h n_ctx = 0 in current
# builds; older builds defaulted to 4096: kvlint assumes the current build unless told).
LLAMACPP_DEFAULT_CTX_OLD = 4096
LLAMACPP_AUTO_PARALLEL = 4  # tools/server/server.cpp: -np auto -> 4 slots, kv_unified = true
LLAMACPP_UBATCH = 512
LLAMACPP_PAD = 256  # GGML_PAD(n_ctx, 256) in src/llama-context.cpp
# llama_params_fit (--fit, llama.cpp PR #16653): an unset context is lowered to at least
# --fit-ctx 4096, keeping --fit-target 1024 MiB free on each device.
LLAMACPP_FIT_MIN_CTX = 4096
# Builds before llama_params_fit (b7437 of 2025-12-16 already has it; the merge was a little
# earlier, not traced to the build).
LLAMACPP_FIT_SINCE_BUILD = 7300


def llamacpp_auto_fit(version: str | None) -> bool:
    """Whether ``--fit`` applies: any build from b7300 on, or an unnamed (newest) one."""
    if not version:
        return True
    match = re.search(r"\bb?(\d{4,5})\b", version)
    return match is None or int(match.group(1)) >= LLAMACPP_FIT_SINCE_BUILD


LLAMACPP_FIT_MARGIN = 1024 * 2**20

# --- TGI ----------------------------------------------------------------------------------

TGI_WIGGLE_ROOM = 0.90  # TGI_WIGGLE_ROOM env default (server/.../flash_causal_lm.py)
TGI_CUDA_MEMORY_FRACTION = 1.0  # --cuda-memory-fraction default
TGI_MAX_CONCURRENT_REQUESTS = 128
TGI_PREFILL_TOKENS = 4096  # --max-batch-prefill-tokens fallback


def tgi_block_size(attention: str | None) -> int:
    """``BLOCK_SIZE`` by attention backend (``server/text_generation_server/models/globals.py``):
    flashdecoding 256, flashinfer 1 (the default on CUDA in TGI 3), flashdecoding-ipex 64,
    paged 16."""
    backend = (attention or "flashinfer").lower()
    return {"flashdecoding": 256, "flashinfer": 1, "flashdecoding-ipex": 64}.get(backend, 16)


# --- Ollama -------------------------------------------------------------------------------

OLLAMA_CONTEXT_LENGTH = 4096  # OLLAMA_CONTEXT_LENGTH default (2048 before 0.6.4)
OLLAMA_NUM_PARALLEL = 1  # OLLAMA_NUM_PARALLEL default in current releases
OLLAMA_KV_CACHE_TYPE = "f16"  # OLLAMA_KV_CACHE_TYPE default; q8_0 / q4_0 need flash attention
