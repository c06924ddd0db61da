"""KV305: the engine's pool far below what the same memory holds."""

from __future__ import annotations

from kvlint_rules.engine_pool_below_first_principles import EnginePoolBelowFirstPrinciples
from kvlint_rules.engine_pool_below_first_principles import Options

from kvlint.deployment import Sourced
from kvlint.finding import Span
from testing.builders import GEMMA3_27B
from testing.builders import LLAMA_31_8B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.builders import sized

G3 = model(GEMMA3_27B, "google/gemma-3-27b-it")


def test_hybrid_manager_disabled_names_the_switch() -> None:
    switch = Sourced(True, Span("plan.yaml", 3, 34), "true")
    dep = deployment(gpu="H100-80GB", max_model_len=32768, disable_hybrid_kv_cache_manager=switch)
    engine = sized(dep, G3).engine
    assert engine is not None and engine.kv_cache_tokens and engine.first_principles_tokens
    [p] = problems(EnginePoolBelowFirstPrinciples, dep, G3)
    assert p.span.line == 3
    assert p.message.endswith(
        "the hybrid KV cache manager is disabled, so the 52 sliding-window layers get blocks for "
        "every token (`disable_hybrid_kv_cache_manager`)"
    )
    assert f"requests of 32,768 tokens ({engine.kv_cache_tokens:,} tokens)" in p.message
    assert p.fix is not None and p.fix.edits[0].replacement == "false"


def test_dense_model_passes() -> None:
    l8 = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")
    assert (
        problems(
            EnginePoolBelowFirstPrinciples, deployment(gpu="H100-80GB", max_model_len=8192), l8
        )
        == []
    )


def test_bare_flag_has_no_edit() -> None:
    switch = Sourced(True, Span("pod.yaml", 9, 11), "--disable-hybrid-kv-cache-manager")
    dep = deployment(gpu="H100-80GB", max_model_len=32768, disable_hybrid_kv_cache_manager=switch)
    [p] = problems(EnginePoolBelowFirstPrinciples, dep, G3)
    assert p.fix is not None and p.fix.edits == ()


def test_ratio_option() -> None:
    dep = deployment(gpu="H100-80GB", max_model_len=32768, disable_hybrid_kv_cache_manager=True)
    rule = EnginePoolBelowFirstPrinciples(Options(ratio=0.1))
    assert list(rule.check(dep, sized(dep, G3))) == []
