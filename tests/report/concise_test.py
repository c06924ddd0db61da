"""Tests for the concise reporter: `path:line:col: CODE [severity] [*] message` lines and
statistics with severity and fix columns."""

from __future__ import annotations

import io

from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import LintResult
from kvlint.linter import summarise
from kvlint.report.base import ReportOptions
from kvlint.report.concise import ConciseReporter

FINDINGS = (
    Finding(
        "KV301",
        "max-num-seqs-over-kv-budget",
        Severity.ERROR,
        Span("deploy/vllm.yaml", 7, 18),
        "`max_num_seqs` 256 needs 274.9 GB of KV cache",
        Fix("Lower `max_num_seqs` to 12", (Edit(Span("deploy/vllm.yaml", 7, 18), "12"),)),
    ),
    Finding("KV907", "missing-fact", Severity.INFO, Span("deploy/vllm.yaml", 1, 1), "no GPU type"),
    Finding(
        "KV301",
        "max-num-seqs-over-kv-budget",
        Severity.ERROR,
        Span("deploy/b.yaml", 3, 5),
        "`max_num_seqs` 64 needs more",
        Fix("Lower `max_num_seqs`", (Edit(Span("deploy/b.yaml", 3, 5), "8"),), Applicability.SAFE),
    ),
    Finding(
        "KV201",
        "weight-quant-as-cache-quant",
        Severity.WARNING,
        Span("deploy/b.yaml", 9, 1),
        "advice only",
        Fix("Say which cache dtype the plan means"),  # a title without edits: nothing to apply
    ),
)


def report(options: ReportOptions) -> str:
    stream = io.StringIO()
    reporter = ConciseReporter(stream, options)
    reporter.start()
    for finding in FINDINGS:
        reporter.finding(finding)
    result = LintResult(("deploy/vllm.yaml", "deploy/b.yaml"), (), FINDINGS)
    reporter.finish(summarise(result, Severity.WARNING))
    return stream.getvalue()


def test_one_line_per_finding() -> None:
    # The severity in words (pre-commit shows no colour) and ruff's fix marks: [~] needs
    # --unsafe-fixes, [*] --fix applies it, none when the fix is advice only.
    assert report(ReportOptions()) == (
        "deploy/vllm.yaml:7:18: KV301 [error] [~] `max_num_seqs` 256 needs 274.9 GB of KV cache\n"
        "deploy/vllm.yaml:1:1: KV907 [info] no GPU type\n"
        "deploy/b.yaml:3:5: KV301 [error] [*] `max_num_seqs` 64 needs more\n"
        "deploy/b.yaml:9:1: KV201 [warning] advice only\n"
    )
    # With --unsafe-fixes, --fix applies the unsafe fix too.
    first = report(ReportOptions(unsafe_fixes=True)).splitlines()[0]
    assert first.startswith("deploy/vllm.yaml:7:18: KV301 [error] [*] `max_num_seqs` 256")


def test_color() -> None:
    first = report(ReportOptions(color=True)).splitlines()[0]
    assert first == (
        "\033[1mdeploy/vllm.yaml:7:18\033[0m: \033[31mKV301 [error]\033[0m "
        "[~] `max_num_seqs` 256 needs 274.9 GB of KV cache"
    )


def test_statistics() -> None:
    assert report(ReportOptions(statistics=True)) == (
        "1  KV201  warning       weight-quant-as-cache-quant\n"
        "2  KV301  error    [*]  max-num-seqs-over-kv-budget\n"
        "1  KV907  info          missing-fact\n"
    )
