"""Which files a check reads: files as given, folders walked for YAML and JSON in sorted order."""

from __future__ import annotations

import os
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

from kvlint.errors import KvlintError

SUFFIXES = (".yaml", ".yml", ".json")
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})


def collect_files(paths: Sequence[str]) -> list[tuple[Path, str]]:
    """Every file to check as (path, display): files as given, folders walked for YAML and JSON
    in sorted order, skipping hidden folders, ``.git`` and ``node_modules``."""
    out: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            found = sorted(_walk(path), key=lambda p: p.relative_to(path).parts)
            # normpath: `kvlint check .` shows `a/x.yaml`, not `./a/x.yaml`, as ruff does
            items = [(p, os.path.normpath(os.path.join(arg, p.relative_to(path)))) for p in found]
        elif path.exists():
            items = [(path, arg)]
        else:
            # exists() follows links: a loop or a dangling link reads as missing, say which.
            why = "a symlink that loops or points nowhere" if path.is_symlink() else ""
            raise KvlintError(why or "no such file or directory", path=arg)
        for item in items:
            key = _resolved(item[0])
            if key not in seen:
                seen.add(key)
                out.append(item)
    return out


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        return path.absolute()


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
        for name in files:
            if name.endswith(SUFFIXES) and not name.startswith("."):
                yield Path(root) / name
