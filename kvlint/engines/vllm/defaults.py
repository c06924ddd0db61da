"""What vLLM does when a file is silent, keyed by version.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvlint.deployment import Sourced
from kvlint.engines.versions import NEWEST
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from kvlint.versions import parse_version

# vLLM PR #38284 ("[Startup][UX] Enable CUDAGraph memory profiling by default", merged
# 2026-04, "slated for default enablement in v0.21") turned VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
# on and raised the default gpu_memory_utilization from 0.9 to 0.92 in the same change; the
# engine's own log says "CUDA graph memory profiling is enabled (default since v0.21.0)".
VLLM_CUDAGRAPH_PROFILING_SINCE = (0, 21)
# The capacity log: tokens = int(concurrency x max_model_len) on one merged line ("GPU KV cache
# size: N tokens, Maximum concurrency ..."), replacing num_blocks // groups x min block size
# (vllm-project/vllm#40691 reports the old figure on 0.19.0; #38364 / #40694 change it). Settled
# on the logs: 0.19.0, a 0.19.2rc1 dev build and the Gemma 4 launch image print the old figure
# (gemma-3-27b: 36,560 = 2285 x 16; gemma-4-E4B: 179,632, a block multiple, beside 47.14x at
# 16,384; gemma-4-31b-it-fp8: 120,624 = 45,236 // 6 x 16), 0.20.2 the new one (gemma-4-26B-A4B
# on an H200: 984,297 tokens = int(117,420 / 3,909 x 32,768) beside 30.04x;
# Michal1337/clinician-co-pilot's vllm.log), as do later nightlies (club-3090's Gemma 4 boots:
# 384,019 tokens at 2.93x of 131,072). 0.20.2 is the first release seen with it; 0.20.0-0.20.1
# are untraced and kept on the old line. One full-attention group gives the same figure either
# way; hybrids differ.
VLLM_MERGED_CAPACITY_LINE_SINCE = (0, 20, 2)
# The tokens a sliding-window layer holds ahead of its window: max_num_batched_tokens through
# the 0.25 line (a 0.22.1rc1 build's Gemma 4 31B on a GB10: 7.53x at 8,192 tokens is 256 global
# + 5 x (cdiv(1023 + 2048, 16) + 1) blocks a request; 0.25.1's Gemma 4 26B at 2,496 batched
# tokens: 14.92x = 138,739 / (8,192 + 5 x 221)); the 0.33 source multiplies it by
# max_concurrent_batches (2 with async scheduling on one stage, the pipeline depth with PP:
# vllm/config/vllm.py max_in_flight_tokens). No log between 0.25.1 and 0.33 pins the release:
# taken from 0.26, the first after the last one seen without it.
VLLM_IN_FLIGHT_BATCHES_SINCE = (0, 26)
# The "≥160 GiB" batch tier (B200 / B300: 16384 batched tokens) is absent from 0.11.0 and
# present in 0.33.0: vllm-project/vllm#51726 ("Update default `_max_num_batched_tokens` from
# 8192 to 16384", merged 2026-08-10, after the 0.27 branch: 0.27.1 followed on 2026-08-13);
# 0.28.0 (2026-08-26) is the first release with it, so 0.21-0.27 on a B300 batch 8192 tokens.
VLLM_LARGE_TIER_SINCE = (0, 28)
# The 0.11 error text says "models's"; 0.33 says "model's" (engines.md 1d).
VLLM_MODELS_TYPO_FIXED_SINCE = (0, 21)
# The V1 engine's batch defaults for ``vllm serve`` (engines.md 1h has 0.11's and 0.33's), step
# by step from the pull requests that moved them (V0 keeps 256 sequences, 2048 tokens):
# * 0.8.0-0.8.3: 1024 sequences on every GPU; 8192 batched tokens where the CUDA device name
#   holds "h100" or "h200" (#12369, 2025-01), else 2048. "The default `max_num_seqs` has been
#   raised from 256 in V0 to 1024 in V1" (#15357, the OOM docs of 2025-03-23): the dummy sampler
#   over 1,024 rows is what refused the reports of #14992 and #17238 (0.8.1, two RTX 3090s,
#   Qwen2.5-32B W8A16: "No available memory for the cache blocks"; it starts at 4 or 8).
# * 0.8.4: 1024 sequences on H100/H200 only, 256 elsewhere (#16158, "Revert the default
#   max_num_seqs to V0 values for most hardware", merged 2025-04-07, after 0.8.3).
# * 0.8.5: by memory, >= 70 GiB -> 1024 / 8192 (#17073, merged 2025-04-23; no 0.8.5 log in
#   the corpora pins it).
# * 0.9.0 on: the same without A100s (#17885, "Use small max_num_batched_tokens for A100",
#   merged 2025-05-09), then the >= 160 GiB tier from VLLM_LARGE_TIER_SINCE.
VLLM_V1_MAX_SEQS_REVERTED_SINCE = (0, 8, 4)
VLLM_V1_BY_MEMORY_SINCE = (0, 8, 5)
VLLM_V1_NOT_A100_SINCE = (0, 9)
# The V0 engine: the only one before 0.8; from 0.8 V1 is the default and ``VLLM_USE_V1=0``
# still selects V0 until the V0 engine's removal in 0.11 (vllm/envs.py VLLM_USE_V1). The
# cmontemuino/amd-mi300x-ml-benchmarks logs run rocm/vllm:rocm6.4.1_vllm_0.9.1 with
# `--env VLLM_USE_V1=0` and print "Initializing a V0 LLM engine (v0.9.2.dev364...)".
VLLM_V1_SINCE = (0, 8)
VLLM_V0_REMOVED_IN = (0, 11)
V1_SWITCH_ENV = "VLLM_USE_V1"
# MLA: vLLM caches DeepSeek-style latent attention as one latent vector per token from 0.7.1
# (vllm-project/vllm#12601; Red Hat's "Enhancing DeepSeek models with MLA and FP8
# optimizations in vLLM": "10x memory capacity" against 0.7.0). Before, deepseek_v2.py cached
# every head's K and a padded V (ModelSpec.mla_expanded).
VLLM_MLA_SINCE = (0, 7, 1)
# The newest release without it: a file naming no release is sized at it too for MLA models.
VLLM_NEWEST_WITHOUT_MLA = "0.7.0"
# V0 turns chunked prefill on by itself only for a context above 32K, on CUDA, for a text model
# without MLA (EngineArgs._set_default_args_v0: "Chunked prefill not supported for Multimodal
# or MLA in V0", ``use_long_context and is_gpu`` with is_gpu = current_platform.is_cuda(), False
# on ROCm). Otherwise the scheduler batches a whole prompt: max(max_model_len, 2048) tokens, the
# profile run's batch. The MI300X logs at 131,072 tokens show it: Llama-3.1-8B's activation
# peak is 14.63 GiB, 131,072 tokens x 14,336 MLP width x ~8 bytes (2,048 tokens would be 0.2).
V0_CHUNKED_PREFILL_ABOVE = 32768


def vllm_v0(version: tuple[int, ...], use_v1: str | None) -> bool:
    """True when the V0 engine runs: before 0.8, or ``VLLM_USE_V1=0`` before 0.11."""
    if version < VLLM_V1_SINCE:
        return True
    off = use_v1 is not None and use_v1.strip().lower() in ("0", "false")
    return off and version < VLLM_V0_REMOVED_IN


# VLLM_USE_FLASHINFER_SAMPLER (vllm/envs.py): unset, V1 takes FlashInfer's top-k/top-p kernel
# where the FlashInfer package is installed (0.10: "Using FlashInfer for top-p & top-k
# sampling", else "FlashInfer is not available. Falling back to the PyTorch-native
# implementation", topk_topp_sampler.py); 1 asks for it, 0 turns it off.
FLASHINFER_SAMPLER_ENV = "VLLM_USE_FLASHINFER_SAMPLER"
# NCCL_P2P_DISABLE=1: NCCL connects the ranks of a node through host memory, not peer links.
P2P_DISABLE_ENV = "NCCL_P2P_DISABLE"


def env_switch(value: Sourced[Any] | None) -> bool | None:
    """An environment switch as set: True for 1/true, False for 0/false, None otherwise."""
    if value is None:
        return None
    word = str(value.value).strip().lower()
    return True if word in ("1", "true") else False if word in ("0", "false") else None


def peer_links(
    gpu: GpuSpec | None,
    *,
    tp: int,
    pp: int,
    nnodes: Sourced[Any] | None,
    p2p_disabled: bool | None,
) -> bool:
    """True when the tensor-parallel ranks may talk over NVLink-class peer links: not a card
    without NVLink (``GpuSpec.nvlink``), not a group larger than the card's bridge joins
    (``GpuSpec.nvlink_group``: four RTX 3090s are two bridged pairs at best, and vLLM turns its
    custom all-reduce off for more than two GPUs not all NVLink-connected), NCCL's peer
    transport not disabled (``NCCL_P2P_DISABLE=1``), the group on one node (``--nnodes`` N puts
    tp x pp / N GPUs on each). Whether a platform grants peer access at all (a VM, a PCIe
    topology, a bridge fitted or not) no file says: where the card may have links they are
    assumed, the larger non-torch figure."""
    if p2p_disabled or (gpu is not None and not gpu.nvlink):
        return False
    group = gpu.nvlink_group if gpu is not None else None
    if group is not None and tp > group:
        return False
    nodes = nnodes.value if nnodes is not None and isinstance(nnodes.value, int) else 1
    return not (nodes > 1 and tp * pp // nodes < tp)


def v0_chunked_prefill(max_model_len: int, *, cuda: bool, multimodal: bool, mla: bool) -> bool:
    """V0's own choice of chunked prefill when no setting makes it (see above)."""
    return max_model_len > V0_CHUNKED_PREFILL_ABOVE and cuda and not multimodal and not mla


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


