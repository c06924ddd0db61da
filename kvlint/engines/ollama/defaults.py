"""What Ollama does when its environment is silent.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations

OLLAMA_CONTEXT_LENGTH = 4096  # OLLAMA_CONTEXT_LENGTH default (2048 before 0.6.4)
OLLAMA_NUM_PARALLEL = 1  # OLLAMA_NUM_PARALLEL default in current releases
OLLAMA_KV_CACHE_TYPE = "f16"  # OLLAMA_KV_CACHE_TYPE default; q8_0 / q4_0 need flash attention

# Flash attention when OLLAMA_FLASH_ATTENTION is not set. From 0.30 (ollama#16031, every GGML
# model through llama-server) Ollama passes `--flash-attn auto`, and llama.cpp turns it on for
# a quantised V cache. Before, it was off unless the model's architecture is one Ollama turns it
# on for itself (fs/ggml/ggml.go GGML.FlashAttention(), from 0.11.8; env default since 0.12.4,
# ollama#12473), and a quantised OLLAMA_KV_CACHE_TYPE without it was dropped for f16 ("quantized
# kv cache requires flash attention", llm/server.go). By GGUF architecture: (the last release
# read without it, the first read with it); between the two it is not known, and taken as on.
FLASH_AUTO_SINCE = (0, 30)
FLASH_BY_ARCHITECTURE: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "gptoss": ((0, 11, 7), (0, 11, 8)),
    "qwen3": ((0, 11, 7), (0, 11, 8)),
    "qwen3moe": ((0, 11, 7), (0, 11, 8)),
    "gemma3": ((0, 12, 4), (0, 12, 6)),
    "qwen3vl": ((0, 12, 6), (0, 12, 8)),
    "qwen3vlmoe": ((0, 12, 6), (0, 12, 8)),
    "mistral3": ((0, 13, 0), (0, 13, 2)),
    "olmo3": ((0, 13, 2), (0, 13, 4)),
    "bert": ((0, 13, 4), (0, 14, 0)),
    "glm4moelite": ((0, 14, 0), (0, 20, 0)),
    "lfm2": ((0, 14, 0), (0, 20, 0)),
    "lfm2moe": ((0, 14, 0), (0, 20, 0)),
    "nemotronh": ((0, 14, 0), (0, 20, 0)),
    "nemotronhmoe": ((0, 14, 0), (0, 20, 0)),
    "qwen35": ((0, 14, 0), (0, 20, 0)),
    "qwen35moe": ((0, 14, 0), (0, 20, 0)),
    "qwen3next": ((0, 14, 0), (0, 20, 0)),
}


def gguf_architecture(model_type: str) -> str:
    """The GGUF architecture name of a Hugging Face ``model_type`` (gpt_oss -> gptoss)."""
    return model_type.lower().removesuffix("_text").replace("_", "")


def flash_attention_default(release: tuple[int, ...], model_type: str) -> str:
    """What Ollama ``release`` runs a ``model_type`` model with when OLLAMA_FLASH_ATTENTION is
    not set: ``auto`` (llama.cpp decides; a quantised V cache turns it on), ``on`` or ``off``."""
    if release >= FLASH_AUTO_SINCE:
        return "auto"
    window = FLASH_BY_ARCHITECTURE.get(gguf_architecture(model_type))
    if window is None or release <= window[0]:
        return "off"
    return "on"
