"""What rules may say about TensorRT-LLM without asking which engine it is."""

from __future__ import annotations

from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

# tensorrt_llm/llmapi/llm_args.py ``KvCacheConfig.dtype`` (NVIDIA/TensorRT-LLM at
# 0004396720054fd8e205cbf616f21f0b57c6b412): "auto" (the model dtype), "fp8", and "nvfp4" on
# Blackwell; the 16-bit names select the model's own width explicitly.
KV_CACHE_DTYPES = ("auto", "fp8", "nvfp4", "float16", "bfloat16")

FACTS = EngineFacts(
    name="trtllm",
    display="TensorRT-LLM",
    spellings=(
        ("max_num_seqs", "max_batch_size"),
        ("max_model_len", "max_seq_len"),
        ("max_num_batched_tokens", "max_num_tokens"),
        ("memory_fraction", "kv_cache_config.free_gpu_memory_fraction"),
        ("kv_cache_memory_bytes", "kv_cache_config.max_gpu_total_bytes"),
        ("kv_cache_dtype", "kv_cache_config.dtype"),
        ("tensor_parallel_size", "tp_size"),
        ("pipeline_parallel_size", "pp_size"),
        ("block_size", "tokens_per_block"),
    ),
    cache_8bit="fp8",
    cache_4bit="nvfp4",
    # The capacity scheduler admits max_batch_size requests against the paged pool
    # (GUARANTEED_NO_EVICT, trtllm-serve's default): a larger cap only queues them.
    pooled_admission=True,
    one_request_refusal="TensorRT-LLM cannot hold one full-length request",
    # Its FP8 KV cache kernels need Ada, Hopper or newer (compute capability 8.9+).
    fp8_cache_needs_sm89=True,
    fp8_cache_refusal=(
        "TensorRT-LLM's FP8 KV cache needs compute capability 8.9 or newer (Ada, Hopper, Blackwell)"
    ),
    tp_heads_refusal="",
    fraction_of_free=True,
    # The KV cache manager sizes an MLA layer as one latent head on every rank (kv_factor 1,
    # head_dim kv_lora_rank + qk_rope_head_dim, not divided by TP); attention data parallelism
    # gives each rank requests of its own instead.
    mla_copies_fix="Enable attention data parallelism (`enable_attention_dp: true`) instead of TP",
    cache_dtype_releases=(((0,), KV_CACHE_DTYPES),),
    # KV heads are duplicated when TP exceeds them (numKvHeads rounded up per rank). Its world
    # is tp_size x pp_size MPI ranks, one GPU each (Mapping.world_size); attention data
    # parallelism (enable_attention_dp) and expert parallelism run inside those ranks, so it
    # has no data-parallel ranks of its own taking further GPUs.
    parallel=ParallelRules("trtllm", data=False),
)
