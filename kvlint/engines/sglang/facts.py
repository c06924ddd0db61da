"""What rules may say about SGLang without asking which engine it is."""

from __future__ import annotations

from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

# sglang/srt/arg_groups/fields/model.py (0.5.23); older releases accepted fp8_e5m2/fp8_e4m3 only.
KV_CACHE_DTYPES = (
    "auto",
    "fp8_e5m2",
    "fp8_e4m3",
    "mxfp8",
    "bf16",
    "bfloat16",
    "nvfp4",
    "fp4_mx_block16",
    "fp4_e2m1",
)

FACTS = EngineFacts(
    name="sglang",
    display="SGLang",
    spellings=(
        ("max_num_seqs", "max_running_requests"),
        ("max_model_len", "context_length"),
        ("memory_fraction", "mem_fraction_static"),
        ("tensor_parallel_size", "tp_size"),
        ("pipeline_parallel_size", "pp_size"),
        ("data_parallel_size", "dp_size"),
        ("hf_overrides", "json_model_override_args"),
    ),
    cache_8bit="fp8_e4m3",
    cache_4bit="nvfp4",
    long_context_switch="SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN",
    one_request_refusal="SGLang cannot hold one full-length request",
    pooled_admission=True,
    # 0.5.23's argparse still lists fp4_e2m1, but configure_kv_cache_dtype raises
    # "--kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16."
    cache_dtype_releases=(((0,), tuple(d for d in KV_CACHE_DTYPES if d != "fp4_e2m1")),),
    parallel=ParallelRules("sglang"),
)
