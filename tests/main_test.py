"""Tests for kvlint.main: the parser's help matches argparse's own formatter, width included;
the command line leaves what start-up made out of the exit's collection."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlint import main


@pytest.mark.parametrize("columns", ["50", "120"])
def test_help_is_argparses_at_the_terminal_width(
    columns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    ours = main.build_parser(["check"])
    theirs = main.build_parser(["check"])
    theirs.formatter_class = argparse.HelpFormatter
    assert ours.format_help() == theirs.format_help()
    ours_check, theirs_check = _check_parser(ours), _check_parser(theirs)
    assert ours_check.formatter_class is main.HelpFormatter
    theirs_check.formatter_class = argparse.HelpFormatter
    assert ours_check.format_help() == theirs_check.format_help()


def _check_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices["check"]
    return found


def test_a_width_that_is_not_a_number_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "wide")
    assert main._columns() >= 1


CONFIG = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\n"


@pytest.fixture
def checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "vllm.yaml"
    path.write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = gc.get_freeze_count()
    yield path
    if gc.get_freeze_count() != before:
        gc.unfreeze()  # what the command line froze goes back to this test process's collector


def test_the_command_line_leaves_its_objects_out_of_the_exits_collection(
    checked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["kvlint", "check", "--gpu", "H100", str(checked)])
    assert main.main() == 0, capsys.readouterr()
    assert gc.get_freeze_count() > 0


def test_a_caller_passing_argv_keeps_its_collector(
    checked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = gc.get_freeze_count()
    assert main.main(["check", "--gpu", "H100", str(checked)]) == 0, capsys.readouterr()
    assert gc.get_freeze_count() == before
