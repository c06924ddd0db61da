"""Files linted across a pool of forked processes, results in file order, as a serial run gives.

A worker is a fork of the process that has already linted the first file, so it starts with
every module imported, the catalog read and that file's models resolved (copy-on-write, no
pickling of the rules or the settings); each worker then resolves the models it meets once.
Only the per-file results travel back, and ``Pool.map`` returns them in the order of the files.
Where ``fork`` is not available (Windows) or not safe (macOS), files are linted serially.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from kvlint.linter import FileResult
    from kvlint.linter import _Run

# A worker costs a fork, and each file's result is pickled back (about 0.5 ms of the 2 to 3 ms a
# file takes); below this many files per worker the pool saves too little on two busy cores
# (benchmarks/README.md), so a pre-commit run over a handful of files never forks.
MIN_FILES_PER_WORKER = 48
MAX_CHUNK = 32  # files handed to a worker at a time: small enough to balance the workers

# What the forked workers read: set in the parent just before the pool forks, never pickled.
_STATE: tuple[_Run, Sequence[tuple[Path, str]]] | None = None


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def workers_for(files: int, jobs: int) -> int:
    """How many processes lint ``files`` files when ``jobs`` are allowed (1: serially)."""
    workers = min(jobs, files // MIN_FILES_PER_WORKER)
    if workers < 2 or sys.platform in ("win32", "darwin"):
        return 1
    return workers


def lint_files(run: _Run, files: Sequence[tuple[Path, str]], jobs: int) -> list[FileResult]:
    """``_lint_file`` over every file, with up to ``jobs`` processes; results in file order."""
    from kvlint import linter

    workers = workers_for(len(files), jobs)
    if workers < 2 or _threads_running():
        return [linter._lint_file(run, path, display) for path, display in files]
    import multiprocessing

    # The first file is linted here, before the fork, so the workers inherit its imports.
    results = [linter._lint_file(run, *files[0])]
    global _STATE
    _STATE = (run, files)
    chunk = max(1, min(MAX_CHUNK, (len(files) - 1) // (workers * 4)))
    gc.freeze()  # keep the collector from touching (and so copying) the parent's objects
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results.extend(pool.map(_lint_one, range(1, len(files)), chunksize=chunk))
    finally:
        gc.unfreeze()
        _STATE = None
    return results


def _threads_running() -> bool:
    """Whether a thread besides the main one is alive (a Hub download given up on, still
    retrying): forking then could copy a lock it holds, so the files are linted serially."""
    threading = sys.modules.get("threading")  # never imported: no thread was ever started
    return threading is not None and threading.active_count() > 1


def _lint_one(index: int) -> Any:
    from kvlint import linter

    assert _STATE is not None, "a worker runs only inside lint_files"
    run, files = _STATE
    path, display = files[index]
    return linter._lint_file(run, path, display)
