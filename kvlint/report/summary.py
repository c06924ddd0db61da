"""The Markdown job summary: per deployment a table of its budget and a Mermaid chart of it."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import TextIO

from kvlint.finding import Finding
from kvlint.finding import printable
from kvlint.lazy_re import lazy
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.base import severity_order
from kvlint.report.figures import Figures
from kvlint.report.figures import admitted_at
from kvlint.report.figures import counted
from kvlint.report.figures import deployment_figures
from kvlint.report.figures import longest_context_for
from kvlint.report.figures import scope_text
from kvlint.report.github import annotation_path
from kvlint.units import format_bytes

if TYPE_CHECKING:
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary

CHART_POINTS = 7  # max_model_len and six halvings: enough to see the slope, few enough to read
# GitHub refuses a step summary over 1 MiB; a section is about 1.5 kB, a finding row 300 B.
MAX_FINDING_ROWS = 100
MAX_SECTIONS = 100


# What starts Markdown inside a line (code, emphasis, links and images, HTML, entities, table
# cells, strikethrough, issue references), backslash-escaped, and `@`, which GitHub turns into
# a mention: a value from a file is text, never a link, an image, HTML or a ping. (A cell is
# never at a line's start, where `#`, `-` or `1.` would begin a block.)
_MARKDOWN_RE = lazy(r"([\\`*_\[\]<>!&|~#])")
_CODE_RE = lazy(r"(`[^`\n]*`)")


def _flat(text: str) -> str:
    return printable(re.sub(r"\s+", " ", text))


def cell(text: str) -> str:
    """Text in a Markdown table cell: control characters escaped, newlines flattened, every
    Markdown character escaped, mentions broken (a zero-width space after `@`)."""
    return _text(text).strip()


def _text(text: str) -> str:
    escaped = _MARKDOWN_RE.sub(r"\\\1", _flat(text))
    return escaped.replace("@", "@\u200b")


def code(text: str) -> str:
    """A value as a Markdown code span, inert whatever it holds: fenced with more backticks
    than any run inside it, pipes escaped for the table (GitHub reads `\\|` in a code span)."""
    flat = _flat(text).strip().replace("|", "\\|")
    if not flat:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def message(text: str) -> str:
    """A finding's message: its backtick-quoted names as code spans, the rest as text."""
    return "".join(
        code(part[1:-1]) if _CODE_RE.fullmatch(part) else _text(part)
        for part in _CODE_RE.split(text)
    )


def context_points(max_model_len: int) -> list[int]:
    """``max_model_len`` and its halvings, smallest first: 32768 -> 512 ... 32768."""
    points = [max_model_len]
    while len(points) < CHART_POINTS and points[-1] // 2 >= 1 and points[-1] % 2 == 0:
        points.append(points[-1] // 2)
    return sorted(points)


def _tick_top(value: float) -> int:
    """A round top for the y axis just above ``value``: 1, 2 or 5 times a power of ten."""
    top = max(1.0, value * 1.1)
    magnitude = 10 ** math.floor(math.log10(top))
    return int(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= top))


# The lines' colours, set in the diagram itself (GitHub renders Mermaid's init directive).
PALETTE = '%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#1f77b4, #d62728"}}}}%%'


def chart(result: DeploymentResult, fig: Figures) -> str | None:
    """A Mermaid ``xychart-beta`` of the answer: sequences the pool admits at each context
    length up to ``max_model_len`` (line 1), and the requested ``max_num_seqs`` (line 2); the
    sentence under it names where they cross. Mermaid draws no legend, so the title names each
    line by the colour ``PALETTE`` gives it (the default theme draws line 1 in a lavender that
    barely shows on white: looked at as rendered by Mermaid 11 in Chromium)."""
    if fig.max_model_len is None or fig.max_model_len < 1:
        return None
    points = context_points(fig.max_model_len)
    admitted = [admitted_at(result, fig, n) for n in points]
    if any(a is None for a in admitted):
        return None
    values = [a for a in admitted if a is not None]
    title = "Sequences admitted by context length"
    lines = [f"    line [{', '.join(f'{a:.2f}' for a in values)}]"]
    largest = max(values)
    if fig.requested is not None:
        title += f" (blue); red: max_num_seqs {fig.requested:,}"
        lines.append(f"    line [{', '.join(str(fig.requested) for _ in points)}]")
        largest = max(largest, fig.requested)
    drawn = [
        "```mermaid",
        PALETTE,
        "xychart-beta",
        f'    title "{title}"',
        f'    x-axis "context length (tokens)" [{", ".join(str(n) for n in points)}]',
        f'    y-axis "sequences" 0 --> {_tick_top(largest)}',
        *lines,
        "```",
    ]
    text = "\n".join(drawn)
    crossing = crossing_text(result, fig)
    return f"{text}\n\n{crossing}" if crossing else text


def crossing_text(result: DeploymentResult, fig: Figures) -> str:
    """Where the requested count meets what the pool admits, in one sentence."""
    if fig.requested is None or fig.max_model_len is None or fig.admitted is None:
        return ""
    at_max = f"at `max_model_len` {fig.max_model_len:,} the pool admits {fig.admitted:,.2f}"
    longest = longest_context_for(result, fig, fig.requested)
    if longest is None:
        return f"`max_num_seqs` {fig.requested:,} do not fit at any context; {at_max}."
    if longest >= fig.max_model_len:
        return (
            f"`max_num_seqs` {fig.requested:,} fit at every context up to `max_model_len` "
            f"{fig.max_model_len:,}: the pool admits {fig.admitted:,.2f}."
        )
    return f"`max_num_seqs` {fig.requested:,} fit up to {longest:,} tokens each; {at_max}."


