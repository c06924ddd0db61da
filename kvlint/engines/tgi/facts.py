"""What rules may say about Hugging Face TGI without asking which engine it is."""

from __future__ import annotations

from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

KV_CACHE_DTYPES = ("fp8_e4m3fn", "fp8_e5m2")

FACTS = EngineFacts(
    name="tgi",
    display="TGI",
    spellings=(
        ("max_num_seqs", "max_concurrent_requests"),
        ("max_model_len", "max_total_tokens"),
        ("memory_fraction", "cuda_memory_fraction"),
        ("tensor_parallel_size", "num_shard"),
    ),
    cache_8bit="fp8_e4m3fn",
    one_request_refusal="TGI cannot hold one full-length request",
    cache_dtype_releases=(((0,), KV_CACHE_DTYPES),),
    parallel=ParallelRules(
        "TGI",
        pipeline=False,
        replicates_kv_heads=False,
        data=False,
        shards_over_visible_gpus=True,
    ),
)
