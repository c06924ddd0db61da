"""PyYAML imported without compiling the one pattern kvlint never uses.

PyYAML's pure-Python reader compiles a class of every printable character when ``yaml`` is
imported (``yaml/reader.py``, ``Reader.NON_PRINTABLE``): ~5 ms, the largest regular expression
of a check and a twentieth of a one-file run. kvlint composes with libyaml (``CSafeLoader``),
whose reader is C and never touches it. Imported through :func:`import_yaml`, ``yaml`` gets a
stand-in that compiles the pattern at its first use (the pure-Python reader, where libyaml is
not installed) and puts the compiled one in its place.
"""

from __future__ import annotations

import re
import sys
from types import ModuleType
from typing import Any

# yaml/reader.py's pattern, character for character (PyYAML 5.1 to 6.0). Another text (a
# release that changes it) is compiled at import as before.
NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


class DeferredPattern:
    """``Reader.NON_PRINTABLE`` until its first use: then compiled, and the reader's own."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._args)
        reader = sys.modules.get("yaml.reader")
        owner = getattr(reader, "Reader", None)
        if owner is not None and owner.__dict__.get("NON_PRINTABLE") is self:
            owner.NON_PRINTABLE = compiled
        return getattr(compiled, name)


def import_yaml() -> ModuleType:
    """``import yaml`` with the reader's printable-character pattern compiled on first use."""
    found = sys.modules.get("yaml")
    if found is not None:
        return found
    compile_ = re.compile

    def deferring(pattern: Any, flags: Any = 0) -> Any:
        if pattern == NON_PRINTABLE and flags == 0:
            return DeferredPattern(pattern, flags)
        return compile_(pattern, flags)

    re.compile = deferring  # only while yaml/reader.py runs: the class body calls re.compile
    try:
        import yaml  # type: ignore[import-untyped]
    finally:
        re.compile = compile_
    module: ModuleType = yaml
    return module
