"""Tests for scripts/add_rule.py: the scaffold is a valid, documented rule module."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from kvlint.registry import validate_rule
from testing.shared import REPO


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("add_rule", REPO / "scripts" / "add_rule.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scaffold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = _script()
    (tmp_path / "rules").mkdir()
    (tmp_path / "tests" / "rules" / "cases").mkdir(parents=True)
    monkeypatch.setattr(script, "REPO", tmp_path)
    assert script.main(["KV308", "prefix-cache-too-small", "--engines", "vllm,sglang"]) == 0
    module_path = tmp_path / "rules" / "prefix_cache_too_small.py"
    spec = importlib.util.spec_from_file_location("scaffolded", module_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rule = module.PrefixCacheTooSmall
    assert (rule.code, rule.name, rule.engines) == (
        "KV308",
        "prefix-cache-too-small",
        frozenset({"sglang", "vllm"}),
    )
    assert validate_rule(rule, builtin=True) is None
    cases = (tmp_path / "tests" / "rules" / "cases" / "KV308.yaml").read_text()
    assert cases.startswith("rule: KV308\ncases:\n")
    assert script.main(["KV308", "prefix-cache-too-small"]) == 1  # never overwrites


def test_refuses_bad_code_and_name() -> None:
    script = _script()
    with pytest.raises(SystemExit):
        script.main(["ACME001", "x"])
    with pytest.raises(SystemExit):
        script.main(["KV308", "Bad_Name"])
