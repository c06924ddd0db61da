"""The installed entry points of one group, found without importing ``importlib.metadata``.

``importlib.metadata`` imports email, zipfile, socket, calendar and tempfile on the way (19 ms
of a 160 ms one-file ``kvlint check`` on the project's machine, issue 9), then reads every
distribution's ``entry_points.txt``. The rule registry needs one group. This reads what
``importlib.metadata`` reads, the same way: ``*.dist-info`` and ``*.egg-info`` folders, the
first distribution of a name winning, their ``entry_points.txt`` sections, and the ``Name:`` of
the distributions that have the group. When a custom finder is installed on ``sys.meta_path``
that could provide distributions, it hands over to ``importlib.metadata``.
``tests/entry_points_test.py`` compares both on real installs.

Only the environment's own site directories are read (``site.getsitepackages()``, the user
site), in ``sys.path`` order: never the working directory or a script's folder, which
``python -m`` and ``python -c`` put first on ``sys.path``. A pull request can add a
``pwn-0.1.dist-info/entry_points.txt`` to a checkout; it must not become a rule that runs
(issue 15, SECURITY.md).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any
from typing import NamedTuple

from kvlint import reading
from kvlint.lazy_re import lazy

# importlib.metadata's EntryPoint.pattern: `module.path:attr.path [extras]`.
_VALUE_RE = lazy(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_SUFFIXES = (".dist-info", ".egg-info")


class EntryPoint(NamedTuple):
    name: str
    value: str  # "module:attr"
    package: str  # the distribution's name, as its metadata writes it

    def load(self) -> Any:
        match = _VALUE_RE.match(self.value)
        if match is None:
            raise ValueError(f"malformed entry point value {self.value!r}")
        target: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, attr)
        return target


def entry_points(group: str) -> list[EntryPoint] | None:
    """The group's entry points in ``sys.path`` order, or None when only importlib.metadata can
    tell (then the caller asks it, over ``site_directories()``)."""
    if not _plain_finders():
        return None
    found: list[EntryPoint] = []
    seen: set[str] = set()
    for folder in site_directories():
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not name.endswith(_SUFFIXES):
                continue
            key = _normalized(name)
            if key in seen:
                continue  # an earlier sys.path entry has this distribution: it wins
            seen.add(key)
            path = os.path.join(folder, name)
            found.extend(_read(path, group))
    return found


def site_directories() -> list[str]:
    """The ``sys.path`` folders that are the environment's site directories, in path order."""
    import site

    known = [*getattr(site, "getsitepackages", list)()]
    if site.ENABLE_USER_SITE:
        known.append(site.getusersitepackages())
    real = {os.path.realpath(folder) for folder in known}
    out: list[str] = []
    for entry in sys.path:
        # "" and a relative entry are the working directory: never a site directory.
        if entry and os.path.isabs(entry) and entry not in out and os.path.realpath(entry) in real:
            out.append(entry)
    return out


def _plain_finders() -> bool:
    """Whether distributions can come only from the path finder this module imitates."""
    import importlib.machinery

    return all(
        finder is importlib.machinery.PathFinder or not hasattr(finder, "find_distributions")
        for finder in sys.meta_path
    )


def _folder_name(folder: str) -> str:
    """The distribution name in a ``name-version.dist-info`` folder, as written."""
    return folder.rsplit(".", 1)[0].split("-", 1)[0]


def _normalized(folder: str) -> str:
    """The distribution name of a folder, normalised (PEP 503) for comparing."""
    return re.sub(r"[-_.]+", "_", _folder_name(folder)).lower()


def _read(path: str, group: str) -> list[EntryPoint]:
    text = _text(os.path.join(path, "entry_points.txt"))
    if text is None or f"[{group}]" not in text:
        return []
    package = _name(path)
    return [EntryPoint(name, value, package) for name, value in _section(text, group)]


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """``name = value`` lines of one ``[group]`` section (importlib.metadata's Sectioned)."""
    out: list[tuple[str, str]] = []
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            continue
        if current == group:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _name(path: str) -> str:
    """The ``Name:`` field of the distribution's metadata (the folder's name when absent)."""
    for file in ("METADATA", "PKG-INFO"):
        text = _text(os.path.join(path, file))
        if text is None:
            continue
        for line in text.splitlines():
            if not line.strip():
                break  # the headers end at the first blank line
            if line.lower().startswith("name:"):
                return line[5:].strip()
    return _folder_name(os.path.basename(path))


def _text(path: str) -> str | None:
    try:
        return reading.read_prefix(path, reading.PACKAGE_METADATA.limit).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
