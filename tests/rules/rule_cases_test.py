"""Every rule case in ``tests/rules/cases/<CODE>.yaml``, run through the real linter.

A case file::

    rule: KV301
    cases:
      - name: over-budget
        filename: deploy.yaml        # optional, default plan.yaml
        file: |
          <the deployment file>
        files: {models/x/config.json: "..."}   # optional, more files next to it
        config: {gpu: H100-80GB}               # optional, a kvlint config for the run
        findings:
          - {line: 7, column: 18, message: "..."}   # optional `severity`

The findings of the case's rule must be exactly these, in order (other rules' are ignored). The
temporary folder's path is written ``<tmp>`` in messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from kvlint.registry import default_registry
from tests.rules.harness import isolate
from tests.rules.harness import lint_files

CASES_DIR = Path(__file__).parent / "cases"
CASE_KEYS = {"name", "filename", "file", "files", "config", "findings", "check"}
FINDING_KEYS = {"line", "column", "message", "severity"}


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return data


def _params() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        data = _load(path)
        for case in data.get("cases") or []:
            case_id = f"{data.get('rule')}-{case.get('name')}"
            params.append(pytest.param(path.stem, data.get("rule"), case, id=case_id))
    return params


@pytest.mark.parametrize(("stem", "rule", "case"), _params())
def test_rule_case(
    stem: str,
    rule: str,
    case: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert rule == stem, f"cases/{stem}.yaml says `rule: {rule}`"
    assert set(case) <= CASE_KEYS, f"unknown case keys: {sorted(set(case) - CASE_KEYS)}"
    isolate(monkeypatch, tmp_path)
    filename = case.get("filename", "plan.yaml")
    files = {filename: case["file"], **(case.get("files") or {})}
    findings = lint_files(tmp_path, files, config=case.get("config"), check=case.get("check"))
    expected = case.get("findings") or []
    for item in expected:
        assert set(item) <= FINDING_KEYS, (
            f"unknown finding keys: {sorted(set(item) - FINDING_KEYS)}"
        )
    found = [f for f in findings if f.code == rule]
    actual = []
    for index, f in enumerate(found):
        item: dict[str, Any] = {
            "line": f.span.line,
            "column": f.span.column,
            "message": f.message.replace(str(tmp_path), "<tmp>"),
        }
        if index < len(expected) and "severity" in expected[index]:
            item["severity"] = str(f.severity)  # compared where the case states it
        actual.append(item)
    assert actual == [dict(e) for e in expected]


def test_every_case_file_names_a_registered_rule() -> None:
    registry = default_registry()
    for path in sorted(CASES_DIR.glob("*.yaml")):
        data = _load(path)
        assert set(data) == {"rule", "cases"}, f"{path.name}: keys {sorted(data)}"
        assert data["rule"] in registry.rules, f"{path.name}: no rule {data['rule']}"
        names = [case["name"] for case in data["cases"]]
        assert len(names) == len(set(names)), f"{path.name}: duplicate case names"


def test_every_builtin_rule_has_cases_with_a_finding_and_a_pass() -> None:
    registry = default_registry()
    missing = []
    for code in registry.rules:
        if registry.packages[code] != "kvlint":
            continue
        path = CASES_DIR / f"{code}.yaml"
        if not path.exists():
            missing.append(code)
            continue
        cases = _load(path)["cases"]
        assert any(c.get("findings") for c in cases), f"{code}: no case with a finding"
        assert any(not c.get("findings") for c in cases), f"{code}: no passing case"
    assert missing == [], f"rules without tests/rules/cases/<CODE>.yaml: {missing}"
