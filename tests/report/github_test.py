"""The GitHub reporter: workflow commands with GitHub's escaping, one per finding."""

from __future__ import annotations

import io

import pytest

from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import Summary
from kvlint.report.github import GithubReporter
from kvlint.report.github import escape_data
from kvlint.report.github import escape_property
from kvlint.report.github import workflow_command

FINDING = Finding(
    code="KV301",
    name="max-num-seqs-over-kv-budget",
    severity=Severity.ERROR,
    span=Span("deploy/vllm.yaml", 7, 18),
    message="`max_num_seqs` 256 exceeds the 12 sequences the pool admits",
)


def test_error_command() -> None:
    assert workflow_command(FINDING) == (
        "::error file=deploy/vllm.yaml,line=7,col=18,title=KV301::"
        "`max_num_seqs` 256 exceeds the 12 sequences the pool admits"
    )


@pytest.mark.parametrize(
    ("severity", "command"),
    [(Severity.ERROR, "error"), (Severity.WARNING, "warning"), (Severity.INFO, "notice")],
)
def test_level_follows_severity(severity: Severity, command: str) -> None:
    assert workflow_command(FINDING._replace(severity=severity)).startswith(f"::{command} file=")


def test_escaping_of_data_and_properties() -> None:
    assert escape_data("50% of 1,024: a\r\nb") == "50%25 of 1,024: a%0D%0Ab"
    assert escape_property("50% of 1,024: a\r\nb") == "50%25 of 1%2C024%3A a%0D%0Ab"


def test_path_with_comma_and_colon_and_multiline_message_with_fix() -> None:
    finding = FINDING._replace(
        span=Span("c:/a,b/x.yaml", 3, 9, end_column=12),
        message="100% of 1,024 tokens: too many\nsecond line",
        fix=Fix("Set max_num_seqs: 12"),
    )
    assert workflow_command(finding) == (
        "::error file=c%3A/a%2Cb/x.yaml,line=3,col=9,endColumn=12,title=KV301::"
        "100%25 of 1,024 tokens: too many%0Asecond line%0AFix: Set max_num_seqs: 12"
    )


def test_end_line_only_when_the_span_crosses_lines() -> None:
    finding = FINDING._replace(span=Span("a.yaml", 3, 9, end_column=2, end_line=5))
    assert workflow_command(finding).startswith(
        "::error file=a.yaml,line=3,col=9,endLine=5,endColumn=2,title=KV301::"
    )


def test_reporter_streams_one_line_per_finding() -> None:
    stream = io.StringIO()
    reporter = GithubReporter(stream)
    reporter.start()
    reporter.finding(FINDING)
    reporter.finding(FINDING._replace(span=Span("b.yaml", 2, 3), severity=Severity.WARNING))
    reporter.finish(Summary(2, 2, {"error": 1, "warning": 1}, (), Severity.WARNING, 1))
    assert stream.getvalue().splitlines() == [
        "::error file=deploy/vllm.yaml,line=7,col=18,title=KV301::"
        "`max_num_seqs` 256 exceeds the 12 sequences the pool admits",
        "::warning file=b.yaml,line=2,col=3,title=KV301::"
        "`max_num_seqs` 256 exceeds the 12 sequences the pool admits",
    ]


def test_dot_slash_is_dropped_from_the_file() -> None:
    finding = FINDING._replace(span=Span("./deploy/vllm.yaml", 7, 18))
    assert workflow_command(finding).startswith("::error file=deploy/vllm.yaml,line=7,")
