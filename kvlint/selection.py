"""Which rules run: select / ignore / extend-select / per-file-ignores, longest prefix wins."""

from __future__ import annotations

import enum
import fnmatch
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from pathlib import PurePosixPath
from typing import NamedTuple

from kvlint.errors import KvlintError
from kvlint.registry import Registry

_PREFIX_RE = re.compile(r"^[A-Z]{1,4}[0-9]{0,3}$")
ALL = "ALL"


class Decision(enum.Enum):
    SELECTED = "selected"
    IGNORED = "ignored"


class PerFileIgnore(NamedTuple):
    pattern: str
    prefixes: tuple[str, ...]


def normalise(selectors: Iterable[str], registry: Registry, *, where: str = "") -> tuple[str, ...]:
    """Codes, prefixes (``KV3``), names and ``ALL`` as code prefixes (``ALL`` is the empty one).

    A selector that is neither a rule name nor shaped like a code prefix is an error: a typo in
    ``--ignore`` must not silently ignore nothing.
    """
    out: list[str] = []
    for raw in selectors:
        text = raw.strip()
        if not text:
            continue
        if text.upper() == ALL:
            out.append("")
            continue
        rule = registry.by_name.get(text.lower())
        if rule is not None:
            out.append(rule.code)
        elif _PREFIX_RE.match(text.upper()):
            out.append(text.upper())
        else:
            suffix = f" in {where}" if where else ""
            raise KvlintError(
                f"unknown rule selector `{text}`{suffix} (use a code, a code prefix such as "
                "`KV3`, a rule name, or `ALL`)"
            )
    return tuple(out)


def _longest(prefixes: Iterable[str], code: str) -> int | None:
    best: int | None = None
    for prefix in prefixes:
        if code.startswith(prefix) and (best is None or len(prefix) > best):
            best = len(prefix)
    return best


class Selection:
    """flake8's decision engine: a code is selected when the longest matching ``select`` prefix
    is longer than the longest matching ``ignore`` prefix, so a code or prefix the user wrote
    (explicit) beats the implicit default of every rule, and on a tie ignore wins.
    ``per-file-ignores`` then removes codes for the files whose path matches a pattern."""

    def __init__(
        self,
        *,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] = (),
        extend_select: Sequence[str] = (),
        per_file_ignores: Sequence[PerFileIgnore] = (),
        base_dir: Path | None = None,
    ) -> None:
        # No `select` means every rule: the empty prefix, which any ignore outweighs.
        self.select = (tuple(select) if select is not None else ("",)) + tuple(extend_select)
        self.ignore = tuple(ignore)
        self.per_file_ignores = tuple(per_file_ignores)
        self.base_dir = base_dir
        self._cache: dict[str, Decision] = {}

    def decision(self, code: str) -> Decision:
        cached = self._cache.get(code)
        if cached is None:
            cached = self._cache[code] = self._decide(code)
        return cached

    def _decide(self, code: str) -> Decision:
        selected = _longest(self.select, code)
        if selected is None:
            return Decision.IGNORED
        ignored = _longest(self.ignore, code)
        if ignored is None:
            return Decision.SELECTED
        return Decision.SELECTED if selected > ignored else Decision.IGNORED

    def is_selected(self, code: str) -> bool:
        return self.decision(code) is Decision.SELECTED

    def is_enabled(self, code: str, path: str) -> bool:
        """Selected, and not ignored for this file by ``per-file-ignores``."""
        if not self.is_selected(code):
            return False
        return not any(
            _longest(entry.prefixes, code) is not None and self._matches(entry.pattern, path)
            for entry in self.per_file_ignores
        )

    def _matches(self, pattern: str, path: str) -> bool:
        candidates = {PurePosixPath(Path(path).as_posix()).as_posix(), Path(path).name}
        if self.base_dir is not None:
            try:
                rel = Path(path).resolve().relative_to(self.base_dir.resolve())
                candidates.add(rel.as_posix())
            except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
                pass
        return any(fnmatch.fnmatch(c, pattern) for c in candidates)


def build_selection(
    registry: Registry,
    *,
    select: Sequence[str] | None,
    ignore: Sequence[str],
    extend_select: Sequence[str],
    per_file_ignores: Mapping[str, Sequence[str]],
    base_dir: Path | None = None,
    where: str = "",
) -> Selection:
    """A Selection from user text, with names resolved to codes."""
    return Selection(
        select=None if select is None else normalise(select, registry, where=where),
        ignore=normalise(ignore, registry, where=where),
        extend_select=normalise(extend_select, registry, where=where),
        per_file_ignores=[
            PerFileIgnore(pattern, normalise(codes, registry, where=where))
            for pattern, codes in per_file_ignores.items()
        ],
        base_dir=base_dir,
    )
