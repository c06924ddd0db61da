"""Time ``kvlint check`` over the real deployment corpus: ``../shared``'s files and the grown ones.

    python benchmarks/bench_corpus.py               # 5 runs, --jobs 1 and the default
    python benchmarks/bench_corpus.py --repeat 11

The files are copied into one temporary folder (so one run checks them all, as a repository
would be checked) and checked offline with no config. Each row gives the median wall time and
the median CPU time (user + system of kvlint and the processes it waited for, from ``wait4``):
on a shared machine the CPU time is the steadier figure. Run by hand; nothing asserts on it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from testing.shared import DEPLOYMENTS_REAL  # noqa: E402
from testing.shared import DEPLOYMENTS_REAL_MORE  # noqa: E402

KVLINT = Path(sys.executable).parent / "kvlint"


def _run(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    pid = os.spawnv(os.P_NOWAIT, argv[0], argv)
    _, _, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folders = [p for p in (DEPLOYMENTS_REAL, DEPLOYMENTS_REAL_MORE) if p.is_dir()]
    if not folders:
        print("no corpus folder on this machine", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for folder in folders:
            for path in folder.iterdir():
                if path.suffix in (".yaml", ".yml", ".json"):
                    shutil.copy(path, tmp)
        files = len(list(Path(tmp).iterdir()))
        print(f"{files} files from {', '.join(str(f) for f in folders)}")
        for jobs in ("1", str(os.cpu_count() or 1)):
            argv = [str(KVLINT), "check", "--offline", "--no-config", "--format", "concise"]
            argv += ["--jobs", jobs, tmp]
            with open(os.devnull, "w") as null:
                saved = os.dup(1), os.dup(2)
                os.dup2(null.fileno(), 1)
                os.dup2(null.fileno(), 2)
                try:
                    runs = [_run(argv) for _ in range(args.repeat)]
                finally:
                    os.dup2(saved[0], 1)
                    os.dup2(saved[1], 2)
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            print(f"--jobs {jobs}: median wall {wall:.2f} s, CPU {cpu:.2f} s ({args.repeat} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
