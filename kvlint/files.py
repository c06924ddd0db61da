"""Which files a check reads: files as given, folders walked for YAML and JSON in sorted order.

A folder walk skips what the governing config's ``exclude`` / ``extend-exclude`` patterns name
(gitwildmatch, relative to that config's folder; by default hidden files and folders,
``node_modules`` and ``__pycache__``) and, unless ``respect-gitignore: false``, what the
``.gitignore`` files of the repository ignore. A file named on the command line is checked
whatever the patterns say, as ruff does, unless ``--force-exclude`` (what a pre-commit hook
wants: it names every staged file). kvlint's own config files are never linted.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from kvlint import reading
from kvlint.errors import KvlintError

if TYPE_CHECKING:
    from kvlint.config import Settings

SUFFIXES = (".yaml", ".yml", ".json")
NEVER_WALKED = frozenset({".git"})
CONFIG_FILES = frozenset({".kvlint.yaml", ".kvlint.yml"})
MAX_GITIGNORE_BYTES = 1024 * 1024  # git's own are kilobytes; more is read no further

# The Settings that govern a path (its parent folder's config); None: no config anywhere.
SettingsFor = Callable[[Path], "Settings"]


def collect_files(
    paths: Sequence[str],
    settings_for: SettingsFor | None = None,
    *,
    force_exclude: bool = False,
) -> list[tuple[Path, str]]:
    """Every file to check as (path, display): files as given, folders walked for YAML and JSON
    in sorted order. Without ``settings_for`` only the default exclusions apply."""
    skip = Exclusions(settings_for)
    out: list[tuple[Path, str]] = []
    seen: set[str] = set()
    reals = _Reals()
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            relative = [(p, p.relative_to(path)) for p in _walk(path, skip)]
            relative.sort(key=lambda item: item[1].parts)
            # normpath: `kvlint check .` shows `a/x.yaml`, not `./a/x.yaml`, as ruff does
            items = [(p, shown_name(os.path.normpath(os.path.join(arg, r)))) for p, r in relative]
        elif path.exists():
            if path.name in CONFIG_FILES or (force_exclude and skip.excluded(path, False)):
                continue
            items = [(path, shown_name(arg))]
        else:
            # exists() follows links: a loop or a dangling link reads as missing, say which.
            why = "a symlink that loops or points nowhere" if path.is_symlink() else ""
            raise KvlintError(why or "no such file or directory", path=arg)
        for item in items:
            key = reals.of(item[0])
            if key not in seen:
                seen.add(key)
                out.append(item)
    return out


def shown_name(name: str) -> str:
    """A file name as findings and reports show it. The bytes of a name that are not UTF-8
    reach Python as lone surrogates (``os.fsdecode``), which no UTF-8 report can hold: the
    SARIF and GitLab reports ended in an internal error and the JSON one was no UTF-8. They are
    shown as ``\\xff``; the file is still read and fixed by its own name."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


_DEFAULT_EXCLUDED_NAMES = frozenset(
    {"node_modules", "__pycache__", "package.json", "package-lock.json"}
)


def _default_excluded(name: str) -> bool:
    """``config.DEFAULT_EXCLUDE`` read by name (each pattern there is a name, no folder)."""
    if name.startswith(".") or name in _DEFAULT_EXCLUDED_NAMES:
        return True
    return name.startswith(("tsconfig", "jsconfig")) and name.endswith(".json")


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        return path.absolute()


class _Reals:
    """Files' resolved paths (what tells two names of one file apart), each folder resolved
    once: a file that is no link itself resolves to its resolved folder and its name, one lstat
    instead of one per component of the path."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def of(self, path: Path) -> str:
        text = os.fspath(path)
        folder, name = os.path.split(text)
        if not name or name in (".", "..") or os.path.islink(text):
            return str(_resolved(path))
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = str(_resolved(Path(folder or ".")))
        return os.path.join(real, name)


def _walk(folder: Path, skip: Exclusions) -> Iterator[Path]:
    """The files to check under ``folder``, as ``os.walk`` would find them (links to folders
    listed, never followed; a folder that cannot be listed skipped), in no particular order.
    Not ``os.walk`` itself: before Python 3.12 it recurses once per folder level, and a pull
    request's 1,000 nested folders ended the run in a RecursionError."""
    stack = [folder]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as scan:
                entries = list(scan)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if _is_dir(entry):
                if name in NEVER_WALKED or entry.is_symlink():
                    continue
                if not skip.excluded(here / name, True):
                    stack.append(here / name)
            elif name.endswith(SUFFIXES) and name not in CONFIG_FILES:
                path = here / name
                if not skip.excluded(path, False):
                    yield path


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a link to a folder too, as os.walk lists it
    except OSError:
        return False


