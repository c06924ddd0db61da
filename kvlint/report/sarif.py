"""SARIF 2.1.0 output: one run, every rule as a reportingDescriptor, every finding as a result."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import PurePath
from typing import IO
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple
from typing import TextIO

from kvlint import REPOSITORY
from kvlint import __version__
from kvlint import rule_doc_url
from kvlint.finding import Finding
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.base import json_text

if TYPE_CHECKING:
    from kvlint.linter import Summary
    from kvlint.rule import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = REPOSITORY

# SARIF has no "info": its lowest reporting level is "note" (SARIF 2.1.0 section 3.27.10).
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


class RuleInfo(NamedTuple):
    """What a SARIF consumer shows about a rule: its names, default level and documentation."""

    code: str
    name: str
    severity: Severity
    summary: str = ""  # one line: shortDescription
    description: str = ""  # "What it does": fullDescription
    doc: str = ""  # the whole doc in Markdown: help
    help_uri: str = ""  # a built-in rule's section of docs/rules.md; a plugin's rule has none


def rule_info(rule: type[Rule], *, builtin: bool = False) -> RuleInfo:
    """The SARIF facts of a registered rule class, from its attributes and docstring; a
    built-in rule also links its section of the repository's ``docs/rules.md``."""
    doc = rule.doc()
    description = " ".join(doc.sections.get("What it does", "").split())
    help_uri = rule_doc_url(rule.code, rule.name) if builtin else ""
    return RuleInfo(
        rule.code, rule.name, rule.severity, doc.summary, description, doc.text, help_uri
    )


def _descriptor(rule: RuleInfo) -> dict[str, Any]:
    summary = rule.summary or rule.name or rule.code
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name or rule.code,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": rule.description or summary},
    }
    if rule.help_uri:
        descriptor["helpUri"] = rule.help_uri
    descriptor["help"] = {"text": rule.doc or summary, "markdown": rule.doc or summary}
    descriptor["defaultConfiguration"] = {"level": LEVELS[rule.severity]}
    return descriptor


def artifact_uri(path: str) -> str:
    """A relative path stays relative (GitHub resolves it against the repository root); an
    absolute one becomes a ``file://`` URI. Both are percent-encoded URI references."""
    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    # "./deploy/a.yaml" (what `kvlint check .` displays) is "deploy/a.yaml" to code scanning.
    return urllib.parse.quote(PurePath(os.path.normpath(path)).as_posix())


def _region(span: Span) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(1, span.line), "startColumn": max(1, span.column)}
    if span.end_column is not None:
        end_line = span.end_line if span.end_line is not None else span.line
        # SARIF's endColumn is exclusive (3.30.8), as Span.end_column is.
        if (end_line, span.end_column) > (region["startLine"], region["startColumn"]):
            region["endLine"] = end_line
            region["endColumn"] = span.end_column
    return region


def _result(finding: Finding, index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(finding.span.path)},
                    "region": _region(finding.span),
                }
            }
        ],
    }
    if finding.fix is not None:
        # A fix title without edits is advice, not an artifactChange: keep it as a property.
        result["properties"] = {"fixTitle": finding.fix.title}
    if finding.numbers:
        result.setdefault("properties", {})["numbers"] = dict(finding.numbers)
    return result


def _rules_for(findings: Sequence[Finding], rules: Iterable[RuleInfo]) -> list[RuleInfo]:
    by_code = {rule.code: rule for rule in rules}
    for finding in findings:
        # A finding whose rule the caller did not describe (a plugin, an input problem) still
        # needs a descriptor: ruleIndex must point somewhere.
        by_code.setdefault(finding.code, RuleInfo(finding.code, finding.name, finding.severity))
    return [by_code[code] for code in sorted(by_code)]


def sarif_log(
    findings: Sequence[Finding],
    rules: Iterable[RuleInfo] = (),
    *,
    version: str = __version__,
) -> dict[str, Any]:
    """The SARIF log of one kvlint run; ``results`` is ``[]`` when there is nothing to report
    (upload-sarif rejects a run without it: stackrox/kube-linter#213)."""
    described = _rules_for(findings, rules)
    index = {rule.code: i for i, rule in enumerate(described)}
    ordered = sorted(findings, key=Finding.sort_key)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kvlint",
                        "version": version,
                        "semanticVersion": version,
                        "informationUri": INFORMATION_URI,
                        "rules": [_descriptor(rule) for rule in described],
                    }
                },
                # Our columns count characters, as ruamel.yaml reports them, not UTF-16 units.
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index[f.code]) for f in ordered],
            }
        ],
    }


def write_sarif(
    stream: IO[str], findings: Sequence[Finding], rules: Iterable[RuleInfo] = ()
) -> None:
    stream.write(json_text(sarif_log(findings, rules)))
    stream.write("\n")


def registered_rules() -> list[RuleInfo]:
    """Every rule the registry accepted, so code scanning shows the docs of rules that found
    nothing this time too. A registry that cannot load leaves the findings' own rules."""
    try:
        from kvlint.registry import default_registry
        from kvlint.registry import is_builtin

        registry = default_registry()
        return [
            rule_info(rule, builtin=is_builtin(registry.packages.get(rule.code, "")))
            for rule in registry
        ]
    except Exception:  # the report must still be written; the check command reports plugins
        return []


class SarifReporter(Reporter):
    """The whole run as one SARIF 2.1.0 log, written at the end (for upload-sarif)."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self._findings: list[Finding] = []

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def finish(self, summary: Summary) -> None:
        write_sarif(self.stream, self._findings, registered_rules())
