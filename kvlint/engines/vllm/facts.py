"""What rules may say about vLLM without asking which engine it is."""

from __future__ import annotations

from kvlint.engines.vllm import defaults as D
from kvlint.engines.vllm.errors import WORLD_SIZE
from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

# vllm/config/cache.py CacheDType (research/engines.md 1f): 0.11.0's, and 0.33.0's superset.
KV_CACHE_DTYPES_0_11 = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")

KV_CACHE_DTYPES = (
    *KV_CACHE_DTYPES_0_11,
    *("float16", "fp8_ds_mla", "nvfp4_ds_mla", "turboquant_k8v4", "turboquant_4bit_nc"),
    *("turboquant_k3v4_nc", "turboquant_3bit_nc", "octave_k3v4", "octave_k3v3"),
    *("octave_k3v3_compact", "ultraquant_4bit", "int4_per_token_head", "int8_per_token_head"),
    *("fp8_per_token_head", "nvfp4", "nvfp4_4over6"),
)

FACTS = EngineFacts(
    name="vllm",
    display="vLLM",
    spellings=(("memory_fraction", "gpu_memory_utilization"),),
    cache_8bit="fp8",
    long_context_switch="VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    one_request_refusal="vLLM will refuse to start",
    pooled_admission=True,
    cache_dtype_releases=(((0,), KV_CACHE_DTYPES_0_11), ((0, 12), KV_CACHE_DTYPES)),
    # 0.11 starts with float16 too, although its CacheDType does not list it.
    unlisted_cache_dtypes=("float16",),
    fp8_cache_needs_sm89=True,
    cache_4bit="nvfp4",
    # 0.11 sizes differently (no CUDA-graph term, two capacity lines): the solver shows both.
    compared_releases=((None, "vLLM (current)"), ("0.11.0", "vLLM 0.11")),
    parallel=ParallelRules("vllm"),
    world_size_refusal=WORLD_SIZE,
    # The newest release of each line before the current one whose memory accounting differs
    # (kvlint/engines/vllm/memory.py LINES): 0.11-0.20 charge no CUDA graphs, 0.8-0.10 charge
    # the CUDA context and NCCL as non-torch memory and sample without FlashInfer.
    version_lines=("0.20.2", "0.10.2"),
    mla_full_kv_release=D.VLLM_NEWEST_WITHOUT_MLA,
)
