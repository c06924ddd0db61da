from __future__ import annotations

import pytest

from kvlint.arith.dtypes import resolve_cache_dtype


@pytest.mark.parametrize(
    ("name", "values", "expected_bytes"),
    [
        ("f16", 1024, 2048),
        ("bfloat16", 1024, 2048),
        ("fp8", 1024, 1024),
        ("fp8_e5m2", 1024, 1024),
        ("int8", 1024, 1024),
        ("f32", 1024, 4096),
        ("q8_0", 1024, 1088),  # 34 bytes per 32 values
        ("q4_0", 1024, 576),  # 18 bytes per 32 values
        ("q4_1", 1024, 640),
        ("iq4_nl", 1024, 576),
        ("q5_0", 1024, 704),
        ("q5_1", 1024, 768),
    ],
)
def test_block_overheads(name: str, values: int, expected_bytes: int) -> None:
    assert resolve_cache_dtype(name, "bfloat16").bytes_for(values) == expected_bytes


def test_auto_is_the_model_dtype_not_the_weight_quantisation() -> None:
    assert resolve_cache_dtype("auto", "float16").name == "float16"
    assert resolve_cache_dtype("auto", "bfloat16").name == "bfloat16"


def test_unknown_dtype_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: auto, bf16"):
        resolve_cache_dtype("awq", "bfloat16")
