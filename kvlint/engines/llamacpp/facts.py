"""What rules may say about llama.cpp's llama-server without asking which engine it is."""

from __future__ import annotations

from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

# common/arg.cpp kv_cache_types
CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")

FACTS = EngineFacts(
    name="llamacpp",
    display="llama.cpp",
    spellings=(
        ("max_num_seqs", "parallel"),
        ("max_model_len", "ctx_size"),
        ("kv_cache_dtype", "cache_type_k"),
        ("kv_cache_dtype_v", "cache_type_v"),
        ("flash_attention", "flash_attn"),
        ("n_gpu_layers", "n_gpu_layers"),
    ),
    cache_8bit="q8_0",
    cache_4bit="q4_0",
    default_cache_dtype="f16",
    v_cache_dtype_apart=True,
    pool_is_cells=True,
    context_spans_slots=True,
    fixed_weights="llama.cpp loads GGUF quantisations (Q8_0, Q4_K_M), not these",
    one_request_refusal="llama.cpp fails to allocate its KV buffer",
    # GGML_PAD(n_ctx, 256) in src/llama-context.cpp
    length_granularity=256,
    quantised_v_without_flash="refuses",
    offloads_layers=True,
    cache_dtype_releases=(((0,), CACHE_TYPES),),
    vendors=("nvidia", "amd", "apple"),
    parallel=ParallelRules("llamacpp", tensor=False),
)
