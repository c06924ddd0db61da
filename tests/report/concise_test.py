"""Tests for the concise reporter: the `path:line:col: CODE message` lines and statistics."""

from __future__ import annotations

import io

from kvlint.finding import Finding
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
    ),
    Finding("KV907", "missing-fact", Severity.INFO, Span("deploy/vllm.yaml", 1, 1), "no GPU type"),
    Finding(
        "KV301",
        "max-num-seqs-over-kv-budget",
        Severity.ERROR,
        Span("deploy/b.yaml", 3, 5),
        "`max_num_seqs` 64 needs more",
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
    assert report(ReportOptions()) == (
        "deploy/vllm.yaml:7:18: KV301 `max_num_seqs` 256 needs 274.9 GB of KV cache\n"
        "deploy/vllm.yaml:1:1: KV907 no GPU type\n"
        "deploy/b.yaml:3:5: KV301 `max_num_seqs` 64 needs more\n"
    )


def test_color() -> None:
    first = report(ReportOptions(color=True)).splitlines()[0]
    assert first == (
        "\033[1mdeploy/vllm.yaml:7:18\033[0m: \033[31mKV301\033[0m "
        "`max_num_seqs` 256 needs 274.9 GB of KV cache"
    )


def test_statistics() -> None:
    assert report(ReportOptions(statistics=True)) == (
        "    2  KV301    max-num-seqs-over-kv-budget\n    1  KV907    missing-fact\n"
    )
