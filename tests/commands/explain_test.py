"""Tests for ``kvlint explain``: the doc by code or name, plain text off a terminal."""

from __future__ import annotations

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
