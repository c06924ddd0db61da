"""Which rules run: select / ignore / extend-select / per-file-ignores, longest prefix wins."""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from typing import NamedTuple

from kvlint.errors import KvlintError
from kvlint.finding import Span
from kvlint.lazy_re import lazy

if TYPE_CHECKING:
    from kvlint.registry import Registry

_PREFIX_RE = lazy(r"^[A-Z]{1,4}[0-9]{0,3}$")
ALL = "ALL"


class Decision(enum.Enum):
    SELECTED = "selected"
    IGNORED = "ignored"


class PerFileIgnore(NamedTuple):
    pattern: str
    prefixes: tuple[str, ...]


def normalise(
    selectors: Iterable[str],
    registry: Registry,
    *,
    where: str = "",
    errors: list[KvlintError] | None = None,
    locate: Callable[[int], Span | None] | None = None,
) -> tuple[str, ...]:
    """Codes, prefixes (``KV3``), names and ``ALL`` as code prefixes (``ALL`` is the empty one).

    A selector must name a rule or be the prefix of one: a typo in ``--select`` must not check
    nothing, nor one in ``--ignore`` silently ignore nothing. Each wrong selector is an error
    with a did-you-mean; with ``errors`` given they are collected there (``locate(i)`` places
    the i-th selector in its file), else the first is raised.
    """
    out: list[str] = []
    for index, raw in enumerate(selectors):
        text = raw.strip()
        if not text:
            continue
        if text.upper() == ALL:
            out.append("")
            continue
        rule = registry.by_name.get(text.lower())
        upper = text.upper()
        if rule is not None:
            out.append(rule.code)
        elif _PREFIX_RE.match(upper) and any(code.startswith(upper) for code in registry.rules):
            out.append(upper)
        else:
            suffix = f" in {where}" if where else ""
            problem = KvlintError(
                f"unknown rule selector `{text}`{suffix}: {why_unknown(text, registry)}",
                locate(index) if locate is not None else None,
            )
            if errors is None:
                raise problem
            errors.append(problem)
    return tuple(out)


def why_unknown(text: str, registry: Registry) -> str:
    """No rule has it; the nearest codes or names, as flake8 and ruff suggest them."""
    import difflib  # only on this error path (start-up time)

    upper = text.upper()
    if _PREFIX_RE.match(upper):
        # The codes sharing the longest start with it (KV39 -> KV30x), the closest of those.
        def shared(code: str) -> int:
            pairs = zip(upper, code, strict=False)  # the shorter one ends the comparison
            return next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(upper), len(code)))

        codes = registry.codes()
        longest = max((shared(c) for c in codes), default=0)
        near = [c for c in codes if shared(c) == longest and longest >= 2]
        close = sorted(near, key=lambda c: -difflib.SequenceMatcher(None, upper, c).ratio())[:3]
        head = "no rule has that code or code prefix"
    else:
        candidates = sorted(registry.by_name)
        close = difflib.get_close_matches(text.lower(), candidates, n=3, cutoff=0.6)
        head = "not a rule code, code prefix (`KV3`), rule name or `ALL`"
    if not close:
        return f"{head} (`kvlint rules` lists them)"
    named = [f"`{c}`" for c in close]
    either = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
    return f"{head}; did you mean {either}?"


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
        return matches_pattern(pattern, path, self.base_dir)


def matches_pattern(pattern: str, path: str, base_dir: Path | None) -> bool:
    """Whether a config's glob ``pattern`` names the file at ``path``: its path as given, its
    name, or its path relative to the config's folder (``per-file-ignores``, ``workload``)."""
    candidates = {PurePosixPath(Path(path).as_posix()).as_posix(), Path(path).name}
    if base_dir is not None:
        try:
            rel = Path(path).resolve().relative_to(base_dir.resolve())
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
