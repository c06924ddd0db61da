"""Ollama: num_ctx x num_parallel cells; its cache types need flash attention."""

from __future__ import annotations

from kvlint.engines import estimate
from testing.builders import dense
from testing.builders import deployment

LLAMA_31_8B = dense()


def test_defaults_are_4096_tokens_one_slot_f16() -> None:
    est = estimate(deployment("ollama"), LLAMA_31_8B, None)
    assert est.kv_cache_tokens == 4096 and est.max_model_len == 4096
    assert est.kv_buffer_bytes == 4096 * 128 * 1024
    assert "default OLLAMA_CONTEXT_LENGTH 4096" in est.notes


def test_num_parallel_multiplies_the_cells() -> None:
    est = estimate(deployment("ollama", max_model_len=8192, max_num_seqs=4), LLAMA_31_8B, None)
    assert est.kv_cache_tokens == 32768 and est.max_model_len == 8192
    assert est.max_concurrency == 4.0


def test_q8_0_needs_flash_attention() -> None:
    # Before 0.30, flash attention is off for a llama model unless set: the cache falls back.
    old = deployment("ollama", kv_cache_dtype="q8_0", engine_version="0.11.4")
    without = estimate(old, LLAMA_31_8B, None)
    assert without.kv_buffer_bytes == 4096 * 128 * 1024  # fell back to f16
    # A file that names no release runs a current one: `--flash-attn auto` keeps q8_0.
    current = estimate(deployment("ollama", kv_cache_dtype="q8_0"), LLAMA_31_8B, None)
    assert current.kv_buffer_bytes == 4096 * 32 * 2 * 32 * 34
    with_fa = estimate(
        deployment("ollama", kv_cache_dtype="q8_0", env={"OLLAMA_FLASH_ATTENTION": "1"}),
        LLAMA_31_8B,
        None,
    )
    assert with_fa.kv_buffer_bytes == 4096 * 32 * 2 * 32 * 34
