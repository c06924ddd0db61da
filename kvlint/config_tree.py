"""Which config governs each checked file, as ruff's hierarchical configuration does.

Each file uses the nearest ``.kvlint.yaml`` / ``.kvlint.yml`` / ``pyproject.toml`` with
``[tool.kvlint]`` in its folder or above it, the walk stopping at the repository root (a folder
holding ``.git``), so ``kvlint check teamA teamB`` applies each team's config to its own files
and pre-commit gets the same answer however it splits the files into batches. ``--config FILE``
gives every file that one config; ``--no-config`` the defaults. The command line's flags apply
on top of whichever config a file gets. Each folder is looked up once and each config loaded
and resolved once per run; the configs of all the files are resolved before any is linted, so
every mistake in every config is reported together.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import NamedTuple

from kvlint.config import Settings
from kvlint.config import config_in
from kvlint.config import is_repository_root
from kvlint.config import load_config
from kvlint.config import resolve
from kvlint.errors import KvlintError
from kvlint.errors import raise_all

if TYPE_CHECKING:
    from kvlint.registry import Registry


class Overrides(NamedTuple):
    """What the command line says, applied over every config (``kvlint.config.resolve``)."""

    select: Sequence[str] | None = None
    ignore: Sequence[str] = ()
    extend_select: Sequence[str] = ()
    fail_on: str | None = None
    gpu: str | None = None
    engine_version: str | None = None
    offline: bool = False
    reserved_memory: str | None = None


_DISCOVER = object()  # ConfigTree(config=...) default: look for each file's own config


class ConfigTree:
    """The Settings of each file: its nearest config, resolved with the overrides."""

    def __init__(
        self,
        registry: Registry,
        overrides: Overrides | None = None,
        *,
        config: Path | object | None = _DISCOVER,
    ) -> None:
        self.registry = registry
        self.overrides = overrides if overrides is not None else Overrides()
        # A fixed config (`--config FILE`, or None for `--no-config`) serves every file.
        self._fixed = config is not _DISCOVER
        self._fixed_path = config if isinstance(config, Path) else None
        self._nearest: dict[Path, Path | None] = {}  # folder -> its config file
        self._reals: dict[Path, Path] = {}  # folder as given -> resolved
        self._settings: dict[Path | None, Settings] = {}  # config file -> resolved
        # path as asked -> its config file: a file is asked for by the walk's exclusions, its
        # settings and its report (three stats and resolutions a file of a large walk).
        self._answers: dict[Path, Path | None] = {}

    def config_for(self, path: Path) -> Path | None:
        """The config file that governs ``path`` (a file or a folder), None for the defaults."""
        if self._fixed:
            return self._fixed_path
        if path in self._answers:
            return self._answers[path]
        answer = self._answers[path] = self._config_for(path)
        return answer

    def _config_for(self, path: Path) -> Path | None:
        if not path.is_dir():
            # A file's answer is its folder's, kept for the folder's other files (resolving
            # each file's folder again was most of a walk's config lookups).
            return self.config_for(path.parent)
        key = self._real(path)
        # As find_config walks up, but each folder's answer is kept for its children: a walk of
        # 2,000 nested folders looked at every parent of every folder (cubic in the depth).
        climbed: list[Path] = []
        here = key
        while here not in self._nearest:
            climbed.append(here)
            found = config_in(here)
            if found is not None or is_repository_root(here) or here.parent == here:
                self._nearest[here] = found
                break
            here = here.parent
        answer = self._nearest[here]
        for seen in climbed:
            self._nearest[seen] = answer
        return answer

    def _real(self, folder: Path) -> Path:
        """``folder`` resolved, from its parent's resolution when it is no link itself (one
        lstat a folder instead of one per component, for every folder of a deep walk)."""
        text = os.path.abspath(folder)
        if ".." in Path(folder).parts:  # `link/..` is not what the text says: resolve it
            return _resolved(Path(text))
        climbed: list[Path] = []
        here = Path(text)
        while here not in self._reals and here.parent != here and not here.is_symlink():
            climbed.append(here)
            here = here.parent
        real = self._reals.get(here)
        if real is None:
            real = self._reals[here] = _resolved(here)
        for seen in reversed(climbed):
            real = self._reals[seen] = real / seen.name
        return real

    def settings_for(self, path: Path) -> Settings:
        """``path``'s Settings; a KvlintError when its config is wrong."""
        config = self.config_for(path)
        settings = self._settings.get(config)
        if settings is None:
            o = self.overrides
            settings = self._settings[config] = resolve(
                load_config(config),
                self.registry,
                select=o.select,
                ignore=o.ignore,
                extend_select=o.extend_select,
                fail_on=o.fail_on,
                gpu=o.gpu,
                reserved_memory=o.reserved_memory,
                engine_version=o.engine_version,
                offline=o.offline,
            )
        return settings

    def settings_of(self, paths: Iterable[Path]) -> dict[Path, Settings]:
        """Every path's Settings; every config error of every config raised together."""
        errors: list[KvlintError] = []
        failed: set[Path | None] = set()
        out: dict[Path, Settings] = {}
        for path in paths:
            config = self.config_for(path)
            if config in failed:
                continue
            try:
                out[path] = self.settings_for(path)
            except KvlintError as exc:
                failed.add(config)
                errors.append(exc)
        raise_all(errors)
        return out


def _resolved(folder: Path) -> Path:
    try:
        return folder.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return folder.absolute()
