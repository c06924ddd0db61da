"""KV302: one sequence of max_model_len does not fit."""

from __future__ import annotations

from kvlint_rules.max_model_len_exceeds_kv_pool import MaxModelLenExceedsKvPool

from testing.builders import LLAMA_31_70B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.builders import sized

L70 = model(LLAMA_31_70B, "meta-llama/Llama-3.1-70B-Instruct")


def test_full_context_on_two_h100s() -> None:
    dep = deployment(
        gpu="H100-80GB", tensor_parallel_size=2, max_model_len=131072, memory_fraction=0.95
    )
    engine = sized(dep, L70).engine
    assert engine is not None and engine.available_kv_bytes and engine.estimated_max_model_len
    # Per GPU at TP 2: 80 layers x 4 KV heads x 128 x 2 x 2 B = 160 KiB/token; x 131072 = 20 GiB.
    available = f"{engine.available_kv_bytes / 2**30:.2f} GiB"
    [p] = problems(MaxModelLenExceedsKvPool, dep, L70)
    assert p.span.line == 3
    assert p.message == (
        "`max_model_len` 131072 needs 20.00 GiB of KV cache for one request, more than the "
        f"{available} available per GPU: vLLM will refuse to start; the largest `max_model_len` "
        f"that fits is {engine.estimated_max_model_len}"
    )
    assert p.fix is not None
    assert p.fix.title == f"Lower `max_model_len` to {engine.estimated_max_model_len}"


def test_shorter_context_fits() -> None:
    dep = deployment(
        gpu="H100-80GB", tensor_parallel_size=2, max_model_len=16384, memory_fraction=0.95
    )
    assert problems(MaxModelLenExceedsKvPool, dep, L70) == []
