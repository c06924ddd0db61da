"""Source text: bytes decoded safely, and offsets turned into 1-based line and column."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from dataclasses import field

from kvlint import codes
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.lazy_re import lazy

# UTF-32 first: its little-endian mark begins with UTF-16's.
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_CONFLICT_RE = lazy(r"^(<{7}|={7}|>{7})(?: |$)", re.MULTILINE)


@dataclass(frozen=True)
class SourceText:
    """A file's decoded text and where each line starts, for offset -> line:column."""

    path: str  # the display path: what every Span carries
    text: str
    line_starts: tuple[int, ...] = field(default=(), repr=False)

    @classmethod
    def of(cls, path: str, text: str) -> SourceText:
        starts = [0]
        starts.extend(m.end() for m in re.finditer("\n", text))
        return cls(path, text, tuple(starts))

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of the character at ``offset``."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, offset: int, end: int | None = None, key: str = "") -> Span:
        line, column = self.position(offset)
        if end is None:
            return Span(self.path, line, column, key)
        end_line, end_column = self.position(end)
        return Span(
            self.path,
            line,
            column,
            key,
            end_column=end_column,
            end_line=end_line if end_line != line else None,
        )

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return self.text[start:end]


def unreadable(span: Span, message: str) -> InputProblem:
    """A KV901 problem: the file (or part of it) cannot be read."""
    return InputProblem(codes.UNREADABLE_FILE, span, message, Severity.ERROR)


def decode(path: str, data: bytes) -> tuple[SourceText | None, list[InputProblem]]:
    """UTF-8 text (a BOM dropped), or a KV901 problem for binary content or invalid UTF-8."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            message = f"{name} text (byte-order mark): save the file as UTF-8"
            return None, [unreadable(Span(path, 1, 1), message)]
    if b"\x00" in data[:8192]:
        return None, [unreadable(Span(path, 1, 1), "binary file (NUL bytes): not a YAML or JSON")]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # Position the first bad byte by decoding what precedes it.
        before = data[: exc.start].decode("utf-8", errors="replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        message = f"invalid UTF-8 (byte 0x{data[exc.start]:02x}): save the file as UTF-8"
        return None, [unreadable(Span(path, line, column), message)]
    if "\r" in text:
        # Columns and offsets are counted on the normalised text, as YAML parsers see lines.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return SourceText.of(path, text), []


def find_placeholder(text: str, start: int = 0) -> tuple[int, int] | None:
    """(start, end) of the first template placeholder ``{{ ... }}`` in ``text`` (no ``}`` or
    newline inside), as ``re.search(r"\\{\\{[^}\n]*\\}\\}")`` finds it, in linear time.

    The pattern backtracks: a line of ``{{{{...`` tried every ``{{`` to the line's end (80 KB:
    seconds). Every start before the first ``}`` or newline after it meets that same character,
    so one look at it settles them all, and the search goes on past it.
    """
    close = newline = -2  # the next `}` / newline at or after the search point (-1: none)
    i = text.find("{{", start)
    while i >= 0:
        inner = i + 2
        if close < inner and close != -1:
            close = text.find("}", inner)
        if newline < inner and newline != -1:
            newline = text.find("\n", inner)
        if close < 0:
            return None  # no `}` after here: nothing can close
        if 0 <= newline < close:
            i = text.find("{{", newline + 1)
            continue
        if text.startswith("}}", close):
            return i, close + 2
        i = text.find("{{", close + 1)
    return None


def conflict_markers(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets of git merge-conflict marker lines (``<<<<<<< HEAD``, ``=======``, ``>>>>>>>``)."""
    return [
        m.start() for m in _CONFLICT_RE.finditer(text, start, len(text) if end is None else end)
    ]
