"""Tests for ``kvlint explain``: the doc by code or name, plain text off a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.registry import default_registry
from testing.cli import run_cli


def test_explain_by_code_and_name(capsys: pytest.CaptureFixture[str]) -> None:
    by_code = run_cli(["explain", "KV906"], capsys)
    by_name = run_cli(["explain", "unused-suppression"], capsys)
    assert by_code.code == by_name.code == 0
    assert by_code.out == by_name.out
    lines = by_code.out.splitlines()
    assert lines[0] == "KV906 unused-suppression (severity: warning; engines: all; fixable: no)"
    assert lines[2] == "## What it does"
    doc = default_registry().rules["KV906"].doc()
    assert by_code.out == f"{lines[0]}\n\n{doc.text.strip()}\n"


def test_explain_unknown_rule(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["explain", "KV999"], capsys)
    assert result.code == 2
    assert result.out == ""
    assert result.err == "kvlint: no rule has the code or name `KV999` (see `kvlint rules`)\n"


def test_explain_rich_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["explain", "KV907", "--color", "always"], capsys)
    assert result.code == 0
    assert "\x1b[" in result.out  # rendered by rich
    assert "What it does" in result.out
    assert "## What it does" not in result.out


GPU_TYPO = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: H1000
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
"""


def test_explain_file_shows_the_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf-home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy.yaml").write_text(GPU_TYPO, encoding="utf-8")
    result = run_cli(["explain", "KV903", "--file", "deploy.yaml", "--offline"], capsys)
    assert result.code == 0
    tail = result.out.split("\n1 finding of KV903 in deploy.yaml\n\n", 1)[1].splitlines()
    assert tail[0] == (
        "deploy.yaml:9:33: KV903 unknown GPU `H1000`; known names include `H800-80GB`, "
        "`H100-SXM-80GB`, "
        "`H100-PCIe-80GB` (64 known)"
    )
    assert tail[1].startswith("    known GPUs  H100-SXM-80GB, H100-PCIe-80GB, ")
    assert len(tail) == 2
    result = run_cli(["explain", "missing-fact", "--file", "deploy.yaml", "--offline"], capsys)
    assert result.out.endswith("\n0 findings of KV907 in deploy.yaml\n\n")
