"""Run the real CLI in-process and capture what a user would see."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from kvlint.main import main


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run_cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> Result:
    code = main(list(argv))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)
