"""GitHub Actions workflow commands: one `::error file=...,line=...,col=...::` per finding."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import PurePath
from typing import IO
from typing import TYPE_CHECKING

from kvlint.finding import Finding
from kvlint.finding import Severity
from kvlint.report.base import Reporter

if TYPE_CHECKING:
    from kvlint.linter import Summary

# GitHub has three annotation levels; an info finding is a notice (sqlfluff does the same).
COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The message part, as @actions/core escapes it (toolkit packages/core/src/command.ts)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value: the data escapes plus ``:`` and ``,``, which delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


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
    message = finding.message
    if finding.fix is not None:
        message += f"\nFix: {finding.fix.title}"
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
