"""``--jobs``: files checked across processes give the report a serial run gives, byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kvlint import linter
from kvlint import parallel
from kvlint.config import Settings
from kvlint.linter import FileResult
from kvlint.linter import lint_paths
from kvlint.selection import Selection
from testing.cli import run_cli
from testing.shared import REPO

# Every deployment file the repository itself holds: each carrier, each engine, plans whose
# schema fails, a model only a path names; copied into several folders to make a repository.
INPUTS = sorted(
    p
    for folder in ("tests/golden", "tests/fixtures/deployments", "examples")
    for p in (REPO / folder).rglob("*.y*ml")
    if not p.name.startswith(".") and "kvlint-plugin-example" not in p.parts
)
COPIES = 9

pytestmark = pytest.mark.skipif(
    parallel.workers_for(10_000, 2) < 2, reason="no fork on this platform: --jobs runs serially"
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    for copy in range(COPIES):
        for source in INPUTS:
            target = root / f"team-{copy}" / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    # Input problems and unused suppressions (KV906) travel back from the workers too.
    (root / "team-0" / "broken.yaml").write_text("model: [unclosed\n")
    (root / "team-1" / "binary.yaml").write_bytes(b"\x00\x01\x02 not yaml")
    (root / "team-2" / "suppressed.yaml").write_text(
        "# kvlint: disable=KV905 not ours\napiVersion: v1\nkind: Secret\nmetadata: {name: x}\n"
        "---\n# kvlint: disable=KV301 stale\nmodel: meta-llama/Llama-3.1-8B-Instruct\n"
    )
    return root


def record_pids(monkeypatch: pytest.MonkeyPatch, pids: Path) -> Path:
    """Make every process that lints a file write its pid to ``pids`` (forked workers inherit
    the patched module), so a test knows where the files were really linted."""
    original = linter.lint_file

    def recording(run: linter.Run, path: Path, display: str) -> FileResult:
        with pids.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
        return original(run, path, display)

    monkeypatch.setattr(linter, "lint_file", recording)
    return pids


def test_the_repository_is_big_enough_for_two_workers(repo: Path) -> None:
    files = linter.collect_files([str(repo)])
    assert len(files) == COPIES * len(INPUTS) + 3
    assert parallel.workers_for(len(files), 2) == 2


def test_parallel_result_equals_serial(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(Selection(), gpu="H100-80GB", offline=True)
    serial = lint_paths([str(repo)], settings, jobs=1)

    pids = record_pids(monkeypatch, tmp_path / "pids")
    pooled = lint_paths([str(repo)], settings, jobs=2)

    seen = set(pids.read_text().split())
    assert len(seen - {str(os.getpid())}) == 2  # two workers, besides the parent's first file
    assert pooled.files == serial.files
    assert pooled.findings == serial.findings
    assert pooled.deployments == serial.deployments
    assert pooled == serial
    assert {f.code for f in serial.findings} >= {"KV301", "KV901", "KV906"}


@pytest.mark.parametrize("fmt", ["concise", "json", "sarif"])
def test_cli_output_is_identical_with_and_without_jobs(
    repo: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", "--no-config", "--offline", "--format", fmt, str(repo)]
    serial = run_cli([*args, "--jobs", "1"], capsys)
    pooled = run_cli([*args, "--jobs", "2"], capsys)
    default = run_cli(args, capsys)
    assert serial.code == 2  # the unreadable files
    assert pooled == serial
    assert default == serial
    assert serial.out.count("KV901") >= 2


def test_few_files_are_checked_in_this_process() -> None:
    assert parallel.workers_for(1, 8) == 1
    assert parallel.workers_for(parallel.MIN_FILES_PER_WORKER * 2 - 1, 8) == 1
    assert parallel.workers_for(parallel.MIN_FILES_PER_WORKER * 2, 8) == 2
    assert parallel.workers_for(10_000, 3) == 3
    assert parallel.default_jobs() >= 1


@pytest.fixture(autouse=True)
def _running_unknown(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The tasks running now unknown (as off Linux): the load average alone decides, whatever
    this machine runs while the tests do; a test that wants a count writes one."""
    monkeypatch.setattr(parallel, "_LOADAVG", str(tmp_path / "no-loadavg"))


def _running(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, running: int) -> None:
    path = tmp_path / "loadavg"
    path.write_text(f"0.90 0.80 0.70 {running}/812 4711\n")
    monkeypatch.setattr(parallel, "_LOADAVG", str(path))


