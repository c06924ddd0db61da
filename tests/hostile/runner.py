"""Run the real ``kvlint`` as a child process under a memory cap, timing it and its peak RSS."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# A hang guard, not a timed assertion: a healthy run takes about a second.
TIMEOUT_S = 60.0
MEMORY_LIMIT = 1 << 30  # RLIMIT_AS of the child: 1 GiB of address space
ROOT = Path(__file__).resolve().parents[2]

# One finding in `--format concise`: path:line:col: CODE message
FINDING_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>KV\d{3}) ")


@dataclass(frozen=True)
class Outcome:
    """What a user would see, and what it cost."""

    code: int
    out: str
    err: str
    seconds: float
    peak_rss_kib: int  # ru_maxrss of the child alone (os.wait4), in KiB on Linux

    @property
    def text(self) -> str:
        return self.out + self.err

    def lines(self) -> list[str]:
        return [line for line in self.text.splitlines() if line.strip()]


def _limit_memory() -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment: offline, no colour, no GitHub Actions, an empty HF cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "GITHUB_", "KVLINT"))}
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(Path(tempfile.gettempdir()) / "kvlint-hostile-no-hf-home"),
            "NO_COLOR": "1",
            "PYTHONPATH": str(ROOT),
        }
    )
    env.update(extra or {})
    return env


def run_kvlint(
    args: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT_S,
) -> Outcome:
    """``python -m kvlint ARGS`` in ``cwd``; killed (and the test failed) after ``timeout``."""
    return run_python(["-m", "kvlint", *args], cwd, env, timeout=timeout)


def run_python(
    args: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    *,
    timeout: float = TIMEOUT_S,
) -> Outcome:
    """``python ARGS`` in ``cwd`` under the memory cap, timed, with its own peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, *args],
            cwd=cwd,
            env=child_env(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=_limit_memory,
        )
        status, usage = _wait(proc, start + timeout, timeout)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Outcome(
            os.waitstatus_to_exitcode(status),
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
            usage.ru_maxrss,
        )


def _wait(
    proc: subprocess.Popen[bytes], deadline: float, timeout: float
) -> tuple[int, resource.struct_rusage]:
    """Reap the child with ``os.wait4`` (its own rusage), killing it at ``deadline``."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return status, usage
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            proc.returncode = -9
            raise AssertionError(f"kvlint did not finish within {timeout:g} s: a hang")
        time.sleep(0.02)
