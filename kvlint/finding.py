"""The records a check produces: Severity, Span, Fix, Problem (what a rule yields), Finding, and
InputProblem (what a reader found wrong with the input itself)."""

from __future__ import annotations

import enum
import re
from typing import NamedTuple

from kvlint.lazy_re import lazy


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None

    def __str__(self) -> str:
        return self.name.lower()


class Span(NamedTuple):
    """Where a value came from: 1-based line and column, and the key path inside the document."""

    path: str
    line: int
    column: int
    key: str = ""
    end_column: int | None = None  # exclusive, for a token inside a longer scalar
    end_line: int | None = None  # the line ``end_column`` is on, when the value spans lines

    def location(self) -> str:
        return f"{printable(self.path)}:{self.line}:{self.column}"  # a path may hold a newline


class Applicability(enum.Enum):
    SAFE = "safe"  # changes nothing the user meant
    UNSAFE = "unsafe"  # changes behaviour; only with --unsafe-fixes


class Edit(NamedTuple):
    """Replace the value found at ``span`` with ``replacement`` (text as it should appear)."""

    span: Span
    replacement: str


class Fix(NamedTuple):
    title: str
    edits: tuple[Edit, ...] = ()
    applicability: Applicability = Applicability.UNSAFE


FIXABLE = "[*]"  # `--fix` applies it (an unsafe fix only with `--unsafe-fixes`)
UNSAFE_FIX = "[~]"  # an unsafe fix `--fix` leaves alone unless `--unsafe-fixes` is given


def fix_marker(fix: Fix | None, *, unsafe_fixes: bool = False) -> str:
    """How a text report flags a finding's fix: ``[*]`` when ``--fix`` applies it, ``[~]`` when
    it needs ``--unsafe-fixes`` too, ``""`` when there is nothing to apply (advice only)."""
    if fix is None or not fix.edits:
        return ""
    if fix.applicability is Applicability.SAFE or unsafe_fixes:
        return FIXABLE
    return UNSAFE_FIX


class Problem(NamedTuple):
    """What a rule yields: the span of the value to change and a one-line message."""

    span: Span
    message: str
    fix: Fix | None = None
    numbers: tuple[tuple[str, str], ...] = ()  # (label, formatted value) behind the message
    # A rule whose one mistake has graver and milder forms (KV401: every layer windowed is a
    # warning, a hybrid model's local layers only an info) sets it; a severity configured for
    # the rule still wins, and None means the rule's default.
    severity: Severity | None = None


class Finding(NamedTuple):
    """What the linter reports: a Problem stamped with the rule's code, name and severity."""

    code: str
    name: str
    severity: Severity
    span: Span
    message: str
    fix: Fix | None = None
    numbers: tuple[tuple[str, str], ...] = ()

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.path, self.span.line, self.span.column, self.code)


# Control characters, and lone surrogates: the bytes of a file name that are not UTF-8 reach
# Python as U+DC80..U+DCFF (os.fsdecode), which no UTF-8 output can hold.
_CONTROL_RE = lazy("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if "\udc80" <= char <= "\udcff":  # the byte os.fsdecode could not decode, as \xff
        return f"\\x{ord(char) - 0xDC00:02x}"
    return repr(char)[1:-1]


def printable(text: str) -> str:
    """``text`` with control characters escaped as Python writes them (``\\n``, ``\\x1b``): a
    value quoted from a hostile file cannot split a report line, start a GitHub workflow command
    (``::error::``) on a line of its own, or send escape sequences to a terminal."""
    if not _CONTROL_RE.search(text):
        return text
    return _CONTROL_RE.sub(_escaped, text)


# How a KV902 message ends: the checks that did not run for want of the model's facts
# (`; not checked without the model: KV101, KV102, ...`); KV902's rule keeps this tail when it
# rewords the rest.
NOT_CHECKED = "; not checked without the model: "


# A finding's message is one line a person reads: a value quoted from an 80 KB line is cut in
# its middle, the start and the end of the message kept (the end often says what to do).
MAX_MESSAGE = 2_000
_HEAD, _TAIL = 1_400, 400


def message_text(text: str) -> str:
    """A message as reports print it: control characters escaped (``printable``), and cut in
    the middle past ``MAX_MESSAGE`` characters, saying how much was left out."""
    text = printable(text)
    if len(text) <= MAX_MESSAGE:
        return text
    cut = len(text) - _HEAD - _TAIL
    return f"{text[:_HEAD]}[... {cut:,} characters ...]{text[-_TAIL:]}"


class InputProblem(NamedTuple):
    """Something wrong with the input itself, found while reading it (KV5xx / KV9xx)."""

    code: str
    span: Span
    message: str
    severity: Severity = Severity.WARNING
