"""Where kvlint may write: ``--fix`` only inside the checked tree, reports never through a link.

A pull request can add a symlink named ``deploy.yaml`` pointing at ``~/.bashrc``, or a
``kvlint.sarif`` link pointing at the action's own files; a hook run by ``--fix`` in CI, or the
Action's SARIF step, must not write there. Two policies, one module:

- ``fix_refusal``: a file ``--fix`` found is rewritten only when its real path lies inside one
  of the checked paths (a folder given, or a file given that is not itself a link) and inside
  the repository that holds that path; a read-only file, a hard-linked file (rewriting would
  split the link, or change the other names' content) and anything but a regular file are
  left as they are. The reason is reported with each fix not applied.
- ``open_report``: a report file (``--output-file``, the Action's SARIF file and job summary)
  is never written through a symlink that sits inside the working directory or the
  repository (the final name included, with ``O_NOFOLLOW``), and never over a checked file.
  A path outside the tree (``/dev/stdout``, the runner's temporary files) is the user's own.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from kvlint.errors import KvlintError
from kvlint.finding import printable


def silence_stdout() -> None:
    """Point stdout's descriptor at the null device: the reader of a pipe went away, and the
    interpreter's own flush at exit must not fail on it."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def repository_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` (not resolved) that holds ``.git``."""
    here = Path(os.path.abspath(path))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _real_tree(arg: str) -> tuple[str, bool, str | None]:
    """A checked path as (real path, is a folder, real repository root or None)."""
    given = Path(arg)
    repo = repository_root(given if given.is_dir() else given.parent)
    real_repo = os.path.realpath(repo) if repo is not None else None
    if given.is_dir():
        return os.path.realpath(given), True, real_repo
    # A file given: only itself, with its folders resolved but not the file (not a link).
    parent = os.path.realpath(os.path.dirname(os.path.abspath(given)))
    return os.path.join(parent, given.name), False, real_repo


def fix_refusal(path: Path, checked: Sequence[str]) -> str | None:
    """Why ``--fix`` must not rewrite ``path`` (a file found under ``checked``), or None."""
    shown = printable(str(path))
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    trees = [_real_tree(arg) for arg in checked]
    inside = [
        (tree, repo)
        for tree, is_dir, repo in trees
        if (_inside(real, tree) if is_dir else real == tree)
    ]
    if not inside:
        target = printable(real)
        return f"`{shown}` is a symlink to `{target}`, outside the checked paths: not written"
    if not any(repo is None or _inside(real, repo) for _, repo in inside):
        target = printable(real)
        return f"`{shown}` resolves to `{target}`, outside the repository: not written"
    if not stat.S_ISREG(info.st_mode):
        return f"`{shown}` is not a regular file: not written"
    if info.st_nlink > 1:
        return (
            f"`{shown}` has {info.st_nlink} hard links: rewriting it would split them, "
            "so it is not written"
        )
    writable = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    if not info.st_mode & writable or not os.access(real, os.W_OK):
        return f"`{shown}` is read-only: not rewritten"
    return None


def _roots(inputs: Iterable[str]) -> list[str]:
    """The trees a report must not write through: the working directory and the repositories
    of the checked paths, unresolved (where their links sit) and resolved."""
    roots = {os.getcwd()}
    for arg in inputs:
        repo = repository_root(Path(arg))
        if repo is not None:
            roots.add(str(repo))
    return sorted(roots)


def _through_link(path: str, roots: Iterable[str]) -> str | None:
    """The first symlink on the way from a root down to ``path`` (``path`` included), if any."""
    absolute = os.path.abspath(path)
    for root in roots:
        if not _inside(absolute, root) or absolute == root:
            continue
        current = root
        for part in os.path.relpath(absolute, root).split(os.sep):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return current
    return None


def open_report(
    path: str,
    *,
    inputs: Sequence[str] = (),
    checked: Sequence[Path] = (),
    append: bool = False,
    what: str = "",
) -> TextIO:
    """``path`` opened to write a report (appended to with ``append``), or a KvlintError naming
    it ("cannot write {what}: ..."): never through a link inside the working tree, never over a
    checked file."""
    link = _through_link(path, _roots(inputs))
    if link is not None:
        raise KvlintError(
            f"a symlink in the checked tree (`{printable(link)}`): not written through",
            path=path,
        )
    for file in checked:
        try:
            if os.path.exists(path) and os.path.samefile(path, file):
                raise KvlintError("is one of the checked files: not overwritten", path=path)
        except OSError:
            continue
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    flags |= getattr(os, "O_NOFOLLOW", 0) if _inside(os.path.abspath(path), os.getcwd()) else 0
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        doing = f"cannot write {what}" if what else "cannot write"
        raise KvlintError(f"{doing}: {exc.strerror or exc}", path=path) from None
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8")