def vllm_defaults(version: tuple[int, ...], gpu: GpuSpec | None, v0: bool = False) -> VllmDefaults:
    """vLLM's defaults (``vllm/engine/arg_utils.py`` ``get_batch_defaults``,
    ``vllm/config/cache.py``) for the API server on ``gpu`` (``v0``: the V0 engine's)."""
    current = version >= VLLM_CUDAGRAPH_PROFILING_SINCE
    max_num_seqs, max_num_batched = (256, 2048) if v0 else vllm_batch_defaults(version, gpu)
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
    """(max_num_seqs, max_num_batched_tokens) for ``vllm serve``'s V1 engine (engines.md 1h and
    the steps above VLLM_V1_MAX_SEQS_REVERTED_SINCE).

    0.33: >= 160 GiB -> 1024 / 16384; >= 70 GiB and not A100 / GB10 -> 1024 / 8192; otherwise
    256 / 2048. 0.11 lacks the first tier. 0.8.0-0.8.4 go by the CUDA name (H100 / H200).
    Before the V1 engine: 256 / 2048. No GPU: the defaults of a GPU vLLM does not name.
    """
    if version < VLLM_V1_SINCE:
        return 256, 2048
    name = gpu.display.lower() if gpu is not None else ""
    hopper = "h100" in name or "h200" in name
    if version < VLLM_V1_MAX_SEQS_REVERTED_SINCE:
        return 1024, 8192 if hopper else 2048
    if version < VLLM_V1_BY_MEMORY_SINCE:
        return (1024, 8192) if hopper else (256, 2048)
    if gpu is None:
        return 256, 2048
    total_gib = gpu.total_bytes / GiB
    if version >= VLLM_LARGE_TIER_SINCE and total_gib >= 160:
        return 1024, 16384
    a100 = "a100" in name and version >= VLLM_V1_NOT_A100_SINCE
    if total_gib >= 70 and not a100 and "gb10" not in name:
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


