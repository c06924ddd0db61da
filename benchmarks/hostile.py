"""What kvlint answers each hostile reproducer with: the exit code, the first line, the time and
the peak memory of the real CLI, run as the tests run it (a child under a 1 GiB RLIMIT_AS and a
60 s hang guard, offline). Run by hand; the figures go into issue notes, never into assertions.

    python benchmarks/hostile.py                 # every reproducer (about two minutes)
    python benchmarks/hostile.py --only gpu,sh   # the reproducers whose name holds a word
    python benchmarks/hostile.py --format tsv

The inputs are the ones ``tests/hostile/`` pins: the corpus (``corpus_test.build``), the long
inputs that were super-linear (``long_inputs_test.CASES``), and the edge values, reads and
solver bounds below.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.hostile import corpus_test  # noqa: E402
from tests.hostile import long_inputs_test  # noqa: E402
from tests.hostile.runner import Outcome  # noqa: E402
from tests.hostile.runner import run_kvlint  # noqa: E402
from tests.hostile.scaling_test import remove_tree  # noqa: E402

CHECK = ("check", "--offline", "--no-config", "--format", "concise", "--color", "never")
MODEL = "model: meta-llama/Llama-3.1-8B-Instruct\n"
SOLVE = ("solve", "--offline", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100")


class Case(NamedTuple):
    name: str
    args: tuple[str, ...]
    prepare: Callable[[Path], None]  # writes the inputs into the case's folder
    cwd: Path | None = None  # where it runs when not in that folder (the corpus's cases)


def _write(name: str, text: str | bytes) -> Callable[[Path], None]:
    def prepare(root: Path) -> None:
        path = root / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)

    return prepare


def _model_dir(config: str, index: str | None = None) -> Callable[[Path], None]:
    """A model folder whose config.json (and safetensors index) is a FIFO, a /dev/zero link,
    too large or regular, and a deployment serving it."""

    def prepare(root: Path) -> None:
        folder = root / "model"
        folder.mkdir()
        for name, how in (("config.json", config), ("model.safetensors.index.json", index)):
            path = folder / name
            if how == "regular":
                path.write_text(json.dumps(corpus_test_config()))
            elif how == "fifo":
                os.mkfifo(path)
            elif how == "zero":
                path.symlink_to("/dev/zero")
            elif how == "large":
                path.write_text('{"pad": "' + "x" * (5 * 2**20) + '"}')
            elif how == "1e400":
                path.write_text('{"metadata": {"total_size": 1e400}, "weight_map": {}}')
        (root / "deploy.yaml").write_text("model: ./model\nmax-model-len: 4096\n")

    return prepare


def corpus_test_config() -> dict[str, object]:
    from tests.hostile.reads_test import CONFIG

    return dict(CONFIG)


def _entries(text: str) -> Callable[[Path], None]:
    return _write("entries.yaml", MODEL + text)


def _pyproject(content: bytes) -> Callable[[Path], None]:
    def prepare(root: Path) -> None:
        (root / ".git").mkdir()
        (root / "pyproject.toml").write_bytes(content)
        (root / "x.yaml").write_text(MODEL)

    return prepare


def _deep_tree(root: Path) -> None:
    from tests.hostile.scaling_test import _nested

    _nested(root, 1_900)


def _nothing(root: Path) -> None:
    """A case whose input is its command line."""


def cases() -> list[Case]:
    found: list[Case] = []
    corpus = Path(tempfile.mkdtemp(prefix="kvlint-hostile-corpus-"))
    corpus_test.build(corpus)
    for name in sorted(corpus_test.CASES):
        found.append(Case(f"corpus: {name!r}", (*CHECK, name), _nothing, corpus))
    for name, (make, _, _) in sorted(long_inputs_test.CASES.items()):
        found.append(Case(f"long input: {name}", (*CHECK, name), _write(name, make())))
    found += [
        Case("int of 5,002 hex digits", (*CHECK, "x.yaml"),
             _write("x.yaml", f"{MODEL}max-model-len: 0x{'f' * 5000}\n")),
        Case("int of 20,002 binary digits", (*CHECK, "x.yaml"),
             _write("x.yaml", f"{MODEL}max-model-len: 0b{'1' * 20000}\n")),
        Case("total_size: 1e400", (*CHECK, "deploy.yaml"), _model_dir("regular", "1e400")),
        Case("TOML nested 5,000 deep", ("check", "--offline", "x.yaml"),
             _pyproject(b"[tool.kvlint]\nx = " + b"[" * 5000 + b"]" * 5000 + b"\n")),
        Case("pyproject.toml not UTF-8", ("check", "--offline", "x.yaml"),
             _pyproject(b'[tool.kvlint]\ngpu = "H\xe9100"\n')),
        Case("--output-file /dev/full", (*CHECK, "--output-file", "/dev/full", "x.yaml"),
             _write("x.yaml", MODEL)),
        Case("--diff on a binary file", ("check", "--offline", "--no-config", "--diff", "x.yaml"),
             _write("x.yaml", b"\x00\x01binary")),
        Case("explain --file on broken YAML", ("explain", "KV301", "--offline", "--file", "x.yaml"),
             _write("x.yaml", MODEL + "max-model-len: [8192\n")),
        Case("config.json a FIFO", (*CHECK, "deploy.yaml"), _model_dir("fifo")),
        Case("config.json -> /dev/zero", (*CHECK, "deploy.yaml"), _model_dir("zero")),
        Case("config.json of 5 MiB", (*CHECK, "deploy.yaml"), _model_dir("large")),
        Case("safetensors index a FIFO", (*CHECK, "deploy.yaml"), _model_dir("regular", "fifo")),
        Case("150,000 items as '-\\n a'", (*CHECK, "entries.yaml"),
             _entries("x:\n" + "-\n a\n" * 150_000)),
        Case("150,000 documents '---\\na'", (*CHECK, "entries.yaml"),
             _entries("---\na\n" * 150_000)),
        Case("1,900 nested folders", ("check", "--offline", "--format", "concise", "."),
             _deep_tree),
        Case("solve --max-gpus 1e14", (*SOLVE, "--max-gpus", "100000000000000"), _nothing),
        Case("solve --max-gpus 4096 --any-layout",
             (*SOLVE, "--max-gpus", "4096", "--max-tp", "4096", "--any-layout"),
             _nothing),
        Case("solve --kv-cache-dtype bogus", (*SOLVE, "--kv-cache-dtype", "bogus"), _nothing),
    ]  # fmt: skip
    return found


def _first_line(outcome: Outcome) -> str:
    """The line that answers the input: the first, past argparse's usage lines and the note
    that no GPU was named (which most inputs here get before their answer)."""
    lines = outcome.lines()
    answers = [s for s in lines if not s.startswith(("usage:", " ")) and " KV907 " not in s]
    return (answers or lines or [""])[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated words; run the cases whose name has one")
    parser.add_argument("--format", choices=("markdown", "tsv"), default="markdown")
    parser.add_argument("--width", type=int, default=110, help="first lines cut at this width")
    args = parser.parse_args(argv)
    words = [w for w in (args.only or "").split(",") if w]
    chosen = [c for c in cases() if not words or any(w in c.name for w in words)]
    if args.format == "markdown":
        print("| reproducer | exit | first line | s | peak MiB |")
        print("| --- | --- | --- | --- | --- |")
    for case in chosen:
        folder = Path(tempfile.mkdtemp(prefix="kvlint-hostile-case-"))
        case.prepare(folder)
        try:
            outcome = run_kvlint(case.args, case.cwd or folder)
            code, line = str(outcome.code), _first_line(outcome)
            seconds, peak = f"{outcome.seconds:.2f}", f"{outcome.peak_rss_kib / 1024:.0f}"
        except AssertionError as exc:  # the hang guard
            code, line, seconds, peak = "killed", str(exc), ">60", "?"
        line = line.encode("unicode_escape").decode("ascii")[: args.width]
        if args.format == "tsv":
            print("\t".join((case.name, code, line, seconds, peak)))
        else:
            line = line.replace("|", "\\|")
            print(f"| {case.name} | {code} | `{line}` | {seconds} | {peak} |")
        remove_tree(folder)  # shutil.rmtree recurses per level: not for the deep tree
    for path in (p for c in chosen if c.cwd is not None for p in c.cwd.rglob("*")):
        if path.is_file() and not path.is_symlink():
            path.chmod(0o644)  # the chmod-000 case, so the folder can be removed
    for folder in {c.cwd for c in chosen if c.cwd is not None}:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
