"""``concise`` and ``github`` reports are written as each file is checked, with the summary
from counters: byte for byte the report made at the end of the run (which ``--output-file``
still writes), however the walk orders the files."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from kvlint import linter
from testing.cli import run_cli
from testing.shared import REPO

OVER_BUDGET = (REPO / "examples" / "deploy.yaml").read_text()
INFO_ONLY = (
    "# vllm serve --config c.yaml\nmodel: unsloth/Llama-3.1-8B-Instruct\nmax-model-len: 4096\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Files whose walk order (folder by folder) is not the order of their paths as text:
    `a-b.yaml` sorts before `a/b.yaml` as a string, after it in the walk."""
    root = tmp_path / "repo"
    for name in ("a/b.yaml", "a-b.yaml", "a/c/d.yaml", "a.yaml", "z/x.yaml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "examples" / "deploy.yaml", root / name)
    (root / "a" / "info.yaml").write_text(INFO_ONLY)
    (root / "a" / "broken.yaml").write_text("model: [unclosed\n")
    (root / "z" / ".kvlint.yaml").write_text("fail-on: error\n")  # a config of its own
    return root


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--quiet"],
        ["--statistics"],
        ["--exit-zero"],
        ["--format", "github"],
        ["--fail-on", "info", "--quiet"],
    ],
)
def test_the_streamed_report_is_the_report_made_at_the_end(
    repo: Path, extra: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["check", "--offline", "--gpu", "H100", "--format", "concise", *extra, str(repo)]
    streamed = run_cli(args, capsys)
    whole = tmp_path / "whole.txt"
    at_the_end = run_cli([*args, "--output-file", str(whole)], capsys)
    assert streamed.out == whole.read_text()  # --output-file: the report made at the end
    assert streamed.code == at_the_end.code
    assert streamed.err == at_the_end.err
    assert streamed.out  # findings were reported


def test_each_file_is_written_before_the_next_is_checked(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    original = linter.lint_file

    def lint_file(run: linter.Run, path: Path, display: str, data: bytes | None = None) -> Any:
        events.append(f"out so far: {capsys.readouterr().out.count(chr(10))} lines")
        return original(run, path, display, data)

    monkeypatch.setattr(linter, "lint_file", lint_file)
    result = run_cli(
        ["check", "--offline", "--format", "concise", "--jobs", "1", str(repo)], capsys
    )
    assert result.code == 2
    counts = [int(e.split()[3]) for e in events]
    assert len(counts) == 7
    assert sum(counts) > 0  # lines were written while later files were still to be checked


def test_the_exit_code_counts_what_quiet_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c.yaml").write_text(INFO_ONLY)
    args = ["check", "--offline", "--gpu", "H100", "--format", "concise", "--fail-on", "info"]
    loud = run_cli([*args, str(tmp_path / "c.yaml")], capsys)
    quiet = run_cli([*args, "--quiet", str(tmp_path / "c.yaml")], capsys)
    assert loud.code == quiet.code == 1
    assert "[info]" in loud.out
    assert "[info]" not in quiet.out
