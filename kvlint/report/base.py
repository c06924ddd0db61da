"""The Reporter interface: start / deployment / finding / finish; reporters never compute."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import TextIO

if TYPE_CHECKING:
    from kvlint.finding import Finding
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False  # ANSI colour (rich) allowed
    statistics: bool = False  # --statistics: counts per code instead of one line per finding
    show_fixes: bool = True  # mention a fix title when a finding has one
    unsafe_fixes: bool = False  # --unsafe-fixes: an unsafe fix is marked as applied by --fix


class Reporter(abc.ABC):
    """Writes one run's results to ``stream``.

    The linter calls, in order: ``start()``; ``deployment(result)`` once per deployment (with its
    Sizing, so a reporter can show the numbers without computing them); ``finding(f)`` once per
    finding in sorted order (path, line, column, code); ``finish(summary)``.
    """

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        self.stream = stream
        self.options = options or ReportOptions()

    def start(self) -> None:  # noqa: B027  (optional hook; most reporters need no header)
        """Called once before anything else."""

    def deployment(self, result: DeploymentResult) -> None:  # noqa: B027
        """One checked deployment (its findings also arrive through ``finding``)."""

    @abc.abstractmethod
    def finding(self, finding: Finding) -> None:
        """One finding."""

    @abc.abstractmethod
    def finish(self, summary: Summary) -> None:
        """Called once at the end; write whatever was held back and the summary."""
