"""The terminal report: each finding with the lines it points at, its fix and its numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import TextIO

from rich.console import Console
from rich.text import Text

from kvlint import reading
from kvlint.finding import Finding
from kvlint.finding import Severity
from kvlint.finding import fix_marker
from kvlint.lazy_re import lazy
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.base import severity_order
from kvlint.report.base import statistics_rows
from kvlint.report.figures import counted
from kvlint.report.figures import deployment_figures
from kvlint.report.figures import number_rows
from kvlint.report.figures import scope_text

if TYPE_CHECKING:
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary

STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
# Findings about the arithmetic (KV1xx-KV4xx) get the deployment's budget beneath them when
# they bring no numbers of their own; an unknown flag or an unreadable file does not.
ARITHMETIC = ("KV1", "KV2", "KV3", "KV4")
CONTEXT_LINES = 1  # lines shown above and below the offending one (ruff shows a few more)


# C0 controls become their Unicode "control pictures" (ESC -> U+241B) and C1 controls U+FFFD:
# one column each, so carets stay aligned, and a hostile file cannot send escape sequences
# to the terminal through a code frame or a message quoting it (rich strips only a few).
_PICTURES = {i: chr(0x2400 + i) for i in range(0x20) if i != 0x09}
_PICTURES[0x7F] = "\u2421"
_PICTURES.update({i: "\ufffd" for i in range(0x80, 0xA0)})
_LINE_BREAK = lazy(r"\r\n|\r|\n")
MAX_FRAME_BYTES = 4 * 1024 * 1024  # a larger file still gets its findings, without frames


def printable(text: str) -> str:
    return text.translate(_PICTURES)


def make_console(stream: TextIO, color: bool) -> Console:
    """A rich Console that writes colour only when told: the check command decides from
    ``--color`` and ``NO_COLOR``; passing ``no_color`` explicitly keeps rich from
    second-guessing an explicit ``--color always``."""
    return Console(
        file=stream,
        force_terminal=color,
        no_color=not color,
        color_system="auto" if color else None,
        highlight=False,
        emoji=False,
        soft_wrap=True,
    )


def code_frame(lines: list[str], finding: Finding) -> Text | None:
    """The offending line with its neighbours and a caret under the value, ruff style:

    ```
      |
    6 |     max-model-len: 32768
    7 |     max-num-seqs: 256
      |                   ^^^ KV301
    ```
    """
    span = finding.span
    if not 1 <= span.line <= len(lines):
        return None
    first = max(1, span.line - CONTEXT_LINES)
    last = min(len(lines), span.line + CONTEXT_LINES)
    width = len(str(last))
    gutter = " " * width + " |"
    frame = Text()
    frame.append(gutter + "\n", style="blue")
    for number in range(first, last + 1):
        text = printable(lines[number - 1].rstrip("\r\n").expandtabs(1))
        frame.append(f"{number:>{width}} | ", style="blue")
        frame.append(text + "\n")
        if number == span.line:
            start = max(1, span.column)
            end = span.end_column if span.end_column and span.end_line in (None, span.line) else 0
            length = max(1, end - start) if end > start else _token_length(text, start)
            frame.append(gutter, style="blue")
            frame.append(
                " " * start + "^" * length + f" {finding.code}", style=STYLES[finding.severity]
            )
            frame.append("\n")
    frame.append(gutter, style="blue")
    return frame


def numbers_table(rows: list[tuple[str, str]]) -> Text:
    """Label and value, aligned, indented under the frame (no trailing blanks, unlike a
    rich Table, so the plain output is what a golden file can hold)."""
    width = max(len(label) for label, _ in rows)
    table = Text()
    for i, (label, value) in enumerate(rows):
        if i:
            table.append("\n")
        table.append(f"    {label:<{width}}", style="dim")
        table.append(f"  {value}")
    return table


def _token_length(line: str, column: int) -> int:
    """Without an end column, underline the word that starts at ``column``."""
    rest = line[column - 1 :]
    word = rest.split(None, 1)[0] if rest.strip() else ""
    return max(1, len(word.rstrip(",")))


class FullReporter(Reporter):
    """Rich output for a person at a terminal (the default there)."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self.console = make_console(stream, self.options.color)
        self._findings: list[Finding] = []
        self._owner: dict[Finding, DeploymentResult] = {}
        self._sources: dict[str, list[str] | None] = {}

    def deployment(self, result: DeploymentResult) -> None:
        for finding in result.findings:
            self._owner[finding] = result

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def finish(self, summary: Summary) -> None:
        if self.options.statistics:
            self._statistics(summary)
        else:
            # The worst first, as a reader triages (ruff's full output sorts by file only).
            for finding in sorted(self._findings, key=severity_order):
                self._render(finding)
        self.console.print(self._summary_line(summary))

    def _lines(self, path: str) -> list[str] | None:
        """The file's lines, read once; the report goes on without a frame if it cannot."""
        if path not in self._sources and path in self.options.sources:
            self._sources[path] = _LINE_BREAK.split(self.options.sources[path])
        if path not in self._sources:
            try:
                # A regular file only: a FIFO reported as KV901 must not block the report.
                data = reading.read_bytes(path, reading.Kind("a file to frame", MAX_FRAME_BYTES))
                text = data.decode("utf-8", errors="replace")
            except OSError:
                self._sources[path] = None
            else:
                # YAML's line breaks only: str.splitlines() would also break at form feeds and
                # \x1c-\x1e, numbering lines differently from the spans.
                self._sources[path] = _LINE_BREAK.split(text)
        return self._sources[path]

    def _render(self, finding: Finding) -> None:
        head = Text()
        head.append(printable(finding.span.location()), style="bold")
        head.append(": ")
        head.append(finding.code, style=STYLES[finding.severity])
        head.append(f" [{finding.severity}] ", style=STYLES[finding.severity])
        head.append(printable(finding.message))
        self.console.print(head)
        lines = self._lines(finding.span.path)
        frame = code_frame(lines, finding) if lines is not None else None
        if frame is not None:
            self.console.print(frame)
        if finding.fix is not None and self.options.show_fixes:
            fix = Text()
            fix.append("  = ", style="blue")
            mark = fix_marker(finding.fix, unsafe_fixes=self.options.unsafe_fixes)
            fix.append(f"fix {mark}: " if mark else "fix: ", style="bold")
            fix.append(printable(finding.fix.title))
            self.console.print(fix)
        rows = list(finding.numbers)
        owner = self._owner.get(finding)
        if not rows and owner is not None and finding.code.startswith(ARITHMETIC):
            rows = number_rows(deployment_figures(owner))
        if rows:
            self.console.print(numbers_table([(printable(a), printable(b)) for a, b in rows]))
        self.console.print()

    def _statistics(self, summary: Summary) -> None:
        rows = statistics_rows(summary, unsafe_fixes=self.options.unsafe_fixes)
        for row, text in zip(summary.by_code, rows, strict=True):
            self.console.print(Text(text, style=STYLES[row.severity]))

    def _summary_line(self, summary: Summary) -> Text:
        scope = scope_text(summary.files, summary.deployments)
        if summary.total == 0:
            return Text(f"All checks passed ({scope}).", style="bold green")
        line = Text("Found ")
        shown = [s for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)]
        shown = [s for s in shown if summary.by_severity.get(str(s), 0)]
        for i, severity in enumerate(shown):
            if i:
                line.append(", ")
            line.append(
                counted(summary.by_severity[str(severity)], str(severity)), STYLES[severity]
            )
        line.append(f" in {scope}.")
        return line
