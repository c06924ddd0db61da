"""The message helpers shared by the KV1xx-KV4xx rules (rules/_numbers.py)."""

from __future__ import annotations

from kvlint_rules import _numbers as n
from kvlint_rules import _stated


def test_sizes_in_one_system_with_three_figures() -> None:
    assert n.gb(1_073_741_824) == "1.07 GB"  # Llama 3.1 8B at 8192 tokens
    assert n.gb(41.2e9) == "41.2 GB"
    assert n.gb(256 * 1_073_741_824) == "274.9 GB"
    assert n.gib(327_680) == "320 KiB"  # Llama 3.1 70B per token
    assert n.gib(2_621_440) == "2.5 MiB"  # its cancelled form
    assert n.gib2(20 * 2**30) == "20.00 GiB"  # vLLM's format_gib


def test_like_follows_the_stated_unit_system() -> None:
    assert n.like("2.5 MiB", 327_680) == "320 KiB"
    assert n.like("21 GB", 2_621_440_000) == "2.62 GB"
    assert n.like(None, 327_680) == "327680"
    assert n.like("327680", 2_621_440) == "2621440"


def test_ratio_and_percent() -> None:
    assert n.ratio(2_621_440, 327_680) == "8x"
    assert n.ratio(3, 2) == "1.5x"
    assert n.percent_off(65_536, 131_072) == "50% less"
    assert n.percent_off(1_000_000, 327_680) == "3.1x the computed"


def test_contexts_read_k_both_ways() -> None:
    assert _stated.contexts(8192) == (8192, 8000)
    assert _stated.contexts(128_000) == (128_000, 131_072)
    assert _stated.contexts(5000) == (5000, 5120)
    assert _stated.contexts(32768) == (32768, 32000)
    assert _stated.contexts(4097) == (4097,)


def test_weight_formats() -> None:
    for name in ("awq", "GPTQ", "int4", "q4_K_M", "w4a16", "bitsandbytes"):
        assert _stated.is_weight_format(name), name
    # llama.cpp's cache types are weight types too: never a weight format here.
    for name in ("fp8", "q8_0", "q4_0", "q5_1", "iq4_nl", "auto", "bfloat16", "fp8_e5m2"):
        assert not _stated.is_weight_format(name), name
