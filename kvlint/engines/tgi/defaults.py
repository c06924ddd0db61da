"""What TGI's text-generation-launcher does when a file is silent.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations

TGI_WIGGLE_ROOM = 0.90  # TGI_WIGGLE_ROOM env default (server/.../flash_causal_lm.py)
TGI_CUDA_MEMORY_FRACTION = 1.0  # --cuda-memory-fraction default
TGI_MAX_CONCURRENT_REQUESTS = 128
TGI_PREFILL_TOKENS = 4096  # --max-batch-prefill-tokens fallback


def tgi_block_size(attention: str | None) -> int:
    """``BLOCK_SIZE`` by attention backend (``server/text_generation_server/models/globals.py``):
    flashdecoding 256, flashinfer 1 (the default on CUDA in TGI 3), flashdecoding-ipex 64,
    paged 16."""
    backend = (attention or "flashinfer").lower()
    return {"flashdecoding": 256, "flashinfer": 1, "flashdecoding-ipex": 64}.get(backend, 16)
