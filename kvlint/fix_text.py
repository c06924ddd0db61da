"""Where a fix's edit goes in a file's text, and what is written there.

A finding's span counts lines and columns in the text the loader parsed (no BOM, every line end
``\\n``); its edit must replace exactly those characters of the file as written (BOM and CR
kept), inside one YAML scalar, and be written in that value's own quoting (plain, quoted, JSON,
one word of a shell line), or be refused with the reason. Kept apart from the fixing rounds
(``kvlint.fix``), which deal only in the ranges this gives and whether they overlap, so the
rules for where and how a value may be rewritten are read in one place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kvlint.finding import Edit
from kvlint.finding import Span
from kvlint.lazy_re import lazy

BOM = "\ufeff"

# A replacement written as a plain YAML scalar: no indicator first, no `: ` or ` #`, nothing a
# flow collection would split on. Anything else is written double-quoted.
_PLAIN = lazy(r"(?!- )[A-Za-z0-9_.+/-](?:[A-Za-z0-9_.+/ -]*[A-Za-z0-9_.+/-])?\Z")
# A replacement for one shell word inside a longer string (``sh -c "..."``, ``--flag=value``):
# nothing the shell, the YAML scalar around it or a flow collection would read differently.
_WORD = lazy(r"[A-Za-z0-9_.+/=@%-]+\Z")
_JSON_LITERAL = lazy(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z|true\Z|false\Z")


# ---------------------------------------------------------------------------------------------
# Text: the file as read (BOM, CR kept) and the normalised text the loader's spans count in.


class Text:
    """A file's text as written, with the offsets of the loader's line:column positions."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.bom = 1 if raw.startswith(BOM) else 0
        # Line starts as the loader counts lines (CRLF and a lone CR are one line end each).
        self.starts = [self.bom]
        self.starts.extend(m.end() for m in re.finditer(r"\r\n|\r|\n", raw))

    def offset(self, line: int, column: int) -> int | None:
        if not 1 <= line <= len(self.starts) or column < 1:
            return None
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.raw)
        end -= len(_ending(self.raw, end)) if line < len(self.starts) else 0
        offset = start + column - 1
        return offset if offset <= end else None

    def normalised(self) -> str:
        """The text the loader parsed (no BOM, every line end ``\\n``): spans count in it."""
        return self.raw[self.bom :].replace("\r\n", "\n").replace("\r", "\n")


def _ending(raw: str, line_start: int) -> str:
    """The line end just before ``line_start``."""
    if raw.startswith("\r\n", line_start - 2):
        return "\r\n"
    return raw[line_start - 1 : line_start]


@dataclass(frozen=True)
class Range:
    """A replacement: the text to put between two offsets."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Scalars:
    """Every scalar of the file by its (start, end) in the normalised text, with its style."""

    whole: dict[tuple[int, int], str]
    spans: tuple[tuple[int, int, str], ...]
    text: str = ""  # the normalised text they were read from

    def containing(self, start: int, end: int) -> str | None:
        for first, last, style in self.spans:
            if first <= start and end <= last:
                return style
        return None


def parse_scalars(text: Text, display: str, json_file: bool) -> Scalars:
    from kvlint.source.nodes import Mapping
    from kvlint.source.nodes import Node
    from kvlint.source.nodes import Scalar
    from kvlint.source.nodes import Sequence as SequenceNode
    from kvlint.source.text import SourceText
    from kvlint.source.yaml import parse_documents

    normalised = text.normalised()
    documents, _ = parse_documents(SourceText.of(display, normalised), json=json_file)
    found: list[tuple[int, int, str]] = []
    stack: list[Node] = [d.root for d in documents]
    while stack:
        node = stack.pop()
        if isinstance(node, Scalar):
            found.append((node.start, node.end, node.style))
        elif isinstance(node, Mapping):
            stack.extend(v for _, v in node.items)
        elif isinstance(node, SequenceNode):
            stack.extend(node.items)
    found.sort()
    return Scalars({(a, b): s for a, b, s in found}, tuple(found), normalised)


class Refused(Exception):
    """An edit kvlint will not make by itself; the message says why."""


def _locate(text: Text, span: Span) -> tuple[int, int]:
    """(start, end) of the span's characters in the file as written."""
    if span.end_column is None:
        raise Refused("the value's extent is unknown")
    start = text.offset(span.line, span.column)
    end = text.offset(span.end_line or span.line, span.end_column)
    if start is None or end is None or end <= start:
        raise Refused("the value is not where the finding says")
    return start, end