# Recurrent (Mamba / linear-attention) state in vLLM's V1 paging, read from the source of the
# current line (vllm/v1/kv_cache_interface.py MambaSpec, vllm/model_executor/models/config.py
# MambaModelConfig / Qwen3_5ForConditionalGenerationConfig / NemotronHForCausalLMConfig,
# vllm/model_executor/layers/mamba/mamba_utils.py) and settled on logs (tests/engines/vllm/
# recurrent_test.py):
# * a request holds 1 + num_speculative_tokens state blocks ("none" mode), 2 +
#   num_speculative_tokens with prefix caching ("align" mode: the running state and the last
#   block-aligned one), cdiv(max_model_len, block_size) in "all" mode;
# * prefix caching on a hybrid turns "none" into "align" ("all" for models declaring Mamba
#   prefix caching; kvlint takes "all" only when a file sets --mamba-cache-mode all). Align mode
#   is vllm-project/vllm#30877 ([V1][Hybrid] Mamba Prefix Caching with align mode, opened
#   2025-12-17), taken as shipping from 0.14; prefix caching stays opt-in for hybrids until
#   0.28 ("hybrid prefix caching is now enabled by default", vllm-project/vllm-metal#651 for
#   vLLM 0.28.0; vllm-project/vllm#46778 of 2026-06 still calls it opt-in).
VLLM_MAMBA_ALIGN_SINCE = (0, 14)
VLLM_HYBRID_PREFIX_CACHING_DEFAULT_SINCE = (0, 28)
# Model types whose vLLM config class sets mamba_ssm_cache_dtype from the checkpoint when the
# flag is auto: Qwen3.5 / 3.6 (Qwen3_5ForConditionalGenerationConfig: the text config's
# mamba_ssm_dtype) and Nemotron-H (NemotronHForCausalLMConfig: mamba_ssm_cache_dtype, else
# float32, "Only `float32` is known to have no accuracy issues by default").
SSM_DTYPE_FROM_CONFIG = {
    "qwen3_5": None,
    "qwen3_5_moe": None,
    "nemotron_h": "float32",
}


