"""What rules may say about Ollama without asking which engine it is."""

from __future__ import annotations

from kvlint.settled import EngineFacts
from kvlint.settled import ParallelRules

# OLLAMA_KV_CACHE_TYPE (envconfig): the llama.cpp types Ollama passes through.
KV_CACHE_TYPES = ("f16", "q8_0", "q4_0")

FACTS = EngineFacts(
    name="ollama",
    display="Ollama",
    spellings=(
        ("max_num_seqs", "OLLAMA_NUM_PARALLEL"),
        ("max_model_len", "OLLAMA_CONTEXT_LENGTH"),
        ("kv_cache_dtype", "OLLAMA_KV_CACHE_TYPE"),
        ("flash_attention", "OLLAMA_FLASH_ATTENTION"),
    ),
    cache_8bit="q8_0",
    cache_4bit="q4_0",
    default_cache_dtype="f16",
    pool_is_cells=True,
    # Ollama runs llama.cpp on the GGUF it pulled.
    fixed_weights="llama.cpp loads GGUF quantisations (Q8_0, Q4_K_M), not these",
    one_request_refusal="Ollama cannot hold one full-length request",
    quantised_v_without_flash="falls back",
    # ollama#16031: -ctk/-ctv and --flash-attn off go to llama-server, which refuses the pair.
    quantised_v_refused_from=(0, 30),
    cache_dtype_releases=(((0,), KV_CACHE_TYPES),),
    # llm/server.go before 0.30 drops a type it does not support ("unsupported
    # OLLAMA_KV_CACHE_TYPE"); 0.30 (ollama#16031) hands it to llama-server as --cache-type-k/v,
    # which exits on it.
    unlisted_cache_dtype_ignored_before=(0, 30),
    vendors=("nvidia", "amd", "apple"),
    parallel=ParallelRules("ollama", tensor=False, pipeline=False),
)
