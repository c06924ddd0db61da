"""KV102: a stated figure no correct computation gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from kvlint_rules.stated_kv_mismatch import StatedKvMismatch

from kvlint.deployment import Sourced
from kvlint.finding import Span
from testing.builders import LLAMA_31_8B
from testing.builders import MISTRAL_7B_V01
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.cli import run_cli

L8 = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")


def _stated(value: int, raw: str) -> Sourced[int]:
    return Sourced(value, Span("plan.yaml", 9, 17), raw)


def test_per_token_off_by_half() -> None:
    # Llama 3.1 8B: 2 x 32 x 8 x 128 x 2 = 128 KiB per token (seed 002).
    dep = deployment(
        gpu="L4", max_model_len=8192, claims={"kv_per_token": _stated(65536, "64 KiB")}
    )
    [p] = problems(StatedKvMismatch, dep, L8)
    assert p.message == (
        "`kv_per_token` 64 KiB matches no computation: Llama-3.1-8B-Instruct (32 layers x 8 KV "
        "heads x head_dim 128) caches 128 KiB per token at bfloat16 (the stated is 50% less)"
    )
    assert p.fix is not None and p.fix.title == "Set `kv_per_token` to 128 KiB"


def test_per_sequence_within_tolerance_and_either_reading_of_k() -> None:
    # 131,072 x 8,192 = 1.07 GB; "8k" read as 8,000 gives 1.05 GB: both within 5%.
    for context in (8192, 8000):
        claims = {"context": context, "kv_per_sequence": _stated(1_070_000_000, "1.07 GB")}
        dep = deployment(gpu="L4", max_model_len=8192, claims=claims)
        assert problems(StatedKvMismatch, dep, L8) == []


def test_per_sequence_too_big() -> None:
    claims = {"context": 8192, "kv_per_sequence": _stated(1_500_000_000, "1.5 GB")}
    [p] = problems(StatedKvMismatch, deployment(gpu="L4", max_model_len=8192, claims=claims), L8)
    assert p.message.endswith("caches 1.07 GB at 8192 tokens at bfloat16 (the stated is 40% more)")


def test_assumed_cache_dtype_not_configured() -> None:
    claims = {"kv_cache_dtype": "fp8", "kv_per_token": _stated(65536, "64 KiB")}
    [p] = problems(StatedKvMismatch, deployment(gpu="L4", claims=claims), L8)
    assert p.message == (
        "the plan assumes `kv_cache_dtype` `fp8` but `kv_cache_dtype` is `auto` (bfloat16): the "
        "cache is 128 KiB per token, not 64 KiB"
    )
    # With the setting in place the figure and the claim agree.
    dep = deployment(gpu="L4", kv_cache_dtype="fp8", claims=claims)
    assert problems(StatedKvMismatch, dep, L8) == []


def test_windowed_model_per_token_and_per_sequence() -> None:
    # Mistral 7B v0.1: every layer windowed at 4096. 2 x 32 x 8 x 128 x 2 B = 128 KiB per token
    # inside the window; a 32768-token sequence holds 4096 of them: 512 MiB, not 4 GiB.
    m7 = model(MISTRAL_7B_V01, "mistralai/Mistral-7B-v0.1")
    right = {"context": 32768, "kv_per_token": _stated(131072, "128 KiB")}
    assert problems(StatedKvMismatch, deployment(gpu="L4", claims=right), m7) == []
    naive = {"context": 32768, "kv_per_sequence": _stated(4 * 2**30, "4 GiB")}
    [p] = problems(StatedKvMismatch, deployment(gpu="L4", claims=naive), m7)
    assert p.message.endswith(
        "caches 512 MiB at 32768 tokens at bfloat16 (the stated is 8x the computed)"
    )


def test_correcting_a_stated_pool_is_a_safe_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 40 GiB / (16 tokens x 128 KiB) = 20,480 blocks = 327,680 tokens; a claim changes no
    # behaviour, so `--fix` alone rewrites it ([*], not [~]).
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "kvlint: plan/v1\nengine: vllm\nmodel: meta-llama/Llama-3.1-8B-Instruct\n"
        "gpu: H100-80GB\nsettings:\n  max-model-len: 8192\n  kv-cache-memory-bytes: 40G\n"
        "claims:\n  kv_pool_tokens: 1000000\n",
        encoding="utf-8",
    )
    result = run_cli(["check", str(plan), "--no-config", "--format", "concise"], capsys)
    assert (
        f"{plan}:9:19: KV102 [warning] [*] `kv_pool_tokens` 1,000,000 matches no computation"
        in result.out
    )
    run_cli(["check", str(plan), "--no-config", "--fix"], capsys)
    assert plan.read_text(encoding="utf-8").endswith("  kv_pool_tokens: 327680\n")