# Model types whose vLLM class declares SupportsMambaPrefixCaching, which turns prefix caching
# into "all" mode instead of "align" (NemotronHForCausalLM in the source of 2026-09).
MAMBA_ALL_MODE_MODEL_TYPES = frozenset({"nemotron_h"})


def vllm_mamba_cache_mode(
    version: tuple[int, ...], prefix_caching: bool, asked: str | None, model_type: str = ""
) -> str:
    """``mamba_cache_mode`` as MambaModelConfig.verify_and_update_config leaves it: "none"
    without prefix caching, else the mode asked, else "all" for a model that supports it and
    "align" for the rest ("all" asked of one that does not falls back to "align")."""
    if not prefix_caching or version < VLLM_MAMBA_ALIGN_SINCE:
        return "none"
    supports_all = model_type in MAMBA_ALL_MODE_MODEL_TYPES
    if asked == "align" or (asked == "all" and not supports_all):
        return "align"
    return "all" if supports_all else "align"


def vllm_ssm_cache_dtype(model_type: str, config_dtype: str | None, asked: str | None) -> str:
    """``mamba_ssm_cache_dtype``: the flag when not auto, else the model's config class's pick,
    else auto (the conv state's dtype)."""
    if asked and asked.strip().lower() != "auto":
        return asked.strip().lower()
    if model_type in SSM_DTYPE_FROM_CONFIG:
        return config_dtype or SSM_DTYPE_FROM_CONFIG[model_type] or "auto"
    return "auto"


# `--kv-cache-dtype auto` follows a ModelOpt checkpoint's declared cache quantisation from 0.14:
# vllm-project/vllm#30785 ("Load kv-cache dtype from hf_quant_config.json automatically",
# merged 2025-12-16, the weekly summary of 2025-12-19; its first try #29980 was reverted by
# #30653), taken as shipping from 0.14 like the other mid-December changes. It resolves the
# cache dtype when the engine config is made (vllm/utils/torch_utils.py
# resolve_kv_cache_dtype_string / get_kv_cache_quant_algo_string): only for `quant_method`
# modelopt*, from `kv_cache_scheme` (float, 8 bits) or `kv_cache_quant_algo` (FP8 ->
# fp8_e4m3). A compressed-tensors `kv_cache_scheme` is not read there: its scales wait for a
# cache the user selects (and a weight quantisation never selects one: the KV201 seed).
# vllm-project/vllm#34752 (open, 2026-02) reports an explicit `--kv-cache-dtype auto` falling
# back to the model dtype where leaving the flag out follows the checkpoint; the source read
# resolves both alike, and so does kvlint.
VLLM_CHECKPOINT_CACHE_DTYPE_SINCE = (0, 14)
_CHECKPOINT_CACHE_DTYPES = frozenset({"fp8", "fp8_e4m3"})


def vllm_checkpoint_cache_dtype(spec: ModelSpec, numbers: tuple[int, ...]) -> str | None:
    """The cache dtype `auto` means for ``spec`` at release ``numbers`` when the checkpoint
    declares one vLLM reads, else None (the model dtype)."""
    quant = spec.quantization
    if numbers < VLLM_CHECKPOINT_CACHE_DTYPE_SINCE or quant is None:
        return None
    if not quant.method.startswith("modelopt") or quant.kv_cache_dtype is None:
        return None
    declared = quant.kv_cache_dtype
    return "fp8_e4m3" if declared in _CHECKPOINT_CACHE_DTYPES else None
