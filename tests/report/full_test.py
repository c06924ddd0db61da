"""The full reporter: code frame, fix title, the numbers behind a finding, the summary line."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path

import pytest

from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import CodeCount
from kvlint.report.base import ReportOptions
from kvlint.report.full import FullReporter
from kvlint.report.full import code_frame
from tests.report.records import DEPLOY_YAML
from tests.report.records import KV301
from tests.report.records import result
from tests.report.records import summary


def render(options: ReportOptions, *, with_deployment: bool = True) -> str:
    stream = io.StringIO()
    reporter = FullReporter(stream, options)
    reporter.start()
    if with_deployment:
        reporter.deployment(result())
    reporter.finding(KV301)
    reporter.finish(summary({"error": 1}))
    return stream.getvalue()


@pytest.fixture
def in_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "deploy.yaml").write_text(DEPLOY_YAML, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_finding_with_frame_fix_and_numbers(in_repo: Path) -> None:
    assert render(ReportOptions(color=False)) == (
        "deploy.yaml:3:15: KV301 [error] `max_num_seqs` 256 sequences of 32,768 tokens need "
        "1 TiB; the pool admits 15\n"
        "  |\n"
        "2 | max-model-len: 32768\n"
        "3 | max-num-seqs: 256\n"
        "  |               ^^^ KV301\n"
        "4 | gpu-memory-utilization: 0.9\n"
        "  |\n"
        "  = fix: Lower `max_num_seqs` to 15\n"
        "    KV per token        128 KiB\n"
        "    KV per sequence     4 GiB at 32,768 tokens\n"
        "    KV pool             491,520 tokens in 60 GiB\n"
        "    admitted sequences  15.00x of 256 requested\n"
        "\n"
        "Found 1 error in 1 file, 1 deployment.\n"
    )


def test_the_findings_own_numbers_win(in_repo: Path) -> None:
    stream = io.StringIO()
    reporter = FullReporter(stream)
    reporter.deployment(result())
    reporter.finding(KV301._replace(numbers=(("needed", "1 TiB"), ("pool", "60 GiB"))))
    reporter.finish(summary({"error": 1}))
    assert "    needed  1 TiB\n    pool    60 GiB\n" in stream.getvalue()
    assert "KV per token" not in stream.getvalue()


def test_missing_file_means_no_frame_but_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = render(ReportOptions(color=False), with_deployment=False)
    assert out == (
        "deploy.yaml:3:15: KV301 [error] `max_num_seqs` 256 sequences of 32,768 tokens need "
        "1 TiB; the pool admits 15\n"
        "  = fix: Lower `max_num_seqs` to 15\n"
        "\n"
        "Found 1 error in 1 file, 1 deployment.\n"
    )


def test_color_only_when_asked(in_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # NO_COLOR is the check command's business (it sets ReportOptions.color); an explicit
    # choice must win over the environment either way.
    monkeypatch.setenv("NO_COLOR", "1")
    colored = render(ReportOptions(color=True))
    assert "\x1b[1;31mKV301\x1b[0m" in colored
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" not in render(ReportOptions(color=False))


def test_fix_title_hidden_when_fixes_are_not_shown(in_repo: Path) -> None:
    assert "fix:" not in render(ReportOptions(show_fixes=False))


def test_statistics_count_per_code() -> None:
    stream = io.StringIO()
    reporter = FullReporter(stream, ReportOptions(statistics=True))
    reporter.finding(KV301)
    by_code = (
        CodeCount("KV301", "max-num-seqs-over-kv-budget", 12, Severity.ERROR, 0, 12),
        CodeCount("KV903", "unknown-gpu", 1, Severity.WARNING),
    )
    done = replace(summary({"error": 12, "warning": 1}, files=3, deployments=4), by_code=by_code)
    reporter.finish(done)
    assert stream.getvalue() == (
        "12  KV301  error    [~]  max-num-seqs-over-kv-budget\n"
        " 1  KV903  warning       unknown-gpu\n"
        "Found 12 errors, 1 warning in 3 files, 4 deployments.\n"
    )


def test_clean_run() -> None:
    stream = io.StringIO()
    reporter = FullReporter(stream)
    reporter.finish(summary({}, files=2, deployments=3))
    assert stream.getvalue() == "All checks passed (2 files, 3 deployments).\n"


def test_info_is_a_mass_noun() -> None:
    stream = io.StringIO()
    FullReporter(stream).finish(summary({"warning": 2, "info": 3}))
    assert stream.getvalue() == "Found 2 warnings, 3 info in 1 file, 1 deployment.\n"


@pytest.mark.parametrize(
    ("span", "caret"),
    [
        (Span("a", 2, 3, end_column=5), "  |   ^^ KV301"),  # the span's own width
        (Span("a", 2, 3), "  |   ^^^ KV301"),  # no end: the word at the column, no comma
        (Span("a", 2, 9), "  |         ^ KV301"),  # past the end of the line
        (Span("a", 2, 3, end_column=2, end_line=3), "  |   ^^^ KV301"),  # crosses lines
    ],
)
def test_caret_under_the_value(span: Span, caret: str) -> None:
    lines = ["x: 1", "y: 32k, # note", "z: 3"]
    frame = code_frame(lines, KV301._replace(span=span, severity=Severity.WARNING))
    assert frame is not None
    assert frame.plain.splitlines()[3] == caret


def test_no_frame_for_a_line_outside_the_file() -> None:
    assert code_frame(["x: 1"], KV301._replace(span=Span("a", 5, 1))) is None
    assert code_frame([], KV301._replace(span=Span("a", 0, 1))) is None


def test_control_characters_never_reach_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A form feed must not shift the line numbers; an escape sequence must not be sent.
    text = "a: 1\x0c\nmax-num-seqs: 256 # \x1b]0;owned\x07\x1b[2J\n"
    (tmp_path / "deploy.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    stream = io.StringIO()
    reporter = FullReporter(stream, ReportOptions(color=True))
    finding = KV301._replace(
        span=Span("deploy.yaml", 2, 15), message="value `\x1b[31m256`", fix=None
    )
    reporter.finding(finding)
    reporter.finish(summary({"error": 1}))
    out = stream.getvalue()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)  # rich's own styling, nothing else
    assert "\x1b" not in plain and "\x07" not in plain
    assert "value `\u241b[31m256`" in plain
    assert "1 | a: 1\u240c\n2 | max-num-seqs: 256 # \u241b]0;owned\u2407\u241b[2J\n" in plain
    assert "  |               ^^^ KV301" in plain
