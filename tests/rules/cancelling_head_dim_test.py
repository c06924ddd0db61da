"""KV101: the cancelled formula in a stated figure or a head_dim override."""

from __future__ import annotations

from kvlint_rules.cancelling_head_dim import CancellingHeadDim

from kvlint.deployment import Sourced
from kvlint.finding import Applicability
from kvlint.finding import Span
from testing.builders import LLAMA_31_70B
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems

L70 = model(LLAMA_31_70B, "meta-llama/Llama-3.1-70B-Instruct")
AT = Span("plan.yaml", 12, 17)


def _stated(value: int, raw: str) -> Sourced[int]:
    return Sourced(value, AT, raw)


def test_cancelled_per_token_figure() -> None:
    # 2 x 80 x 8192 x 2 = 2,621,440 B = 2.5 MiB (seed 001); GQA: 2 x 80 x 8 x 128 x 2 = 320 KiB.
    dep = deployment(
        gpu="H100-80GB", max_model_len=32768, claims={"kv_per_token": _stated(2621440, "2.5 MiB")}
    )
    [p] = problems(CancellingHeadDim, dep, L70)
    assert p.span == AT
    assert p.message == (
        "`kv_per_token` 2.5 MiB is the cancelled formula 2 x 80 layers x 8192 hidden x 2 bytes "
        "(head_dim taken as d_model / KV heads); Llama-3.1-70B-Instruct caches 320 KiB per token, "
        "8x less (64 query heads / 8 KV heads)"
    )
    assert p.fix is not None
    assert p.fix.title == "Set `kv_per_token` to 320 KiB"
    assert p.fix.applicability is Applicability.SAFE
    assert [e.replacement for e in p.fix.edits] == ["320 KiB"]


def test_cancelled_per_sequence_in_decimal_units() -> None:
    # The seed's "about 21 GB per sequence at 8K": 2,621,440 x 8,000 = 20.97 GB; right: 2.62 GB.
    dep = deployment(
        gpu="H100-80GB",
        max_model_len=8192,
        claims={"context": 8000, "kv_per_sequence": _stated(21_000_000_000, "21 GB")},
    )
    [p] = problems(CancellingHeadDim, dep, L70)
    assert p.message.startswith("`kv_per_sequence` 21 GB is the cancelled formula")
    assert "caches 2.62 GB at 8000 tokens, 8x less" in p.message


def test_correct_figure_passes() -> None:
    dep = deployment(gpu="H100-80GB", claims={"kv_per_token": _stated(327680, "320 KiB")})
    assert problems(CancellingHeadDim, dep, L70) == []


def test_head_dim_override_equal_to_hidden_over_kv_heads() -> None:
    dep = deployment(hf_overrides={"head_dim": 1024})
    [p] = problems(CancellingHeadDim, dep, L70)
    assert p.message == (
        "`hf_overrides` sets `head_dim` 1024 = hidden_size 8192 / 8 KV heads, the cancelling "
        "error; Llama-3.1-70B-Instruct's head_dim is 128, so the cache would be sized 8x too big "
        "(64 query heads / 8 KV heads)"
    )
    assert problems(CancellingHeadDim, deployment(hf_overrides={"head_dim": 128}), L70) == []
