"""Tests for kvlint.main: the parser's help matches argparse's own formatter, width included."""

from __future__ import annotations

import argparse

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
