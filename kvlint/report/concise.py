"""The concise reporter: one ``path:line:col: CODE message`` line per finding (flake8's format)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.finding import Severity
from kvlint.finding import fix_marker
from kvlint.report.base import Reporter

if TYPE_CHECKING:
    from kvlint.finding import Finding
    from kvlint.linter import Summary

_BOLD = "\033[1m"
_RESET = "\033[0m"
_COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}


class ConciseReporter(Reporter):
    """What pre-commit and the golden files show; ``--statistics`` prints counts per code."""

    def finding(self, finding: Finding) -> None:
        if self.options.statistics:
            return

        location = finding.span.location()
        # ruff's `[*]`: --fix applies this fix; `[~]`: it needs --unsafe-fixes as well.
        mark = fix_marker(finding.fix, unsafe_fixes=self.options.unsafe_fixes)
        message = f"{mark} {finding.message}" if mark else finding.message
        if self.options.color:
            colour = _COLOURS[finding.severity]
            line = f"{_BOLD}{location}{_RESET}: {colour}{finding.code}{_RESET} {message}"
        else:
            line = f"{location}: {finding.code} {message}"
        self.stream.write(line + "\n")

    def finish(self, summary: Summary) -> None:
        if not self.options.statistics:
            return
        for code, name, count in summary.by_code:
            self.stream.write(f"{count:>5}  {code:<8} {name}\n")
