"""Tests for the JSON reporter: the documented contract, field by field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from kvlint.deployment import Sourced
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import DeploymentResult
from kvlint.linter import LintResult
from kvlint.linter import summarise
from kvlint.registry import PluginError
from kvlint.report.json import JsonReporter
from kvlint.sizing import Sizing
from testing.builders import deployment
from testing.cli import run_cli
from testing.shared import REPO

SPAN = Span("vllm.yaml", 3, 15, "max-num-seqs", end_column=18)
FINDING = Finding(
    "KV301",
    "max-num-seqs-over-kv-budget",
    Severity.ERROR,
    SPAN,
    "`max_num_seqs` 256 needs 274.9 GB",
    Fix("Lower `max_num_seqs` to 38", (Edit(SPAN, "38"),), Applicability.UNSAFE),
    (("requested", "256"), ("admitted", "38")),
)
INFO = Finding("KV907", "missing-fact", Severity.INFO, Span("vllm.yaml", 1, 1), "no GPU")
DEPLOYMENT = deployment(
    Sourced("vllm", Span("vllm.yaml", 1, 1)),
    path="vllm.yaml",
    name="vllm config",
    carrier="engine_yaml",
    model=Sourced("meta-llama/Llama-3.1-8B-Instruct", Span("vllm.yaml", 1, 8)),
    max_num_seqs=Sourced(256, SPAN),
)


def render() -> dict[str, object]:
    stream = io.StringIO()
    reporter = JsonReporter(stream)
    reporter.start()
    dep_result = DeploymentResult(
        DEPLOYMENT,
        Sizing(spec=None, kv=None, gpu=None, engine=None, missing=("GPU type",)),
        model_origin="catalog",
        findings=(INFO, FINDING),
    )
    reporter.deployment(dep_result)
    reporter.finding(INFO)
    reporter.finding(FINDING)
    errors = (PluginError("kvlint-plugin-broken", "broken = broken_mod", "ImportError: nope"),)
    result = LintResult(("vllm.yaml",), (dep_result,), (INFO, FINDING), errors)
    reporter.finish(summarise(result, Severity.WARNING))
    document: dict[str, object] = json.loads(stream.getvalue())
    return document


def test_document_shape() -> None:
    document = render()
    assert list(document) == ["version", "findings", "deployments", "summary", "plugin_errors"]
    assert document["version"] == 1
    assert document["plugin_errors"] == [
        {
            "package": "kvlint-plugin-broken",
            "entry_point": "broken = broken_mod",
            "message": "ImportError: nope",
        }
    ]


def test_finding_fields() -> None:
    findings = render()["findings"]
    assert isinstance(findings, list)
    assert findings[1] == {
        "code": "KV301",
        "name": "max-num-seqs-over-kv-budget",
        "severity": "error",
        "path": "vllm.yaml",
        "line": 3,
        "column": 15,
        "end_line": 3,
        "end_column": 18,
        "key": "max-num-seqs",
        "message": "`max_num_seqs` 256 needs 274.9 GB",
        "fix": {
            "title": "Lower `max_num_seqs` to 38",
            "applicability": "unsafe",
            "edits": [
                {
                    "path": "vllm.yaml",
                    "line": 3,
                    "column": 15,
                    "end_line": 3,
                    "end_column": 18,
                    "key": "max-num-seqs",
                    "replacement": "38",
                }
            ],
        },
        "numbers": [
            {"label": "requested", "value": "256"},
            {"label": "admitted", "value": "38"},
        ],
    }
    assert findings[0]["fix"] is None
    assert findings[0]["end_column"] is None


def test_deployments_and_summary() -> None:
    document = render()
    deployments = document["deployments"]
    assert isinstance(deployments, list)
    assert deployments[0]["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert deployments[0]["model_origin"] == "catalog"
    assert deployments[0]["max_num_seqs"] == 256
    assert deployments[0]["findings"] == 2
    assert deployments[0]["sizing"]["missing"] == ["GPU type"]
    assert document["summary"] == {
        "files": 1,
        "deployments": 1,
        "findings": 2,
        "by_severity": {"error": 1, "warning": 0, "info": 1},
        "by_code": [
            {"code": "KV301", "name": "max-num-seqs-over-kv-budget", "count": 1},
            {"code": "KV907", "name": "missing-fact", "count": 1},
        ],
        "fail_on": "warning",
        "exit_code": 1,
    }


def test_real_output_follows_the_published_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report of every golden repository validates against schemas/report.schema.json."""
    import kvlint_schemas  # type: ignore[import-not-found]

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.chdir(REPO / "tests" / "golden")
    validator = jsonschema.Draft202012Validator(kvlint_schemas.load("report"))
    validator.check_schema(validator.schema)
    seen: set[str] = set()
    for case in sorted(p.name for p in Path.cwd().iterdir() if p.is_dir() and p.name[0] != "_"):
        result = run_cli(["check", case, "--offline", "--format", "json"], capsys)
        document = json.loads(result.out)
        assert [e.message for e in validator.iter_errors(document)] == [], case
        seen.update(f["code"] for f in document["findings"])
    assert len(seen) >= 5  # the goldens exercise the schema with real findings
    errors = list(validator.iter_errors({**render(), "version": 2}))
    assert [e.message for e in errors] == ["1 was expected"]
