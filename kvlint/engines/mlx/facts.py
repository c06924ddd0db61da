"""What rules may say about MLX (``mlx_lm.server``) without asking which engine it is."""

from __future__ import annotations

from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

# mlx-lm's quantised cache (``QuantizedKVCache``, ``--kv-bits``): mx.quantize takes 2, 3, 4,
# 5, 6 and 8 bits; the cache dtype is spelled as the bits (``auto``: the model dtype).
KV_BITS = ("2", "3", "4", "5", "6", "8")

FACTS = EngineFacts(
    name="mlx",
    display="MLX",
    spellings=(
        ("max_num_seqs", "decode_concurrency"),
        ("kv_cache_dtype", "kv_bits"),
        # What KV303 calls the memory an engine may plan with: on a Mac, the GPU working set.
        ("memory_fraction", "GPU working set share"),
    ),
    cache_8bit="8",
    cache_4bit="4",
    default_cache_dtype="auto",
    # The BatchGenerator decodes up to --decode-concurrency sequences, each cache growing as
    # it goes: nothing checks memory first, so a cap above what fits runs out of it.
    pooled_admission=True,
    one_request_refusal="MLX runs out of GPU working set for one full-length session",
    fixed_weights="mlx-lm loads the bundle's MLX quantisation (4-, 6- or 8-bit), not these",
    cache_dtype_releases=(((0,), ("auto", *KV_BITS)),),
    # One process, one device: mlx-lm's distributed mode (mlx.launch, --pipeline) is not
    # modelled, so TP and PP stay 1.
    vendors=("apple",),
    parallel=ParallelRules("MLX", tensor=False, pipeline=False),
)
