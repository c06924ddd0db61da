"""KV202: cache dtypes the engine version or GPU cannot use."""

from __future__ import annotations

from kvlint_rules.unsupported_kv_cache_dtype import UnsupportedKvCacheDtype

from testing.builders import LLAMA_31_8B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems

L8 = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")


def test_dtype_vllm_011_does_not_list() -> None:
    dep = deployment(kv_cache_dtype="nvfp4", engine_version="v0.11.0")
    [p] = problems(UnsupportedKvCacheDtype, dep, L8)
    assert p.message == (
        "`kv_cache_dtype` `nvfp4` is not a cache dtype vLLM 0.11.0 accepts, so it will refuse to "
        "start; valid: auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc"
    )
    assert p.fix is not None and p.fix.title == "Set `kv_cache_dtype: auto`"
    # The current release lists it.
    assert problems(UnsupportedKvCacheDtype, deployment(kv_cache_dtype="nvfp4"), L8) == []


def test_llamacpp_unknown_type() -> None:
    dep = deployment("llamacpp", kv_cache_dtype="q6_0")
    [p] = problems(UnsupportedKvCacheDtype, dep, L8)
    assert p.message.startswith("`cache_type_k` `q6_0` is not a cache dtype llama.cpp accepts")


def test_fp8_e4m3_on_ampere() -> None:
    [p] = problems(UnsupportedKvCacheDtype, deployment(kv_cache_dtype="fp8", gpu="A100-80GB"), L8)
    assert p.message == (
        "`kv_cache_dtype` `fp8` is fp8 e4m3, which the NVIDIA A100-SXM4-80GB (compute capability "
        "8.0) cannot store: vLLM's kernels need 8.9 or newer and fail with \"type fp8e4nv not "
        'supported in this architecture"'
    )
    assert p.fix is not None and p.fix.edits[0].replacement == "auto"
    assert problems(UnsupportedKvCacheDtype, deployment(kv_cache_dtype="fp8", gpu="L4"), L8) == []
    dep = deployment(kv_cache_dtype="fp8_e5m2", gpu="A100-80GB")
    assert problems(UnsupportedKvCacheDtype, dep, L8) == []


def test_quantised_v_without_flash_attention() -> None:
    dep = deployment(
        "llamacpp", kv_cache_dtype="q8_0", kv_cache_dtype_v="q8_0", flash_attention="off"
    )
    [p] = problems(UnsupportedKvCacheDtype, dep, L8)
    assert p.span.line == 2  # the V type: the value to change
    assert p.message == (
        "`cache_type_v` `q8_0` is a quantised V cache, which needs flash attention, but "
        '`flash_attn` is `off`: llama.cpp refuses to create the context ("quantized V cache '
        'requires flash_attn to be enabled")'
    )
    assert p.fix is not None and [(e.span.line, e.replacement) for e in p.fix.edits] == [(3, "on")]
    auto = deployment("llamacpp", kv_cache_dtype_v="q8_0", flash_attention="auto")
    assert problems(UnsupportedKvCacheDtype, auto, L8) == []
    k_only = deployment("llamacpp", kv_cache_dtype="q8_0", flash_attention="off")
    assert problems(UnsupportedKvCacheDtype, k_only, L8) == []
