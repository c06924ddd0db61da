"""Files linted across forked worker processes, results in file order, as a serial run gives.

A worker is a fork of the process that has already linted the first file, so it starts with
every module imported, the catalog read and that file's models resolved (copy-on-write, no
pickling of the rules or the settings); it lints every n-th file and sends the results back in
batches through a pipe. The parent starts no thread and waits on the pipes; files a worker
never returned (it was killed, or a bug ended it) are linted in the parent afterwards, so the
outcome is always the serial run's: the same report, or the same internal error. Where ``fork``
is not available (Windows) or not safe (macOS), files are linted serially.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar
from typing import cast

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from kvlint.linter import FileResult
    from kvlint.linter import Run

# A worker costs a fork, and each file's result is pickled back (a tenth more CPU in all at
# 1,000 files); with the first pool, 100 files on two workers saved nothing even on idle cores
# (benchmarks/README.md), so the pool starts at 100 files per worker.
MIN_FILES_PER_WORKER = 100
BATCH = 16  # results sent back at a time: the parent unpickles them while the workers go on

# What the forked workers read: set in the parent just before the pool forks, never pickled.
_STATE: tuple[Run, Sequence[tuple[Path, str]], Callable[[FileResult], Any]] | None = None
T = TypeVar("T")


def default_jobs() -> int:
    """The cores this process may run on that the machine's other work leaves idle; 1 under
    pre-commit.

    pre-commit already runs one kvlint per core, each on its chunk of the files: a pool inside
    each chunk only added forks and lost 16-21% to ``--jobs 1`` (issue 20). On a machine whose
    cores are busy (CI runners, a shared workstation), workers only take turns with that work:
    with Linux's per-session scheduling groups a second worker got no more of the CPU and the
    run took 4.3 s instead of 3.4 s on 2 cores with other sessions' test suites running. So a
    core counts only when the other work leaves it idle, as ``make --load-average`` decides,
    and that work is the lower of two counts: the one-minute load average, which still holds
    work that has ended (the command run before, a benchmark's previous run: one worker was
    chosen on an idle 2-core machine at a load of 0.9), and the tasks running now besides this
    one, which a moment's pause of a busy process can hide, but not for a minute.
    """
    if os.environ.get("PRE_COMMIT") == "1":
        return 1
    cores = _cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on this platform, or not readable
        return cores
    running = _running_now()
    if running is not None:
        load = min(load, max(0, running - 1))  # this process is one of those running
    return max(1, min(cores, int(cores - load + 0.5)))


# Linux: "0.52 0.61 0.70 3/812 4711": the fourth field is the tasks runnable now / all tasks.
_LOADAVG = "/proc/loadavg"


def _running_now() -> int | None:
    """The tasks runnable now (this one included), or None where the system does not say."""
    from kvlint.reading import read_prefix

    try:
        fields = read_prefix(_LOADAVG, 256).split()
        return int(fields[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def _cores() -> int:
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


def lint_files(run: Run, files: Sequence[tuple[Path, str]], jobs: int) -> list[FileResult]:
    """``lint_file`` over every file, with up to ``jobs`` processes; results in file order."""
    return list(each_file(run, files, jobs, shape=_whole))


def _whole(result: FileResult) -> FileResult:
    return result


def each_file(
    run: Run,
    files: Sequence[tuple[Path, str]],
    jobs: int,
    *,
    shape: Callable[[FileResult], T],
) -> Iterator[T]:
    """``shape(lint_file(...))`` of every file, in file order, each as soon as it and the files
    before it are done; the workers send the shaped results (``linter.compact``: no
    deployments to pickle)."""
    from kvlint import linter

    workers = workers_for(len(files), jobs)
    if workers < 2 or _threads_running():
        for path, display in files:
            yield shape(linter.lint_file(run, path, display))
        return
    import multiprocessing
    from multiprocessing.connection import wait

    pending: dict[int, T] = {}  # results that came back before those of earlier files
    # The first file is linted here, before the fork, so the workers inherit its imports.
    pending[0] = shape(linter.lint_file(run, *files[0]))
    done = 0  # files yielded so far
    context = multiprocessing.get_context("fork")
    global _STATE
    _STATE = (run, files, shape)
    gc.freeze()  # keep the collector from touching (and so copying) the parent's objects
    processes = []
    try:
        readers: dict[Connection[Any, Any], BaseProcess] = {}
        for first in range(1, workers + 1):
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(target=_work, args=(first, workers, writer), daemon=True)
            process.start()
            writer.close()  # the parent's copy: the reader sees EOF once the worker's is closed
            processes.append(process)
            readers[reader] = process
        while readers:
            for ready in wait(list(readers)):
                connection = cast("Connection[Any, Any]", ready)  # one of the readers
                try:
                    batch = connection.recv()
                except EOFError:  # the worker is done, or ended before sending everything
                    readers.pop(connection).join()
                    connection.close()
                    continue
                for index, result in batch:
                    pending[index] = result
            while done in pending:
                yield pending.pop(done)
                done += 1
    finally:
        gc.unfreeze()
        _STATE = None
        for process in processes:
            if process.is_alive():  # only when the parent is interrupted
                process.terminate()
            process.join()
    # What a worker never returned is linted here: the serial run's result, or its error.
    for index in range(done, len(files)):
        if index in pending:
            yield pending.pop(index)
        else:
            yield shape(linter.lint_file(run, *files[index]))


def _threads_running() -> bool:
    """Whether a thread besides the main one is alive (a Hub download given up on, still
    retrying): forking then could copy a lock it holds, so the files are linted serially."""
    threading = sys.modules.get("threading")  # never imported: no thread was ever started
    return threading is not None and threading.active_count() > 1


def _work(first: int, step: int, writer: Any) -> None:
    """A worker: files ``first``, ``first + step``, ... sent back in batches of ``BATCH``."""
    from kvlint import linter

    assert _STATE is not None, "a worker runs only inside each_file"
    run, files, shape = _STATE
    batch: list[tuple[int, Any]] = []
    try:
        for index in range(first, len(files), step):
            batch.append((index, shape(linter.lint_file(run, *files[index]))))
            if len(batch) == BATCH:
                writer.send(batch)
                batch = []
        if batch:
            writer.send(batch)
    except BaseException:
        # Quietly, without the traceback multiprocessing would print: the parent lints what is
        # missing and so reports the error as a serial run does (or stops, on an interrupt).
        pass
    finally:
        writer.close()
