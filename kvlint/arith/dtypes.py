"""Cache element types: how many bytes a block of values takes, for every engine's spelling.

vLLM stores fp8 caches as one byte per value; llama.cpp's quantised types store blocks of 32
values with a scale (``q8_0`` = 34 bytes per 32 values, see ggml's ``block_q8_0``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CacheDtype:
    """A storage type: ``block_bytes`` bytes hold ``block_values`` values."""

    name: str
    block_values: int
    block_bytes: int
    quantised: bool = False

    def bytes_for(self, values: int) -> int:
        """Bytes to store ``values`` values (whole blocks, as ggml rows are laid out)."""
        blocks = -(-values // self.block_values)
        return blocks * self.block_bytes

    @property
    def bits_per_value(self) -> float:
        return 8 * self.block_bytes / self.block_values


_F32 = CacheDtype("float32", 1, 4)
_F16 = CacheDtype("float16", 1, 2)
_BF16 = CacheDtype("bfloat16", 1, 2)
_FP8 = CacheDtype("fp8", 1, 1, quantised=True)

# Canonical types by every spelling engines and configs use.
_DTYPES: dict[str, CacheDtype] = {
    "float32": _F32,
    "fp32": _F32,
    "f32": _F32,
    "float": _F32,
    "float16": _F16,
    "fp16": _F16,
    "f16": _F16,
    "half": _F16,
    "bfloat16": _BF16,
    "bf16": _BF16,
    "fp8": _FP8,
    "fp8_e4m3": CacheDtype("fp8_e4m3", 1, 1, quantised=True),
    "fp8_e5m2": CacheDtype("fp8_e5m2", 1, 1, quantised=True),
    "fp8_inc": CacheDtype("fp8_inc", 1, 1, quantised=True),
    "int8": CacheDtype("int8", 1, 1, quantised=True),
    # vLLM nvfp4: head_size // 2 data bytes + head_size // 16 scale bytes per head.
    "nvfp4": CacheDtype("nvfp4", 16, 9, quantised=True),
    # llama.cpp / ggml block types (ggml/src/ggml-common.h).
    "q8_0": CacheDtype("q8_0", 32, 34, quantised=True),
    "q4_0": CacheDtype("q4_0", 32, 18, quantised=True),
    "q4_1": CacheDtype("q4_1", 32, 20, quantised=True),
    "iq4_nl": CacheDtype("iq4_nl", 32, 18, quantised=True),
    "q5_0": CacheDtype("q5_0", 32, 22, quantised=True),
    "q5_1": CacheDtype("q5_1", 32, 24, quantised=True),
}

AUTO = "auto"


def known_cache_dtypes() -> tuple[str, ...]:
    return (AUTO, *sorted(_DTYPES))


def resolve_cache_dtype(name: str, model_dtype: str) -> CacheDtype:
    """The storage type of a cache dtype setting; ``auto`` is the model dtype.

    ``auto`` never follows the weight quantisation: AWQ or INT4 weights leave a 16-bit cache.
    Raises ValueError naming the known types.
    """
    key = name.strip().lower()
    if key == AUTO:
        key = model_dtype.strip().lower()
        if key not in _DTYPES or _DTYPES[key].quantised:
            key = "bfloat16"  # a checkpoint stored in fp8 still computes, and caches, in 16 bit
    try:
        return _DTYPES[key]
    except KeyError:
        raise ValueError(
            f"unknown cache dtype {name!r}; known: {', '.join(known_cache_dtypes())}"
        ) from None
