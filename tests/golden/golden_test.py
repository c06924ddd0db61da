"""Golden end-to-end tests: the real CLI, run in-process, against exact expected output.

Each ``tests/golden/**/*.out`` file describes itself: its first line is the command,
``$ kvlint <argv>`` (split with :func:`shlex.split`), then what the command printed (stdout, then
stderr) and ``[exit N]``. Inputs are folders named ``<carrier>-<engine>[-<what>]``, written for
these tests; the ``.out`` files beside them are laid out by command:

- ``<case>.out``: ``check <case> --format concise``; ``full/<case>.out``: ``--format full``;
- ``size/<case>[.<file>].out`` and ``.json.out``: ``size`` on the case's files, ``size/catalog-*``
  on built-in models;
- ``explain/<code>-<case>.out``: ``explain <code> --file <case>``; ``solve/*.out``: ``solve``;
- ``real/<file>.concise.out`` and ``real/<file>.full.out``: every file of
  ``../shared/fixtures/deployments-real``, checked there (so the paths printed are the file
  names); they skip when that folder is absent (a bare clone).

Every other command runs with the working directory ``tests/golden``.

Adding a golden is writing its one ``$ kvlint ...`` line to a new ``.out`` file and running
``python -m pytest tests/golden --update-goldens``; review the diff. The same command writes the
two goldens of a file newly added to the real corpus.

Everything runs offline (``HF_HUB_OFFLINE=1``, an empty ``HF_HOME`` in the test's temporary
folder, printed as ``$TMP``) at a fixed terminal width, so the bytes do not depend on the machine.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.shared import DEPLOYMENTS_REAL
from testing.shared import requires_shared
from testing.shared import shared_file

HERE = Path(__file__).resolve().parent
REAL = HERE / "real"
PROMPT = "$ kvlint "
COLUMNS = "120"  # the width rich's tables (size, solve) and argparse's help are laid out at

# The two goldens each real deployment file gets (``real/<file>.<kind>.out``).
REAL_KINDS = {
    "concise": ["--format", "concise", "--color", "never"],
    "full": ["--format", "full", "--color", "never"],
}

# Input folders whose goldens pin a known internal error of today's code (each a bug with its
# issue); any other golden showing "internal error" fails, so a new KV900 is never recorded by
# accident. The fix deletes the entry and regenerates the goldens. None today.
KNOWN_INTERNAL_ERRORS: dict[str, str] = {}

GOLDENS = sorted(path.relative_to(HERE).as_posix() for path in HERE.rglob("*.out"))


def real_files() -> list[str]:
    """The real corpus's deployment files (its notes, ``*.md``, are not deployments)."""
    if not DEPLOYMENTS_REAL.is_dir():
        return []
    return sorted(p.name for p in DEPLOYMENTS_REAL.iterdir() if p.is_file() and p.suffix != ".md")


def command_of(golden: Path) -> list[str]:
    first = golden.read_text(encoding="utf-8").partition("\n")[0]
    assert first.startswith(PROMPT), f"{golden.name}: the first line must be `{PROMPT}<argv>`"
    return shlex.split(first[len(PROMPT) :])


def render(argv: list[str], capsys: pytest.CaptureFixture[str], tmp: Path) -> str:
    """What a user sees; the per-test temporary folder (``HF_HOME`` is in it) reads ``$TMP``."""
    result = run_cli(argv, capsys)
    shown = f"{PROMPT}{shlex.join(argv)}\n{result.out}{result.err}[exit {result.code}]\n"
    return shown.replace(str(tmp), "$TMP")


@pytest.fixture
def golden_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no machine cache, no network
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", COLUMNS)
    monkeypatch.delenv("LINES", raising=False)
    for name in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def check_output(name: str, actual: str) -> None:
    assert "Traceback" not in actual
    if not any(case in name for case in KNOWN_INTERNAL_ERRORS):
        assert "internal error" not in actual, f"{name}: a new internal error"


@pytest.mark.parametrize("name", GOLDENS, ids=GOLDENS)
def test_golden(
    name: str,
    golden_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    golden = HERE / name
    if golden.is_relative_to(REAL):
        monkeypatch.chdir(shared_file(DEPLOYMENTS_REAL))  # skips on a bare clone
    else:
        monkeypatch.chdir(HERE)
    argv = command_of(golden)
    actual = render(argv, capsys, golden_env)
    check_output(name, actual)
    if request.config.getoption("--update-goldens"):
        golden.write_text(actual, encoding="utf-8")
        return
    assert actual == golden.read_text(encoding="utf-8")


@requires_shared
def test_every_real_file_has_goldens(
    golden_env: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """Both goldens of every file of the real corpus exist (``--update-goldens`` writes them)."""
    monkeypatch.chdir(DEPLOYMENTS_REAL)
    update = request.config.getoption("--update-goldens")
    missing = []
    for file in real_files():
        for kind, options in REAL_KINDS.items():
            golden = REAL / f"{file}.{kind}.out"
            if golden.exists():
                continue
            if not update:
                missing.append(golden.name)
                continue
            actual = render(["check", file, "--offline", *options], capsys, golden_env)
            check_output(golden.name, actual)
            REAL.mkdir(exist_ok=True)
            golden.write_text(actual, encoding="utf-8")
    assert not missing, f"run `python -m pytest tests/golden --update-goldens`: {missing}"


def test_goldens_name_their_command() -> None:
    for name in GOLDENS:
        argv = command_of(HERE / name)
        assert argv, f"{name}: no command after `{PROMPT}`"
