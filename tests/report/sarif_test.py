"""The SARIF reporter: valid against the official 2.1.0 schema, with findings and without."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import jsonschema
import pytest

from kvlint import REPOSITORY
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import Summary
from kvlint.registry import default_registry
from kvlint.report.sarif import RuleInfo
from kvlint.report.sarif import SarifReporter
from kvlint.report.sarif import artifact_uri
from kvlint.report.sarif import rule_info
from kvlint.report.sarif import sarif_log
from kvlint.rule import Rule
from testing.shared import REPO
from testing.shared import SARIF_SCHEMA
from testing.shared import shared_file

KV301 = Finding(
    code="KV301",
    name="max-num-seqs-over-kv-budget",
    severity=Severity.ERROR,
    span=Span("deploy/vllm.yaml", 7, 18, "args", end_column=21),
    message="`max_num_seqs` 256 needs 256 x 4 GiB; the pool holds 12 sequences",
    fix=Fix("Lower `max_num_seqs` to 12"),
    numbers=(("KV per token", "128 KiB"), ("pool", "100,000 tokens")),
)
KV907 = Finding(
    code="KV907",
    name="missing-fact",
    severity=Severity.INFO,
    span=Span("deploy/vllm.yaml", 1, 1),
    message="no GPU named: capacity rules did not run",
)
RULES = [
    RuleInfo(
        "KV301",
        "max-num-seqs-over-kv-budget",
        Severity.ERROR,
        "Checks that max_num_seqs fits the KV pool",
        "Checks that max_num_seqs full-length sequences fit the KV pool.",
        "## What it does\nChecks that max_num_seqs full-length sequences fit the KV pool.",
        "https://github.com/kvcache-lint/kvlint/blob/main/docs/rules.md#kv301-max-num-seqs-over-kv-budget",
    ),
    RuleInfo("KV401", "context-beyond-position-embeddings", Severity.WARNING, "Context"),
]


def summary() -> Summary:
    return Summary(1, 1, {"error": 1}, (("KV301", "max-num-seqs-over-kv-budget", 1),), 1, 1)


def validate(log: dict[str, Any]) -> None:
    schema = json.loads(shared_file(SARIF_SCHEMA).read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []


def test_log_with_findings_is_valid_sarif() -> None:
    log = sarif_log([KV301, KV907], RULES, version="9.9.9")
    validate(log)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("kvlint", "9.9.9")
    # KV907 has no descriptor from the caller: one is made from the finding.
    assert [r["id"] for r in driver["rules"]] == ["KV301", "KV401", "KV907"]
    assert driver["rules"][0] == {
        "id": "KV301",
        "name": "max-num-seqs-over-kv-budget",
        "shortDescription": {"text": "Checks that max_num_seqs fits the KV pool"},
        "fullDescription": {"text": RULES[0].description},
        "helpUri": RULES[0].help_uri,
        "help": {"text": RULES[0].doc, "markdown": RULES[0].doc},
        "defaultConfiguration": {"level": "error"},
    }
    assert driver["rules"][1]["defaultConfiguration"] == {"level": "warning"}
    assert "helpUri" not in driver["rules"][1]  # documented nowhere kvlint knows
    # Results in report order: line 1 before line 7.
    first, second = run["results"]
    assert (first["ruleId"], first["ruleIndex"], first["level"]) == ("KV907", 2, "note")
    assert second == {
        "ruleId": "KV301",
        "ruleIndex": 0,
        "level": "error",
        "message": {"text": KV301.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": "deploy/vllm.yaml"},
                    "region": {"startLine": 7, "startColumn": 18, "endLine": 7, "endColumn": 21},
                }
            }
        ],
        "properties": {
            "fixTitle": "Lower `max_num_seqs` to 12",
            "numbers": {"KV per token": "128 KiB", "pool": "100,000 tokens"},
        },
    }
    assert run["columnKind"] == "unicodeCodePoints"


def test_clean_log_is_valid_and_keeps_an_empty_results_list() -> None:
    log = sarif_log([], RULES)
    validate(log)
    assert log["runs"][0]["results"] == []
    assert [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == ["KV301", "KV401"]


def test_clean_log_without_any_rule_is_valid() -> None:
    log = sarif_log([])
    validate(log)
    assert log["runs"][0]["tool"]["driver"]["rules"] == []


def test_multi_line_span_keeps_its_end_line() -> None:
    finding = KV301._replace(span=Span("a.yaml", 3, 5, end_column=2, end_line=4))
    log = sarif_log([finding])
    validate(log)
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 5, "endLine": 4, "endColumn": 2}


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("deploy/vllm.yaml", "deploy/vllm.yaml"),
        ("./deploy/vllm.yaml", "deploy/vllm.yaml"),
        ("my deploy/v 1.yaml", "my%20deploy/v%201.yaml"),
        ("/srv/app/plan.yaml", "file:///srv/app/plan.yaml"),
        ("charts/100%/values.yaml", "charts/100%25/values.yaml"),
    ],
)
def test_artifact_uri_is_a_uri_reference(path: str, uri: str) -> None:
    assert artifact_uri(path) == uri


def test_rule_info_reads_the_rule_docstring() -> None:
    class Demo(Rule):
        """## What it does
        Checks that the pool holds `max_num_seqs` sequences. More text
        on a second line.

        ## Why is this bad?
        The engine queues them.
        """

        code = "KV399"
        name = "demo-rule"
        severity = Severity.WARNING

    info = rule_info(Demo)
    assert info.code == "KV399"
    assert info.summary == "Checks that the pool holds `max_num_seqs` sequences"
    assert info.description == (
        "Checks that the pool holds `max_num_seqs` sequences. More text on a second line."
    )
    assert info.doc.startswith("## What it does\nChecks")
    assert info.help_uri == ""  # a plugin's rule: kvlint's docs/rules.md does not have it
    assert rule_info(Demo, builtin=True).help_uri == (
        "https://github.com/kvcache-lint/kvlint/blob/main/docs/rules.md#kv399-demo-rule"
    )


def test_reporter_writes_one_valid_log_at_the_end() -> None:
    stream = io.StringIO()
    reporter = SarifReporter(stream)
    reporter.start()
    reporter.finding(KV301)
    assert stream.getvalue() == ""
    reporter.finish(summary())
    log = json.loads(stream.getvalue())
    validate(log)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["KV301"]
    assert stream.getvalue().endswith("}\n")


def _github_anchor(heading: str) -> str:
    """The id GitHub gives a Markdown heading: lower case, punctuation other than ``-`` and
    ``_`` dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_builtin_help_uri_lands_on_its_heading_in_docs_rules_md() -> None:
    """The SARIF ``helpUri`` of each built-in rule is this repository's ``docs/rules.md`` with
    the anchor GitHub renders for that rule's heading (a wrong anchor opens the page's top)."""
    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    anchors = {_github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}
    rules = list(default_registry().rules.values())
    assert len(rules) >= 20
    for rule in rules:
        page, _, anchor = rule_info(rule, builtin=True).help_uri.partition("#")
        assert page == f"{REPOSITORY}/blob/main/docs/rules.md", rule.code
        assert anchor in anchors, (rule.code, anchor)
    # The index at the top links the same anchors.
    assert set(re.findall(r"\]\(#([^)]+)\)", text)) <= anchors