def test_the_default_is_the_cores_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.5, 0.5), raising=False)
    assert parallel.default_jobs() == 3


@pytest.mark.parametrize(("load", "jobs"), [(0.4, 3), (0.6, 2), (1.9, 1), (2.6, 1), (7.0, 1)])
def test_the_default_leaves_out_the_cores_other_work_keeps_busy(
    monkeypatch: pytest.MonkeyPatch, load: float, jobs: int
) -> None:
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load), raising=False)
    assert parallel.default_jobs() == jobs


@pytest.mark.parametrize(
    ("load", "running", "jobs"),
    [
        (0.9, 1, 2),  # the previous command's load, gone now: both cores
        (0.9, 2, 1),  # one other task running now: as the average says
        (1.6, 2, 1),
        (3.0, 1, 2),  # a burst that just ended
        (3.0, 3, 1),  # two others running now, and for the past minute
        (0.2, 5, 2),  # a moment's crowd the past minute did not have: the average
    ],
)
def test_work_that_has_ended_does_not_count_as_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, load: float, running: int, jobs: int
) -> None:
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load), raising=False)
    _running(monkeypatch, tmp_path, running)
    assert parallel.default_jobs() == jobs


def test_the_running_count_is_read_from_the_system(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where the system says, this process is one of the tasks running now.
    monkeypatch.setattr(parallel, "_LOADAVG", "/proc/loadavg")
    found = parallel._running_now()
    if not Path("/proc/loadavg").is_file():
        assert found is None
    else:
        assert found is not None and found >= 1


def test_under_pre_commit_each_chunk_is_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # pre-commit runs a kvlint per core already, each on a chunk of the files.
    monkeypatch.setenv("PRE_COMMIT", "1")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0), raising=False)
    assert parallel.default_jobs() == 1


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["check", "--jobs", value, "examples/deploy.yaml"], capsys)
    assert result.code == 2
    assert "--jobs" in result.err
    assert f"expected a whole number of processes, got {value!r}" in result.err


def test_a_live_thread_keeps_the_run_serial(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = record_pids(monkeypatch, tmp_path / "pids")
    release = threading.Event()
    thread = threading.Thread(target=release.wait, daemon=True)
    thread.start()
    try:
        result = lint_paths([str(repo)], Settings(Selection(), offline=True), jobs=2)
    finally:
        release.set()
        thread.join()
    assert set(pids.read_text().split()) == {str(os.getpid())}
    assert len(result.files) == COPIES * len(INPUTS) + 3


def test_files_a_killed_worker_never_returned_are_linted_here(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(Selection(), offline=True)
    serial = lint_paths([str(repo)], settings, jobs=1)
    parent = os.getpid()
    original = linter.lint_file

    def dying(run: linter.Run, path: Path, display: str) -> FileResult:
        if os.getpid() != parent and path.name == "values.yaml":
            (tmp_path / f"killed-{os.getpid()}").touch()
            os._exit(9)  # as the kernel's OOM killer would end it: no exception, no message
        return original(run, path, display)

    monkeypatch.setattr(linter, "lint_file", dying)
    assert lint_paths([str(repo)], settings, jobs=2) == serial
    assert len(list(tmp_path.glob("killed-*"))) == 2  # both workers met a values.yaml and died


def test_a_bug_in_a_worker_is_the_serial_runs_error_without_a_traceback(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    original = linter.lint_file

    def buggy(run: linter.Run, path: Path, display: str) -> FileResult:
        if path.name == "values.yaml":
            raise ZeroDivisionError("a bug outside the per-file guards")
        return original(run, path, display)

    monkeypatch.setattr(linter, "lint_file", buggy)
    with pytest.raises(ZeroDivisionError, match="outside the per-file guards"):
        lint_paths([str(repo)], Settings(Selection(), offline=True), jobs=2)
    assert "Traceback" not in capfd.readouterr().err


def test_output_buffered_before_the_workers_start_is_written_once(repo: Path) -> None:
    # stdout is a pipe here, so the print sits in a buffer each forked worker copies and flushes
    # when it ends (multiprocessing's fork flushes the streams first; a bare os.fork would not).
    probe = (
        "import sys\n"
        "print('printed before the check')\n"
        "from kvlint.main import main\n"
        "raise SystemExit(main(['check', '--no-config', '--offline', '--format', 'concise',"
        " '--jobs', '2', sys.argv[1]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout.count("printed before the check") == 1
    assert done.stdout.count("KV901") >= 2
