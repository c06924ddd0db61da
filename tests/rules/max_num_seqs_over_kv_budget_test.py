"""KV301: more sequences than the pool admits at full length."""

from __future__ import annotations

from kvlint_rules.max_num_seqs_over_kv_budget import MaxNumSeqsOverKvBudget

from kvlint.finding import Applicability
from kvlint.units import format_bytes
from testing.builders import LLAMA_31_8B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.builders import sized

L8 = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")
PER_SEQ = 2 * 32 * 8 * 128 * 2 * 8192  # 128 KiB x 8192 = 1,073,741,824 B = 1 GiB


def test_max_num_seqs_above_pool() -> None:
    dep = deployment(gpu="H100-80GB", max_model_len=8192, max_num_seqs=256)
    engine = sized(dep, L8).engine
    assert engine is not None and engine.available_kv_bytes is not None
    admitted = engine.available_kv_bytes // PER_SEQ
    assert admitted == int(engine.max_concurrency or 0)
    pool = f"{format_bytes(engine.available_kv_bytes)} ({engine.kv_cache_tokens:,} tokens)"
    [p] = problems(MaxNumSeqsOverKvBudget, dep, L8)
    assert p.message == (
        "`max_num_seqs` 256 needs 256 GiB of KV cache if every request used all 8,192 tokens of "
        f"`max_model_len` (1 GiB each); the pool holds {pool}, enough for {admitted}"
    )
    assert engine.cap_length is not None
    assert p.fix is not None and p.fix.title == (
        f"Lower `max_num_seqs` to {admitted}, or `max_model_len` to {engine.cap_length:,} "
        "(where 256 fit)"
    )
    assert p.fix.applicability is Applicability.UNSAFE
    assert p.fix.edits[0].replacement == str(admitted)
    assert ("requested", "256") in p.numbers


def test_fits_and_default_cap_pass() -> None:
    assert (
        problems(
            MaxNumSeqsOverKvBudget,
            deployment(gpu="H100-80GB", max_model_len=8192, max_num_seqs=32),
            L8,
        )
        == []
    )
    # vLLM's default of 1024 is not the user's promise: no finding without an explicit cap.
    assert (
        problems(MaxNumSeqsOverKvBudget, deployment(gpu="H100-80GB", max_model_len=8192), L8) == []
    )


def test_plan_concurrency_over_four_gpus_at_claimed_context() -> None:
    claims = {"concurrency": 256, "context": 32768}
    dep = deployment(gpu="H100-80GB", gpu_count=4, max_model_len=8192, claims=claims)
    [p] = problems(MaxNumSeqsOverKvBudget, dep, L8)
    # 256 x 4 GiB = 1 TiB at 32768 tokens (128 KiB x 32768 = 4 GiB each).
    assert p.message.startswith(
        "`concurrency` 256 needs 1 TiB of KV cache at `context` 32,768 (4 GiB each)"
    )


def test_no_gpu_no_finding() -> None:
    assert (
        problems(MaxNumSeqsOverKvBudget, deployment(max_model_len=8192, max_num_seqs=256), L8) == []
    )
