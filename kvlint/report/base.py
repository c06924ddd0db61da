"""The Reporter interface: start / deployment / finding / finish; reporters never compute."""

from __future__ import annotations

import abc
import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import TextIO

if TYPE_CHECKING:
    from kvlint.finding import Finding
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary


@dataclass(frozen=True)
class ReportOptions:
    """How a report is written (the command-line options reporters read)."""

    color: bool = False  # ANSI colour (rich) allowed
    statistics: bool = False  # --statistics: counts per code instead of one line per finding
    show_fixes: bool = True  # mention a fix title when a finding has one
    unsafe_fixes: bool = False  # --unsafe-fixes: an unsafe fix is marked as applied by --fix
    # Text that is not on disk as it was checked (stdin), by display path, for code frames.
    sources: Mapping[str, str] = field(default_factory=dict)


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


# json.dumps escapes the C0 controls, but with ensure_ascii=False it writes DEL and the C1
# controls (U+0080 to U+009F, the 8-bit CSI among them) as they are: a YAML key path, a file name
# or a plugin's text quoted in a JSON report must not reach a terminal as a control character.
# They occur only inside strings, where ``\u0097`` is the same character to every JSON reader.
_JSON_CONTROLS = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def json_text(document: Any) -> str:
    """``document`` as the JSON reports write it: indented, non-ASCII text as it is, every
    control character escaped."""
    return json.dumps(document, indent=2, ensure_ascii=False).translate(_JSON_CONTROLS)


def statistics_rows(summary: Summary, *, unsafe_fixes: bool = False) -> list[str]:
    """``--statistics``: count, code, severity, fix mark and name, one rule a line, aligned::

        2  KV301  warning  [~]  max-num-seqs-over-kv-budget
        1  KV201  error         weight-quant-as-cache-quant

    The mark is ruff's: ``[*]`` when ``--fix`` would fix some of the rule's findings, ``[~]``
    when only ``--unsafe-fixes`` would, none when they are advice only."""
    from kvlint.finding import FIXABLE
    from kvlint.finding import UNSAFE_FIX

    rows = summary.by_code
    count_width = max((len(f"{row.found:,}") for row in rows), default=1)
    code_width = max((len(row.code) for row in rows), default=0)
    out = []
    for row in rows:
        if row.safe_fixes or (unsafe_fixes and row.unsafe_fixes):
            mark = FIXABLE
        elif row.unsafe_fixes:
            mark = UNSAFE_FIX
        else:
            mark = ""
        out.append(
            f"{row.found:>{count_width},}  {row.code:<{code_width}}  {row.severity!s:<7}  "
            f"{mark:<3}  {row.name}"
        )
    return out


def severity_order(finding: Finding) -> tuple[int, str, int, int, str]:
    """Errors first, then warnings, then info; by path and position within each."""
    return (-int(finding.severity), *finding.sort_key())
