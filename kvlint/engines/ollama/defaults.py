"""What Ollama does when its environment is silent.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations

OLLAMA_CONTEXT_LENGTH = 4096  # OLLAMA_CONTEXT_LENGTH default (2048 before 0.6.4)
OLLAMA_NUM_PARALLEL = 1  # OLLAMA_NUM_PARALLEL default in current releases
OLLAMA_KV_CACHE_TYPE = "f16"  # OLLAMA_KV_CACHE_TYPE default; q8_0 / q4_0 need flash attention
