"""Generated repositories through the real CLI in process (issue 15, item 9): a tree of fixable
deployment files mixed with what a pull request can add besides (symlinks into and out of the
tree, a linked folder out of it, dangling links and loops, a FIFO, a link to ``/dev/zero``, a
folder named ``*.yaml``, read-only, unreadable and hard-linked files, binary files). ``check``,
``--diff`` and ``--fix`` always end (a hang guard fails the test instead of waiting), with
findings or one clear line, never a traceback; without ``--fix`` nothing changes, and with it
only the tree's own writable, single-link regular files may: nothing outside the tree, no link
nor what it points at, no read-only or hard-linked file, no FIFO. ``--output-file`` never
writes through a link the tree holds."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from kvlint.main import main

# Over budget on an H100 (KV301), so --fix --unsafe-fixes rewrites max-num-seqs.
FIXABLE = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 32768\nmax-num-seqs: 512\n"
KINDS = (
    "file",  # a fixable regular file: the one kind --fix may rewrite
    "link-in",  # a symlink to a file of the tree
    "link-out",  # a symlink to a fixable file outside the tree
    "link-dir-out",  # a symlink to a folder outside the tree holding a fixable file
    "dangling",
    "loop",
    "fifo",
    "dev-zero",
    "dir-yaml",  # a folder named *.yaml
    "read-only",
    "unreadable",  # chmod 000 (root reads it anyway)
    "hard-link",  # a second name of a fixable file outside the tree
    "binary",
)
GUARD_S = 60  # a hang guard per run, not a timed assertion
ARGS = ("check", "--offline", "--no-config", "--gpu", "H100", "--jobs", "1")
WRITABLE = "file"


def _make(tree: Path, outside: Path, index: int, kind: str, data: bytes) -> str:
    """Entry ``index`` of ``kind`` in ``tree`` (in a sub-folder every third time); its name."""
    name = f"sub/e{index}.yaml" if index % 3 == 2 else f"e{index}.yaml"
    path = tree / name
    path.parent.mkdir(exist_ok=True)
    target = outside / f"target{index}.yaml"
    if kind in ("file", "read-only", "unreadable"):
        path.write_text(FIXABLE)
        if kind == "read-only":
            path.chmod(0o444)
        elif kind == "unreadable":
            path.chmod(0)
    elif kind == "link-in":
        (tree / f"in{index}.yml.txt").write_text(FIXABLE)  # not walked itself: .txt
        path.symlink_to(tree / f"in{index}.yml.txt")
    elif kind in ("link-out", "hard-link"):
        target.write_text(FIXABLE)
        if kind == "link-out":
            path.symlink_to(target)
        else:
            os.link(target, path)
    elif kind == "link-dir-out":
        folder = outside / f"folder{index}"
        folder.mkdir()
        (folder / "inner.yaml").write_text(FIXABLE)
        path = tree / f"linked{index}"
        path.symlink_to(folder, target_is_directory=True)
        name = f"linked{index}"
    elif kind == "dangling":
        path.symlink_to(outside / "missing.yaml")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dir-yaml":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(data)
    return name


def _state(root: Path) -> dict[str, tuple[str, bytes, int, int]]:
    """Every entry under ``root``, links not followed: its type, bytes (regular files), mtime
    and mode, or the link's target."""
    state: dict[str, tuple[str, bytes, int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                state[str(path.relative_to(root))] = ("link", os.readlink(path).encode(), 0, 0)
                continue
            data = b""
            if stat.S_ISREG(info.st_mode) and info.st_mode & 0o400:
                data = path.read_bytes()
            if stat.S_ISDIR(info.st_mode):  # a folder's mtime moves when a file in it is replaced
                state[str(path.relative_to(root))] = ("folder", b"", 0, info.st_mode)
                continue
            kind = "file" if stat.S_ISREG(info.st_mode) else "other"
            state[str(path.relative_to(root))] = (kind, data, info.st_mtime_ns, info.st_mode)
    return state


@contextlib.contextmanager
def _guarded() -> Iterator[None]:
    """A hang guard without SIGALRM, which kvlint's rule deadlines own in process
    (kvlint.isolation): a thread that dumps the stacks and ends the test run if kvlint has
    not returned after GUARD_S, so a FIFO that blocked would fail CI instead of hanging it."""
    faulthandler.dump_traceback_later(GUARD_S, file=sys.__stderr__, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with _guarded():
        code = main([*ARGS, *args])
    out, err = capsys.readouterr()
    text = out + err
    assert "Traceback" not in text and "internal error" not in text, text
    assert code in (0, 1, 2), (code, text)
    return code, text


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf-home")))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=6),
    data=st.binary(max_size=200),
)
def test_a_generated_tree_is_checked_and_fixed_only_where_kvlint_may_write(
    kinds: list[str], data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    before_cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        tree, outside = root / "repo", root / "outside"
        tree.mkdir()
        outside.mkdir()
        (tree / ".git").mkdir()
        names = {_make(tree, outside, i, kind, data): kind for i, kind in enumerate(kinds)}
        try:
            os.chdir(tree)
            initial = _state(root)

            _run(capsys, ".")
            _run(capsys, "--diff", "--unsafe-fixes", ".")
            # The report never goes through a link of the tree (to a file outside it).
            for name, kind in names.items():
                if kind == "link-out":
                    code, text = _run(capsys, "--output-file", name, ".")
                    assert code == 2, text
            assert _state(root) == initial, "a run without --fix changed the tree"

            _run(capsys, "--fix", "--unsafe-fixes", ".")
            after = _state(root)
            writable = {n for n, kind in names.items() if kind == WRITABLE}
            # A link to a file of the checked tree may have its target fixed.
            linked = {f"in{i}.yml.txt" for i, kind in enumerate(kinds) if kind == "link-in"}
            changed = {p for p in initial if after.get(p) != initial[p]}
            assert set(after) == set(initial), "--fix created or removed a file"
            assert {p for p in changed if p.startswith("repo/")} <= {
                f"repo/{n}" for n in writable | linked
            }, changed
            assert not {p for p in changed if not p.startswith("repo/")}, changed
            for name in writable:  # and what it may write, it does: the twin
                assert after[f"repo/{name}"][1] != FIXABLE.encode(), name
        finally:
            os.chdir(before_cwd)
            for path in root.rglob("*"):  # a chmod-000 file must be removable by a user
                if not path.is_symlink() and path.is_file():
                    path.chmod(0o644)
