"""Regular expressions compiled at their first use, not when their module is imported.

A one-file ``kvlint check`` imported ~100 of kvlint's module-level patterns and used fewer than
20 of them (image patterns of every engine and server, suppression comments, GGUF names, ...);
compiling is pure Python (``re._parser``, ``re._compiler``), ~0.1 ms a pattern: a tenth of the
run. ``lazy(pattern, flags)`` stands where ``re.compile(pattern, flags)`` stood and is typed as
the pattern it becomes. Its first use compiles it and keeps the compiled pattern's methods on
the stand-in, so later uses cost what a compiled pattern's do.
"""

from __future__ import annotations

import re
from typing import Any
from typing import cast

# What kvlint reads of a pattern: its methods and attributes, kept on the stand-in once
# compiled (``pattern`` is its text, known before compiling).
_KEPT = (
    "match",
    "fullmatch",
    "search",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "flags",
    "groups",
    "groupindex",
)


class _Deferred:
    """A pattern not compiled yet; ``pattern`` is its text, as a compiled pattern's is."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Only for names not on the instance yet: the first use of the pattern.
        compiled = re.compile(self.pattern, self._flags)
        for kept in _KEPT:
            setattr(self, kept, getattr(compiled, kept))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self._flags!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled at the first use of the result."""
    return cast("re.Pattern[str]", _Deferred(pattern, flags))