def deployment_section(result: DeploymentResult) -> str:
    fig = deployment_figures(result)
    dep = result.deployment
    unknown = "?"
    header = (
        "| model | engine | GPU | max_model_len | pool tokens | admitted sequences | max_num_seqs |"
    )
    requested = f"{fig.requested:,}" if fig.requested is not None else unknown
    if fig.requested is not None and fig.requested_default:
        requested += " (engine default)"
    row = [
        code(fig.model) if fig.model else unknown,
        cell(fig.engine),
        code(fig.gpu) if fig.gpu else "not named",
        f"{fig.max_model_len:,}" if fig.max_model_len is not None else unknown,
        f"{fig.pool_tokens:,}" if fig.pool_tokens is not None else unknown,
        admitted_cell(fig),
        requested,
    ]
    parts = [
        f"### {code(annotation_path(dep.path))}: {code(dep.name)}",
        "",
        header,
        "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        "| " + " | ".join(row) + " |",
    ]
    numbers = []
    if fig.fits is False:
        numbers.append("The engine refuses to start: not one `max_model_len` sequence fits")
    if fig.per_token_bytes is not None:
        numbers.append(f"KV per token {format_bytes(fig.per_token_bytes)}")
    if fig.per_sequence_bytes is not None and fig.max_model_len is not None:
        numbers.append(
            f"per sequence {format_bytes(fig.per_sequence_bytes)} at {fig.max_model_len:,} tokens"
        )
    pool = fig.pool_text()
    if pool is not None:
        numbers.append(f"KV pool {pool}")
    if numbers:
        parts += ["", "; ".join(numbers) + "."]
    missing = result.sizing.missing if result.sizing is not None else ()
    if missing:
        parts += ["", f"Not computed: the files do not give the {', '.join(missing)}."]
    # The chart only where there is something to see: a deployment with findings.
    drawn = chart(result, fig) if result.findings else None
    if drawn is not None:
        parts += [
            "",
            "<details><summary>Sequences admitted by context length</summary>",
            "",
            drawn,
            "",
            "</details>",
        ]
    return "\n".join(parts)


def admitted_cell(fig: Figures) -> str:
    """One shape for every row: the engine's admitted count at ``max_model_len``, two decimals
    as vLLM logs it (``0.00`` when it refuses to start), ``?`` when unknown."""
    if fig.fits is False:
        return "0.00"
    if fig.admitted is None:
        return "?"
    return f"{fig.admitted:,.2f}"


def _verdict(summary: Summary) -> str:
    counts = [
        counted(summary.by_severity[name], name)
        for name in ("error", "warning", "info")
        if summary.by_severity.get(name, 0)
    ]
    scope = scope_text(summary.files, summary.deployments)
    if not counts:
        return f"No findings in {scope}."
    return f"{', '.join(counts)} in {scope}."


def findings_table(findings: Sequence[Finding]) -> list[str]:
    rows = ["| location | code | severity | message |", "| --- | --- | --- | --- |"]
    for f in findings[:MAX_FINDING_ROWS]:
        where = code(f"{annotation_path(f.span.path)}:{f.span.line}:{f.span.column}")
        rows.append(f"| {where} | {cell(f.code)} | {f.severity} | {message(f.message)} |")
    if len(findings) > MAX_FINDING_ROWS:
        rows.append(f"| | | | and {len(findings) - MAX_FINDING_ROWS} more |")
    return rows


def render_summary(
    results: Sequence[DeploymentResult], findings: Sequence[Finding], summary: Summary
) -> str:
    """The whole job summary, Markdown, ending with a newline; paths as the annotations give
    them (relative to the repository root, no ``./``)."""
    parts = ["## kvlint", "", _verdict(summary)]
    if findings:
        # Errors first: a capped table keeps the worst (and reads as the annotations do).
        parts += ["", *findings_table(sorted(findings, key=severity_order))]
    # Deployments with findings first (in file order), so a capped summary keeps those.
    shown = sorted(results, key=lambda r: not r.findings)[:MAX_SECTIONS]
    for result in shown:
        parts += ["", deployment_section(result)]
    if len(results) > len(shown):
        parts += [
            "",
            f"And {counted(len(results) - len(shown), 'more deployment')}, not shown here.",
        ]
    return "\n".join(parts) + "\n"


class SummaryReporter(Reporter):
    """Markdown for ``$GITHUB_STEP_SUMMARY``, written at the end."""

    def __init__(self, stream: TextIO, options: ReportOptions | None = None) -> None:
        super().__init__(stream, options)
        self._results: list[DeploymentResult] = []
        self._findings: list[Finding] = []

    def deployment(self, result: DeploymentResult) -> None:
        self._results.append(result)

    def finding(self, finding: Finding) -> None:
        self._findings.append(finding)

    def finish(self, summary: Summary) -> None:
        self.stream.write(render_summary(self._results, self._findings, summary))
