"""KV401: a context longer than the layers' window."""

from __future__ import annotations

from kvlint_rules.context_beyond_sliding_window import ContextBeyondSlidingWindow

from kvlint.finding import Severity
from testing.builders import GEMMA3_27B
from testing.builders import MISTRAL_7B_V01
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems

M7 = model(MISTRAL_7B_V01, "mistralai/Mistral-7B-v0.1")


def test_every_layer_windowed() -> None:
    dep = deployment(gpu="L4", max_model_len=32768, claims={"context": 32768})
    [p] = problems(ContextBeyondSlidingWindow, dep, M7)
    assert p.span.line == 3  # the claim, not max_model_len
    assert p.message == (
        "`context` 32768 is longer than the 4096-token sliding window of Mistral-7B-v0.1: each of "
        "its 32 layers attends to the last 4096 tokens only, so earlier tokens reach it only "
        "indirectly through the layers below"
    )
    assert p.fix is not None and p.fix.title == "Lower `context` to 4096"


def test_within_window_passes() -> None:
    assert problems(ContextBeyondSlidingWindow, deployment(max_model_len=4096), M7) == []


def test_hybrid_is_info() -> None:
    g3 = model(GEMMA3_27B, "google/gemma-3-27b-it")
    [p] = problems(ContextBeyondSlidingWindow, deployment(max_model_len=32768), g3)
    assert p.severity is Severity.INFO
    assert p.message == (
        "`max_model_len` 32768: 52 of the 62 layers of gemma-3-27b-it are sliding-window layers "
        "that see only the last 1024 tokens; only its 10 full-attention layers attend to the "
        "whole context"
    )
