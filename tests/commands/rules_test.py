"""Tests for ``kvlint rules``: the text table, JSON, and the Markdown behind docs/rules.md."""

from __future__ import annotations

import json
import re

import pytest

from kvlint.registry import default_registry
from testing.cli import run_cli


def test_text_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["rules"], capsys)
    assert result.code == 0
    lines = result.out.splitlines()
    assert [line.split()[0] for line in lines] == default_registry().codes()
    kv906 = next(line for line in lines if line.startswith("KV906"))
    assert kv906.split()[1:5] == ["unused-suppression", "warning", "all", "no"]
    # The columns are padded to the widest cell, whatever rules are installed.
    assert re.search(r" no +Reports a suppression that suppresses no finding$", kv906)


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["rules", "--format", "json"], capsys)
    records = {r["code"]: r for r in json.loads(result.out)}
    assert records["KV907"] == {
        "code": "KV907",
        "name": "missing-fact",
        "severity": "info",
        "engines": [],
        "fixable": "none",
        "summary": "Says which facts the files do not give, and so which checks could not run",
        "package": "kvcache-lint",
    }


def test_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_cli(["rules", "--format", "markdown"], capsys).out
    assert out.startswith("# kvlint rules\n")
    assert (
        "| [KV906](#kv906-unused-suppression) | `unused-suppression` | warning | all | no |" in out
    )
    assert (
        "\n## KV906 unused-suppression\n\nSeverity: warning · engines: all · fixable: no\n" in out
    )
    assert "\n### What it does\n" in out
