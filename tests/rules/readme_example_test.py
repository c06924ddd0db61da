"""The README's example: `kvlint check examples/deploy.yaml` shows KV101, KV201, KV301 and
KV401 with their numbers and exits 1, offline, from the built-in catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.cli import run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "deploy.yaml"


def test_readme_example(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(EXAMPLE.parent.parent)
    argv = ["check", "examples/deploy.yaml", "--format", "json", "--no-config"]
    result = run_cli(argv, capsys)
    assert result.code == 1
    findings = json.loads(result.out)["findings"]
    assert [(f["path"], f["line"], f["column"], f["code"]) for f in findings] == [
        ("examples/deploy.yaml", 15, 17, "KV101"),
        ("examples/deploy.yaml", 16, 19, "KV201"),
        ("examples/deploy.yaml", 39, 30, "KV301"),
        ("examples/deploy.yaml", 53, 12, "KV401"),
    ]
    kv101, kv201, kv301, kv401 = (f["message"] for f in findings)
    # 2 x 80 x 8192 x 2 B = 2.5 MiB cancelled; 2 x 80 x 8 x 128 x 2 B = 320 KiB (seed 001).
    assert kv101 == (
        "`kv_per_token` 2.5 MiB is the cancelled formula 2 x 80 layers x 8192 hidden x 2 bytes "
        "(head_dim taken as d_model / KV heads); Meta-Llama-3.1-70B-Instruct-AWQ-INT4 caches "
        "320 KiB per token, 8x less (64 query heads / 8 KV heads)"
    )
    assert kv201 == (
        "the plan assumes `kv_cache_dtype` `int4`, the weights' precision (AWQ 4-bit), but "
        "`kv_cache_dtype` is `auto`: the cache stays float16, 320 KiB per token, not 80 KiB (4x)"
    )
    # 128 KiB x 32768 = 4 GiB per sequence; x 512 = 2 TiB. The pool is vLLM 0.11's on one
    # H100 (kvlint's estimate of the profiled memory, so only its shape is pinned here).
    assert kv301.startswith(
        "`max_num_seqs` 512 needs 2 TiB of KV cache if every request used all 32,768 tokens of "
        "`max_model_len` (4 GiB each); the pool holds "
    )
    assert kv401 == (
        "`context` 32000 is longer than the 4096-token sliding window of Mistral-7B-v0.1: each "
        "of its 32 layers attends to the last 4096 tokens only, so earlier tokens reach it only "
        "indirectly through the layers below"
    )
