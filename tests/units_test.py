from __future__ import annotations

import pytest

from kvlint.units import format_band
from kvlint.units import format_binary
from kvlint.units import format_decimal
from kvlint.units import parse_human_int
from kvlint.units import parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("320 KiB", 327_680),
        ("2.62 GB", 2_620_000_000),
        ("2.5MiB", 2_621_440),
        ("8G", 8 * 1024**3),
        ("8g", 8 * 10**9),
        ("1024", 1024),
        (4096, 4096),
        ("10 B", 10),
    ],
)
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["lots", "3 parsecs", "-1 GB", "nan", True])
def test_parse_size_rejects(text: str | bool) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("32k", 32_000), ("32K", 32_768), ("25.6k", 25_600), ("1M", 1_048_576), ("8192", 8192)],
)
def test_parse_human_int_as_vllm_reads_it(text: str, expected: int) -> None:
    assert parse_human_int(text) == expected


def test_binary_suffix_refuses_decimals_like_vllm() -> None:
    with pytest.raises(ValueError, match=r"did you mean 25\.6k"):
        parse_human_int("25.6K")


def test_formatting_never_mixes_systems() -> None:
    assert format_binary(327_680) == "320 KiB"
    assert format_binary(2_621_440) == "2.5 MiB"
    assert format_decimal(327_680 * 32_000) == "10.49 GB"
    assert format_decimal(512) == "512 B"


def test_a_band_reads_in_one_unit_its_high_ends() -> None:
    gib = 2**30
    assert format_band(0.24 * gib, 17.09 * gib) == "0.24-17.09 GiB"
    assert format_band(0, 3.21 * gib) == "0.00-3.21 GiB"
    assert format_band(200 * 2**20, 900 * 2**20) == "200.00-900.00 MiB"