def _norm_offset(normalised_starts: Sequence[int], span: Span, end: bool) -> int:
    line = (span.end_line or span.line) if end else span.line
    column = span.end_column if end and span.end_column is not None else span.column
    return normalised_starts[line - 1] + column - 1


def _render(old: str, replacement: str, style: str | None, *, whole: bool, json_file: bool) -> str:
    """The replacement as it must be written where ``old`` was, in ``old``'s quoting."""
    if "\n" in replacement or "\r" in replacement:
        raise Refused("the replacement spans lines")
    if not whole:
        # One shell word inside a longer scalar: keep its shell quotes, never add escapes.
        if "\n" in old or "\r" in old:
            raise Refused("the value spans lines inside a longer scalar")
        quote = old[0] if len(old) >= 2 and old[0] == old[-1] and old[0] in "'\"" else ""
        inner = old[1:-1] if quote else old
        if any(char in inner for char in "\\'\""):
            raise Refused("the value is written with escapes")
        if not _WORD.match(replacement):
            raise Refused(f"`{replacement}` cannot be written inside a command line")
        return f"{quote}{replacement}{quote}"
    if style in ("|", ">"):
        raise Refused("the value is a block scalar")
    if style == '"' or (json_file and not _JSON_LITERAL.match(replacement)):
        return json.dumps(replacement, ensure_ascii=False)
    if style == "'":
        return "'" + replacement.replace("'", "''") + "'"
    if _PLAIN.match(replacement):
        return replacement
    return json.dumps(replacement, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# An edit: located in the text, inside a scalar of the file, rendered in that scalar's quoting.


# An anchor written just before a value (`&seqs 512`, `&seqs !!int 512`), on its line.
_ANCHOR_BEFORE = lazy(r"&([^\s,\[\]{}]+)[ \t]+(?:![^\s]*[ \t]+)?\Z")


def _shared_anchor(normalised: str, start: int) -> str | None:
    """The anchor of the value at ``start`` when an alias elsewhere in the file uses it."""
    line_start = normalised.rfind("\n", 0, start) + 1
    match = _ANCHOR_BEFORE.search(normalised, line_start, start)
    if match is None:
        return None
    name = match.group(1)
    alias = re.search(rf"\*{re.escape(name)}(?![^\s,\[\]{{}}])", normalised)
    return name if alias is not None else None


def edit_range(
    text: Text,
    scalars: Scalars,
    normalised_starts: Sequence[int],
    edit: Edit,
    display: str,
    json_file: bool,
) -> Range:
    """Where ``edit`` goes in ``text`` and what is written there, or ``Refused`` and why."""
    span = edit.span
    if span.path != display:
        raise Refused(f"the value is in another file ({span.path})")
    start, end = _locate(text, span)
    old = text.raw[start:end]
    first = _norm_offset(normalised_starts, span, end=False)
    last = _norm_offset(normalised_starts, span, end=True)
    anchor = _shared_anchor(scalars.text, first)
    if anchor is not None:
        raise Refused(
            f"the value is anchored (`&{anchor}`) and an alias uses it: fixing it would change "
            "that use too"
        )
    style = scalars.whole.get((first, last))
    whole = style is not None
    if not whole:
        style = scalars.containing(first, last)
        if style is None:
            raise Refused("the value is not a YAML scalar of the file")
    return Range(
        start, end, _render(old, edit.replacement, style, whole=whole, json_file=json_file)
    )
