"""KV201: the cache taken to follow the weights' quantisation."""

from __future__ import annotations

from kvlint_rules.weight_quant_as_cache_quant import WeightQuantAsCacheQuant

from kvlint.deployment import Sourced
from kvlint.engines import facts
from kvlint.finding import Span
from kvlint.sizing import Sizing
from testing.builders import AWQ
from testing.builders import LLAMA_31_70B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems

AWQ70 = model({**LLAMA_31_70B, **AWQ}, "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")


def test_int4_cache_assumed_from_awq_weights() -> None:
    dep = deployment(gpu="H100-80GB", tensor_parallel_size=2, claims={"kv_cache_dtype": "int4"})
    [p] = problems(WeightQuantAsCacheQuant, dep, AWQ70)
    assert p.message == (
        "the plan assumes `kv_cache_dtype` `int4`, the weights' precision (AWQ 4-bit), but "
        "`kv_cache_dtype` is `auto`: the cache stays bfloat16, 320 KiB per token, not 80 KiB (4x)"
    )
    assert p.fix is not None and p.fix.title == "Set `kv_cache_dtype: fp8`"


def test_per_token_figure_at_weight_precision() -> None:
    stated = Sourced(81920, Span("plan.yaml", 9, 17), "80 KiB")
    dep = deployment(gpu="H100-80GB", tensor_parallel_size=2, claims={"kv_per_token": stated})
    [p] = problems(WeightQuantAsCacheQuant, dep, AWQ70)
    assert p.message == (
        "`kv_per_token` 80 KiB is the cache at the weights' precision (AWQ 4-bit); with "
        "`kv_cache_dtype` `auto` the cache is bfloat16: 320 KiB per token (4x)"
    )


def test_fp8_cache_configured_passes() -> None:
    dep = deployment(
        gpu="H100-80GB",
        tensor_parallel_size=2,
        kv_cache_dtype="fp8",
        claims={"kv_cache_dtype": "fp8"},
    )
    assert problems(WeightQuantAsCacheQuant, dep, AWQ70) == []


def test_weight_format_as_cache_dtype() -> None:
    dep = deployment()
    # The reader keeps a weight format the engine does not list out of the cache field.
    dep.weight_format_cache["kv_cache_dtype"] = Sourced("awq", Span("plan.yaml", 4, 17), "awq")
    # The setting is reported before any sizing (an engine cannot size a cache dtype it
    # rejects): with the engine's facts only, as when the model is unknown.
    unsized = Sizing(AWQ70, None, None, None, facts=facts("vllm"))
    [p] = WeightQuantAsCacheQuant().check(dep, unsized)
    assert p.message == (
        "`kv_cache_dtype` `awq` is the weights' quantisation, not a cache dtype: vLLM refuses "
        "it; the cache stays 16-bit unless `kv_cache_dtype` names a cache dtype such as `fp8`"
    )
