"""The Markdown job summary: per deployment a table of its budget and a Mermaid chart of it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import TextIO

from kvlint.finding import Finding
from kvlint.report.base import Reporter
from kvlint.report.base import ReportOptions
from kvlint.report.base import severity_order
from kvlint.report.figures import Figures
from kvlint.report.figures import admitted_text
from kvlint.report.figures import counted
from kvlint.report.figures import deployment_figures
from kvlint.report.figures import scope_text
from kvlint.report.github import annotation_path
from kvlint.units import format_binary
from kvlint.units import format_decimal

if TYPE_CHECKING:
    from kvlint.linter import DeploymentResult
    from kvlint.linter import Summary

CHART_POINTS = 7  # max_model_len and six halvings: enough to see the slope, few enough to read
# GitHub refuses a step summary over 1 MiB; a section is about 1.5 kB, a finding row 300 B.
MAX_FINDING_ROWS = 100
MAX_SECTIONS = 100


def cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened."""
    return " ".join(text.replace("|", "\\|").split())


def context_points(max_model_len: int) -> list[int]:
    """``max_model_len`` and its halvings, smallest first: 32768 -> 512 ... 32768."""
    points = [max_model_len]
    while len(points) < CHART_POINTS and points[-1] // 2 >= 1 and points[-1] % 2 == 0:
        points.append(points[-1] // 2)
    return sorted(points)


def _unit(largest: int) -> tuple[int, str]:
    """Decimal, as `kvlint size` prints a sequence: GB, or MB for small models."""
    return (10**9, "GB") if largest >= 10**9 else (10**6, "MB")


def _value(n: int, unit: int) -> str:
    return f"{n / unit:.2f}"


def chart(result: DeploymentResult, fig: Figures) -> str | None:
    """A Mermaid ``xychart-beta``: bars for one sequence's KV cache at each context length
    (first principles, as ``kvlint size --context N`` gives it), a line for the KV pool of one
    model copy (the engine's memory, as KV301 counts it). On a hybrid model the engine's own
    paging costs more than the bars show; KV305 says by how much."""
    kv = result.sizing.kv if result.sizing is not None else None
    if kv is None or fig.max_model_len is None or fig.max_model_len < 1:
        return None
    points = context_points(fig.max_model_len)
    sizes = [kv.per_sequence_bytes(n) for n in points]
    pool = fig.pool_bytes
    largest = max([*sizes, pool or 0])
    unit, unit_name = _unit(largest)
    top = max(1, math.ceil(largest / unit * 1.1))
    title = f"KV cache of one sequence ({unit_name}) by context length"
    if pool is not None:
        gpus = f" on {counted(fig.model_gpus, 'GPU')}" if fig.model_gpus > 1 else ""
        title += f"; line: the KV pool{gpus}"
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{title}"',
        f'    x-axis "context length (tokens)" [{", ".join(str(n) for n in points)}]',
        f'    y-axis "{unit_name}" 0 --> {top}',
        f"    bar [{', '.join(_value(s, unit) for s in sizes)}]",
    ]
    if pool is not None:
        lines.append(f"    line [{', '.join(_value(pool, unit) for _ in points)}]")
    lines.append("```")
    return "\n".join(lines)


def deployment_section(result: DeploymentResult) -> str:
    fig = deployment_figures(result)
    dep = result.deployment
    unknown = "?"
    header = "| model | engine | GPU | max_model_len | pool tokens | admitted sequences |"
    row = [
        fig.model or unknown,
        fig.engine,
        fig.gpu or "not named",
        f"{fig.max_model_len:,}" if fig.max_model_len is not None else unknown,
        f"{fig.pool_tokens:,}" if fig.pool_tokens is not None else unknown,
        admitted_text(fig),
    ]
    parts = [
        f"### `{cell(annotation_path(dep.path))}`: {cell(dep.name)}",
        "",
        header,
        "| --- | --- | --- | ---: | ---: | --- |",
        "| " + " | ".join(cell(text) for text in row) + " |",
    ]
    numbers = []
    if fig.per_token_bytes is not None:
        numbers.append(f"KV per token {format_binary(fig.per_token_bytes)}")
    if fig.per_sequence_bytes is not None and fig.max_model_len is not None:
        numbers.append(
            f"per sequence {format_decimal(fig.per_sequence_bytes)} at {fig.max_model_len:,} tokens"
        )
    pool = fig.pool_text()
    if pool is not None:
        numbers.append(f"KV pool {pool}")
    if numbers:
        parts += ["", "; ".join(numbers) + "."]
    missing = result.sizing.missing if result.sizing is not None else ()
    if missing:
        parts += ["", f"Not computed: the files do not give the {', '.join(missing)}."]
    drawn = chart(result, fig)
    if drawn is not None:
        parts += ["", drawn]
    return "\n".join(parts)


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
        where = cell(f"{annotation_path(f.span.path)}:{f.span.line}:{f.span.column}")
        rows.append(f"| `{where}` | {f.code} | {f.severity} | {cell(f.message)} |")
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
