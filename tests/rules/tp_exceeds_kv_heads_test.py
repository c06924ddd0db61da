"""KV304: tensor parallelism above or across the head counts."""

from __future__ import annotations

from kvlint_rules.tp_exceeds_kv_heads import TpExceedsKvHeads

from kvlint.finding import Severity
from testing.builders import LLAMA_31_70B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems

L70 = model(LLAMA_31_70B, "meta-llama/Llama-3.1-70B-Instruct")


def test_tp_not_dividing_heads_is_refused() -> None:
    [p] = problems(TpExceedsKvHeads, deployment(gpu="H100-80GB", tensor_parallel_size=6), L70)
    assert p.severity is Severity.ERROR
    assert p.message == (
        "`tensor_parallel_size` 6 does not divide the 64 attention heads of "
        'Llama-3.1-70B-Instruct: vLLM will refuse to start ("Total number of attention heads '
        '(64) must be divisible by tensor parallel size (6).")'
    )
    assert p.fix is not None and p.fix.title == "Set `tensor_parallel_size` to 4"


def test_replicated_kv_heads_cost() -> None:
    dep = deployment(gpu="H100-80GB", tensor_parallel_size=16, max_model_len=131072)
    [p] = problems(TpExceedsKvHeads, dep, L70)
    assert p.severity is None  # the rule's warning
    # One KV head per GPU: 80 x 1 x 128 x 2 x 2 B = 40 KiB per token; x 16 GPUs x 131072
    # tokens = 80 GiB, against 320 KiB x 131072 = 40 GiB without replication.
    assert p.message == (
        "`tensor_parallel_size` 16 is above the 8 KV heads of Llama-3.1-70B-Instruct: each KV "
        "head is stored on 2 GPUs, so the cache per GPU stops shrinking at 40 KiB per token; a "
        "131,072-token sequence takes 80 GiB over the 16 GPUs instead of 40 GiB (40 GiB more)"
    )


def test_tp_equal_to_kv_heads_passes() -> None:
    assert (
        problems(TpExceedsKvHeads, deployment(gpu="H100-80GB", tensor_parallel_size=8), L70) == []
    )
