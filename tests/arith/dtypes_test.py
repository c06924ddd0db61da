"""One parser for every engine's cache dtype spelling: what each stores per value and head."""

from __future__ import annotations

import pytest

from kvlint.arith.dtypes import UnknownCacheDtype
from kvlint.arith.dtypes import UnsizedCacheDtype
from kvlint.arith.dtypes import cache_dtype
from kvlint.arith.dtypes import cache_types


@pytest.mark.parametrize(
    ("name", "values", "expected_bytes"),
    [
        ("f16", 1024, 2048),
        ("bfloat16", 1024, 2048),
        ("fp8", 1024, 1024),
        ("fp8_e5m2", 1024, 1024),
        ("fp8_e4m3fn", 1024, 1024),  # TGI's spelling
        ("int8", 1024, 1024),
        ("f32", 1024, 4096),
        ("q8_0", 1024, 1088),  # 34 bytes per 32 values
        ("q4_0", 1024, 576),  # 18 bytes per 32 values
        ("q4_1", 1024, 640),
        ("iq4_nl", 1024, 576),
        ("q5_0", 1024, 704),
        ("q5_1", 1024, 768),
        ("mxfp8", 1024, 1056),  # SGLang: a byte a value, an 8-bit scale per 32
        ("nvfp4", 128, 72),  # head_size // 2 + head_size // 16
        ("fp4_mx_block16", 128, 72),
    ],
)
def test_block_overheads(name: str, values: int, expected_bytes: int) -> None:
    assert cache_dtype(name, "bfloat16").bytes_for(values) == expected_bytes


def test_auto_is_the_model_dtype_not_the_weight_quantisation() -> None:
    assert cache_dtype("auto", "float16").name == "float16"
    assert cache_dtype("auto", "bfloat16").name == "bfloat16"
    assert cache_dtype("auto", "fp8").name == "bfloat16"  # an fp8 checkpoint caches in 16 bits


def test_per_token_head_modes_carry_a_float32_scale_per_head() -> None:
    # 8 KV heads of 128: 1,024 one-byte values and 8 x 4 bytes of scales.
    assert cache_dtype("int8_per_token_head", "bfloat16").bytes_for(1024, 8) == 1024 + 32
    assert cache_dtype("fp8_per_token_head", "bfloat16").bytes_for(1024, 8) == 1024 + 32
    assert cache_dtype("int4_per_token_head", "bfloat16").bytes_for(1024, 8) == 512 + 32


@pytest.mark.parametrize(
    ("name", "slot"),
    [
        # TurboQuantConfig.slot_size at head_dim 128: key_packed_size + value_packed_size.
        ("turboquant_k8v4", 128 + (64 + 4)),
        ("turboquant_4bit_nc", (64 + 2) + (64 + 4)),
        ("turboquant_k3v4_nc", (48 + 2) + (64 + 4)),
        ("turboquant_3bit_nc", (48 + 2) + (48 + 4)),
    ],
)
def test_turboquant_stores_keys_and_values_apart(name: str, slot: int) -> None:
    types = cache_types(name, "bfloat16")
    assert types.k.bytes_for(128, 1) + types.v.bytes_for(128, 1) == slot
    assert types.state.name == "bfloat16"


def test_llamacpp_sets_v_apart() -> None:
    types = cache_types("q8_0", "bfloat16", "f16")
    assert (types.k.name, types.v.name) == ("q8_0", "float16")
    assert types.label == "k=q8_0,v=float16"


def test_a_layout_kvlint_has_not_read_is_refused_not_guessed() -> None:
    with pytest.raises(UnsizedCacheDtype, match="does not know how `octave_k3v4` is stored"):
        cache_types("octave_k3v4", "bfloat16")


def test_unknown_dtype_names_the_known_ones() -> None:
    with pytest.raises(UnknownCacheDtype, match="known: auto, bf16"):
        cache_dtype("awq", "bfloat16")
