"""Cache element types: one parser for every engine's cache dtype spelling, and what each costs.

vLLM stores fp8 caches as one byte per value; llama.cpp's quantised types store blocks of 32
values with a scale (``q8_0`` = 34 bytes per 32 values, see ggml's ``block_q8_0``); some vLLM
layouts add bytes per head vector (an inline scale, a norm). ``cache_types`` is the only place a
spelling (``fp8_e4m3``, ``q8_0``, ``turboquant_k8v4``, ``auto``) becomes storage: validation,
first principles, every engine's accounting, the rules and the solver all go through it.
"""

from __future__ import annotations

from kvlint.storage import CacheDtype
from kvlint.storage import CacheTypes


class UnknownCacheDtype(ValueError):
    """A spelling no engine uses for a cache dtype."""


class UnsizedCacheDtype(ValueError):
    """A cache dtype an engine accepts whose storage layout kvlint has not read: no figure is
    better than a guessed one."""


_F32 = CacheDtype("float32", 1, 4)
_F16 = CacheDtype("float16", 1, 2)
_BF16 = CacheDtype("bfloat16", 1, 2)
_FP8 = CacheDtype("fp8", 1, 1, quantised=True)


def _fp8(name: str) -> CacheDtype:
    return CacheDtype(name, 1, 1, quantised=True)


# Canonical storage by every spelling engines and configs use for one type for K and V alike.
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
    "fp8_e4m3": _fp8("fp8_e4m3"),
    "fp8_e5m2": _fp8("fp8_e5m2"),
    "fp8_inc": _fp8("fp8_inc"),
    "fp8_e4m3fn": _fp8("fp8_e4m3fn"),  # TGI's spelling (launcher/src/main.rs KVCacheDtype)
    # DeepSeek sparse MLA's fp8 latent: one byte a value; the 656-byte page per token (its
    # scales and the rope part in 16 bits) is the paging's (kvlint.engines.vllm.paging).
    "fp8_ds_mla": _fp8("fp8_ds_mla"),
    "int8": CacheDtype("int8", 1, 1, quantised=True),
    # vLLM's per-token-head modes: one byte a value and a float32 scale per (token, head) stored
    # after the head's values (vllm/v1/kv_cache_interface.py, the head row is head_size + 4
    # bytes); int4_per_token_head packs two values a byte with the same scale.
    "int8_per_token_head": CacheDtype("int8_per_token_head", 1, 1, True, head_bytes=4),
    "fp8_per_token_head": CacheDtype("fp8_per_token_head", 1, 1, True, head_bytes=4),
    "int4_per_token_head": CacheDtype("int4_per_token_head", 2, 1, True, head_bytes=4),
    # SGLang mxfp8: one byte a value and an 8-bit scale per 32 values.
    "mxfp8": CacheDtype("mxfp8", 32, 33, quantised=True),
    # NVFP4 (vLLM nvfp4, nvfp4_4over6 and MLA's nvfp4_ds_mla latent; SGLang nvfp4 and its
    # fp4_mx_block16 / deprecated fp4_e2m1): two values a byte and an fp8 scale per 16 values,
    # head_size // 2 + head_size // 16 bytes per head (vLLM nvfp4_kv_cache_full_dim).
    "nvfp4": CacheDtype("nvfp4", 16, 9, quantised=True),
    "nvfp4_4over6": CacheDtype("nvfp4_4over6", 16, 9, quantised=True),
    "nvfp4_ds_mla": CacheDtype("nvfp4_ds_mla", 16, 9, quantised=True),
    "fp4_mx_block16": CacheDtype("fp4_mx_block16", 16, 9, quantised=True),
    "fp4_e2m1": CacheDtype("fp4_e2m1", 16, 9, quantised=True),
    # llama.cpp / ggml block types (ggml/src/ggml-common.h).
    "q8_0": CacheDtype("q8_0", 32, 34, quantised=True),
    "q4_0": CacheDtype("q4_0", 32, 18, quantised=True),
    "q4_1": CacheDtype("q4_1", 32, 20, quantised=True),
    "iq4_nl": CacheDtype("iq4_nl", 32, 18, quantised=True),
    "q5_0": CacheDtype("q5_0", 32, 22, quantised=True),
    "q5_1": CacheDtype("q5_1", 32, 24, quantised=True),
}

