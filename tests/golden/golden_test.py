"""Golden end-to-end tests: realistic repositories under ``tests/golden/<case>/`` run through the
real CLI; the output and exit code must match ``tests/golden/<case>.out`` exactly.

``pytest tests/golden --update-goldens`` rewrites the ``.out`` files; review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.cli import run_cli

HERE = Path(__file__).resolve().parent
CASES = sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def render(case: str, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["check", case, "--offline", "--format", "concise", "--color", "never"]
    result = run_cli(argv, capsys)
    return f"$ kvlint {' '.join(argv)}\n{result.out}{result.err}[exit {result.code}]\n"


@pytest.mark.parametrize("case", CASES)
def test_golden(
    case: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no machine cache, no network
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(HERE)
    actual = render(case, capsys)
    assert "Traceback" not in actual
    assert "internal error" not in actual
    expected_path = HERE / f"{case}.out"
    if request.config.getoption("--update-goldens"):
        expected_path.write_text(actual, encoding="utf-8")
        return
    assert expected_path.exists(), f"{expected_path.name} is missing: run with --update-goldens"
    assert actual == expected_path.read_text(encoding="utf-8")
