"""The concise reporter: one ``path:line:col: CODE [severity] [*] message`` line per finding."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.finding import Severity
from kvlint.finding import fix_marker
from kvlint.report.base import Reporter
from kvlint.report.base import statistics_rows

if TYPE_CHECKING:
    from kvlint.finding import Finding
    from kvlint.linter import Summary

_BOLD = "\033[1m"
_RESET = "\033[0m"
_COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}


def concise_line(finding: Finding, *, unsafe_fixes: bool = False) -> str:
    """``deploy.yaml:7:18: KV301 [warning] [~] message``: flake8's location and code, then the
    severity (pre-commit shows no colour, so the word says it) and ruff's fix mark: ``[*]``
    ``--fix`` applies the fix, ``[~]`` it needs ``--unsafe-fixes`` too, none: advice only."""
    mark = fix_marker(finding.fix, unsafe_fixes=unsafe_fixes)
    head = f"{finding.span.location()}: {finding.code} [{finding.severity}]"
    return f"{head} {mark} {finding.message}" if mark else f"{head} {finding.message}"


class ConciseReporter(Reporter):
    """What pre-commit and the golden files show; ``--statistics`` prints counts per code."""

    def finding(self, finding: Finding) -> None:
        if self.options.statistics:
            return
        if not self.options.color:
            self.stream.write(concise_line(finding, unsafe_fixes=self.options.unsafe_fixes) + "\n")
            return
        mark = fix_marker(finding.fix, unsafe_fixes=self.options.unsafe_fixes)
        colour = _COLOURS[finding.severity]
        head = (
            f"{_BOLD}{finding.span.location()}{_RESET}: "
            f"{colour}{finding.code} [{finding.severity}]{_RESET}"
        )
        self.stream.write(
            f"{head} {mark} {finding.message}\n" if mark else f"{head} {finding.message}\n"
        )

    def finish(self, summary: Summary) -> None:
        if not self.options.statistics:
            return
        for row in statistics_rows(summary, unsafe_fixes=self.options.unsafe_fixes):
            self.stream.write(row + "\n")
