"""GitHub Actions workflow commands: one `::error file=...,line=...,col=...::` per finding."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import IO
from typing import TYPE_CHECKING
from typing import TextIO

from kvlint.finding import Finding
from kvlint.finding import Severity
from kvlint.finding import printable
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.figures import counted

if TYPE_CHECKING:
    from kvlint.linter import Summary

# GitHub has three annotation levels; an info finding is a notice (sqlfluff does the same).
COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The message part, as @actions/core escapes it (toolkit packages/core/src/command.ts)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value: the data escapes plus ``:`` and ``,``, which delimit properties; any
    other control character (an ESC in a file name) escaped as Python writes it."""
    return escape_data(printable_line(text)).replace(":", "%3A").replace(",", "%2C")


def printable_line(text: str) -> str:
    """Control characters escaped (``kvlint.finding.printable``) except the line breaks, which
    the workflow-command escapes turn into ``%0D`` / ``%0A``."""
    return "".join(
        part if part in ("\r", "\n") else printable(part) for part in re.split(r"(\r|\n)", text)
    )


def annotation_path(path: str) -> str:
    """GitHub matches ``file=`` against paths relative to the repository root: ``./a/b.yaml``
    (what ``kvlint check .`` displays) becomes ``a/b.yaml``."""
    if os.path.isabs(path):
        return path
    return PurePath(os.path.normpath(path)).as_posix()


def workflow_command(finding: Finding) -> str:
    """``::error file=deploy.yaml,line=7,col=18,title=KV301::message``."""
    span = finding.span
    props = [
        ("file", annotation_path(span.path)),
        ("line", str(span.line)),
        ("col", str(span.column)),
    ]
    if span.end_column is not None:
        if span.end_line is not None and span.end_line != span.line:
            props.append(("endLine", str(span.end_line)))
        props.append(("endColumn", str(span.end_column)))
    props.append(("title", finding.code))
    message = printable_line(finding.message)
    if finding.fix is not None:
        message += f"\nFix: {printable_line(finding.fix.title)}"
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{COMMANDS[finding.severity]} {rendered}::{escape_data(message)}"


def write_commands(stream: IO[str], findings: Iterable[Finding]) -> None:
    for finding in sorted(findings, key=Finding.sort_key):
        stream.write(workflow_command(finding) + "\n")


class GithubReporter(Reporter):
    """Annotations on the pull request: chosen by ``--format github`` or ``GITHUB_ACTIONS=true``.

    Only workflow commands go to the stream (ruff's ``github`` format does the same); the exit
    code carries the verdict.
    """

    def finding(self, finding: Finding) -> None:
        self.stream.write(workflow_command(finding) + "\n")

    def finish(self, summary: Summary) -> None:
        self.stream.flush()


# GitHub shows at most 10 annotations of each level a step (and 50 a job): more are dropped
# without a word (actions/toolkit docs/problem-matchers.md, "Limitations").
ANNOTATIONS_PER_LEVEL = 10


class ActionAnnotations(GithubReporter):
    """The Action's log: errors first, at most ``ANNOTATIONS_PER_LEVEL`` annotations of each
    level, then the rest as plain lines and one line saying how many were not annotated."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self._findings: list[Finding] = []

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def finish(self, summary: Summary) -> None:
        from kvlint.report.base import severity_order
        from kvlint.report.concise import concise_line

        shown: dict[Severity, int] = {}
        rest: list[Finding] = []
        for finding in sorted(self._findings, key=severity_order):
            if shown.get(finding.severity, 0) < ANNOTATIONS_PER_LEVEL:
                shown[finding.severity] = shown.get(finding.severity, 0) + 1
                self.stream.write(workflow_command(finding) + "\n")
            else:
                rest.append(finding)
        if rest:
            for finding in rest:
                self.stream.write(concise_line(finding) + "\n")
            counts = ", ".join(
                counted(sum(1 for f in rest if f.severity is s), str(s))
                for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
                if any(f.severity is s for f in rest)
            )
            self.stream.write(
                f"kvlint: {counts} not annotated (GitHub shows {ANNOTATIONS_PER_LEVEL} "
                "annotations of each level a step): they are listed above, in the SARIF log "
                "and in the job summary\n"
            )
        self.stream.flush()