class Exclusions:
    """``exclude`` patterns and ``.gitignore`` files, each compiled once (pathspec is imported
    only here, when a pattern other than the defaults or a .gitignore is matched: ~9 ms after
    kvlint's own imports, measured on the project's machine)."""

    def __init__(self, settings_for: SettingsFor | None) -> None:
        from kvlint.config import DEFAULT_EXCLUDE

        self.settings_for = settings_for
        self.default_exclude = DEFAULT_EXCLUDE
        self._specs: dict[tuple[str, ...], Any] = {}
        self._gitignores: dict[Path, Any] = {}  # folder -> its compiled .gitignore, or None
        self._roots: dict[Path, Path | None] = {}  # folder -> its repository root
        self._chains: dict[Path, tuple[tuple[Path, Any], ...]] = {}  # see _ignore_chain

    def excluded(self, path: Path, is_dir: bool) -> bool:
        absolute = Path(os.path.abspath(path))
        settings = None
        if self.settings_for is not None:
            # A broken config: walked with the defaults; its errors are reported after the walk.
            with contextlib.suppress(KvlintError):
                settings = self.settings_for(absolute.parent)

        patterns = settings.exclude if settings is not None else self.default_exclude
        base = settings.base_dir if settings is not None else None
        if patterns and self._matches(patterns, absolute, base, is_dir):
            return True
        respect = settings.respect_gitignore if settings is not None else True
        return respect and self._git_ignored(absolute, is_dir)

    def _spec(self, patterns: tuple[str, ...]) -> Any:
        spec = self._specs.get(patterns)
        if spec is None:
            # pathspec: gitwildmatch as git itself reads it (negation, `**`, anchoring, a
            # trailing `/` for folders); black, yamllint and mypy read their excludes with it.
            import pathspec

            spec = self._specs[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
        return spec

    def _matches(
        self, patterns: tuple[str, ...], path: Path, base: Path | None, is_dir: bool
    ) -> bool:
        if patterns == self.default_exclude:
            # The default patterns name a file or folder by its own name alone: no pattern
            # library needed (a walk of a repository without .gitignore imports none).
            return _default_excluded(path.name)
        relative = _relative(path, base if base is not None else Path.cwd())
        if relative is None:  # outside the config's folder: only the name can match
            relative = path.name
        return bool(self._spec(patterns).match_file(relative + ("/" if is_dir else "")))

    def _git_ignored(self, path: Path, is_dir: bool) -> bool:
        """Git's answer: the deepest ``.gitignore`` with a pattern for the path decides
        (``.git/info/exclude`` counts as the root's); folders from the repository root down."""
        root = self._root(path.parent)
        if root is None:
            return False
        for folder, spec in self._ignore_chain(path.parent, root):
            relative = _relative(path, folder)
            if relative is None:
                continue
            result = spec.check_file(relative + ("/" if is_dir else ""))
            if result.include is not None:
                return bool(result.include)
        return False

    def _root(self, folder: Path) -> Path | None:
        """The repository root at or above ``folder``; a loop up the parents, not a recursion
        (a file given 2,000 folders deep), each folder's answer kept for its children."""
        climbed: list[Path] = []
        root: Path | None = None
        here = folder
        while True:
            if here in self._roots:
                root = self._roots[here]
                break
            climbed.append(here)
            if (here / ".git").exists():
                root = here
                break
            if here.parent == here:
                break
            here = here.parent
        for seen in climbed:
            self._roots[seen] = root
        return root

    def _ignore_chain(self, folder: Path, root: Path) -> tuple[tuple[Path, Any], ...]:
        """The folders from ``folder`` up to ``root`` that have ignore patterns, deepest first,
        with their patterns: one step from the parent's chain, kept per folder (looking at every
        parent of every path was quadratic in the depth of a tree, cubic with the path lengths)."""
        climbed: list[Path] = []
        here = folder
        while here not in self._chains:
            climbed.append(here)
            if here == root or here.parent == here:
                break
            here = here.parent
        chain = () if here in climbed else self._chains[here]
        for seen in reversed(climbed):
            spec = self._gitignore(seen, root)
            if spec is not None:
                chain = ((seen, spec), *chain)
            self._chains[seen] = chain
        return chain

    def _gitignore(self, folder: Path, root: Path) -> Any:
        if folder not in self._gitignores:
            lines: list[str] = []
            sources = [folder / ".gitignore"]
            if folder == root:
                sources.insert(0, folder / ".git" / "info" / "exclude")
            for source in sources:
                try:  # a regular file only, bounded: a hostile tree may hold anything there
                    data = reading.read_prefix(source, MAX_GITIGNORE_BYTES)
                except OSError:
                    continue
                lines += data.decode("utf-8", errors="replace").splitlines()
            self._gitignores[folder] = self._spec(tuple(lines)) if lines else None
        return self._gitignores[folder]


def _relative(path: Path, base: Path) -> str | None:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None


def helm_template(path: Path, data: bytes | None = None) -> str | None:
    """The chart folder when ``path`` is one of a Helm chart's templates (a file under a
    ``templates/`` folder beside a ``Chart.yaml``, or holding ``{{ ... }}``; a file holding
    ``{{ ... }}`` under the chart's ``files/``); None otherwise.

    A template is Go text/template source, not YAML: read as it is, it is unreadable or reads as
    something the chart does not deploy. Its rendered output is what to check
    (``helm template CHART | kvlint check - --stdin-filename CHART/values.yaml``)."""
    folders = path.parts[:-1]
    for name in ("templates", "files"):  # files/: a chart's `.Files.Get ... | tpl` sources
        if name not in folders:
            continue
        index = len(folders) - 1 - folders[::-1].index(name)  # the innermost one
        chart = Path(*folders[:index]) if index else Path(".")
        beside = reading.is_regular_file(chart / "Chart.yaml")
        if name == "templates" and beside:
            return str(chart)
        if name == "files" and not beside:
            continue  # a files/ folder of anything else is no chart's
        if data is None:
            try:
                data = reading.read_bytes(path, reading.DEPLOYMENT)
            except OSError:
                return None  # the check reports why it cannot be read
        if b"{{" in data:
            return str(chart)
    return None