# vLLM's TurboQuant presets (vllm/model_executor/layers/quantization/turboquant/config.py
# TQ_PRESETS): keys as fp8 (8 bits, no overhead) or Lloyd-Max indices of 3-4 bits plus an fp16
# norm per head vector; values as 3-4-bit uniform codes plus an fp16 scale and zero per vector.
# The slot (key + value) is rounded up to an even byte count, which it already is for every
# head size divisible by 4. The first and last two layers of a dense model that vLLM keeps at 16
# bits (TurboQuantConfig.get_boundary_skip_layers) are not modelled: they add a little.
_TURBOQUANT: dict[str, tuple[CacheDtype, CacheDtype]] = {
    "turboquant_k8v4": (
        _fp8("turboquant_k8v4 (fp8 keys)"),
        CacheDtype("turboquant_k8v4 (4-bit values)", 2, 1, True, head_bytes=4),
    ),
    "turboquant_4bit_nc": (
        CacheDtype("turboquant_4bit_nc (4-bit keys)", 2, 1, True, head_bytes=2),
        CacheDtype("turboquant_4bit_nc (4-bit values)", 2, 1, True, head_bytes=4),
    ),
    "turboquant_k3v4_nc": (
        CacheDtype("turboquant_k3v4_nc (3-bit keys)", 8, 3, True, head_bytes=2),
        CacheDtype("turboquant_k3v4_nc (4-bit values)", 2, 1, True, head_bytes=4),
    ),
    "turboquant_3bit_nc": (
        CacheDtype("turboquant_3bit_nc (3-bit keys)", 8, 3, True, head_bytes=2),
        CacheDtype("turboquant_3bit_nc (3-bit values)", 8, 3, True, head_bytes=4),
    ),
}

# Accepted by vLLM 0.33's --kv-cache-dtype, storage not read: sized by no one here.
_UNSIZED = frozenset({"octave_k3v4", "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit"})

AUTO = "auto"


def known_cache_dtypes() -> tuple[str, ...]:
    return (AUTO, *sorted({*_DTYPES, *_TURBOQUANT}))


def model_dtype_storage(model_dtype: str) -> CacheDtype:
    """What ``auto`` stores: the model dtype, 16-bit when the checkpoint itself is quantised (a
    checkpoint stored in fp8 still computes, and caches, in 16 bits). Never the weight
    quantisation: AWQ or INT4 weights leave a 16-bit cache."""
    found = _DTYPES.get(model_dtype.strip().lower())
    return _BF16 if found is None or found.quantised else found


def cache_dtype(name: str, model_dtype: str) -> CacheDtype:
    """The storage type one cache dtype setting gives K (and, but for TurboQuant, V)."""
    return cache_types(name, model_dtype).k


def cache_types(name: str, model_dtype: str, v_name: str | None = None) -> CacheTypes:
    """K, V and state storage for a cache dtype as any engine spells it (``v_name`` is
    llama.cpp's ``-ctv`` when it differs). Raises UnknownCacheDtype for a spelling no engine
    uses, UnsizedCacheDtype for one whose layout kvlint does not know."""
    state = model_dtype_storage(model_dtype)
    k, v = _pair(name, state)
    if v_name is not None:
        v = _pair(v_name, state)[1]
    return CacheTypes(k=k, v=v, state=state)


def _pair(name: str, auto: CacheDtype) -> tuple[CacheDtype, CacheDtype]:
    key = name.strip().lower()
    if key == AUTO:
        return auto, auto
    found = _DTYPES.get(key)
    if found is not None:
        return found, found
    if key in _TURBOQUANT:
        return _TURBOQUANT[key]
    if key in _UNSIZED:
        raise UnsizedCacheDtype(f"kvlint does not know how `{name}` is stored")
    raise UnknownCacheDtype(
        f"unknown cache dtype {name!r}; known: {', '.join(known_cache_dtypes())}"
    )
