"""GitLab Code Quality: a JSON array of issues, for a job's ``artifacts:reports:codequality``.

Each finding is one issue with the fields GitLab's documentation requires: ``description``,
``check_name``, ``fingerprint`` (unique in the report, stable across runs, so a merge request
shows what it added or fixed), ``severity`` and ``location`` (``path`` and ``lines.begin``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import PurePath
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

from kvlint.finding import Finding
from kvlint.finding import Severity
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.base import json_text

if TYPE_CHECKING:
    from kvlint.linter import Summary

# GitLab's levels are info, minor, major, critical and blocker. An error is a deployment that
# will not start or a plan that is wrong; a warning one that runs worse than intended.
SEVERITIES = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def _path(path: str) -> str:
    """Relative to the repository root, as GitLab matches it against the diff (no ``./``)."""
    if os.path.isabs(path):
        return path
    return PurePath(os.path.normpath(path)).as_posix()


def _fingerprint(finding: Finding, seen: dict[str, int]) -> str:
    """The rule, the file, the key and the message: stable while the finding stays (its line
    may move), with a counter when the same finding is in a file twice."""
    span = finding.span
    key = f"{finding.code}\0{_path(span.path)}\0{span.key}\0{finding.message}"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    seen[digest] = seen.get(digest, 0) + 1
    if seen[digest] > 1:
        digest = hashlib.sha256(f"{key}\0{seen[digest]}".encode()).hexdigest()[:32]
    return digest


def issue(finding: Finding, seen: dict[str, int]) -> dict[str, Any]:
    span = finding.span
    description = finding.message
    if finding.fix is not None:
        description += f" (fix: {finding.fix.title})"
    lines: dict[str, int] = {"begin": max(1, span.line)}
    if span.end_line is not None and span.end_line > span.line:
        lines["end"] = span.end_line
    return {
        "type": "issue",
        "check_name": f"{finding.code} {finding.name}",
        "description": description,
        "categories": ["Bug Risk"],
        "severity": SEVERITIES[finding.severity],
        "fingerprint": _fingerprint(finding, seen),
        "location": {"path": _path(span.path), "lines": lines},
    }


class GitlabReporter(Reporter):
    """The whole run as one Code Quality report (``[]`` when clean), written at the end."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self._findings: list[Finding] = []

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def finish(self, summary: Summary) -> None:
        seen: dict[str, int] = {}
        issues = [issue(f, seen) for f in sorted(self._findings, key=Finding.sort_key)]
        self.stream.write(json_text(issues))
        self.stream.write("\n")
