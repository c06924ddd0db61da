"""Command-line tokens with positions: list items, shell strings (``sh -c "..."``), substitution.

A token read from a YAML list item points at that item. A token cut out of a longer string (a
``sh -c`` script, a folded ``command: >`` block, ``VLLM_ADDITIONAL_ARGS``) points at its own
characters: the parsed string is aligned back onto the file's characters, so the column is that
of the token in the file whatever the scalar's style (plain, quoted, ``|`` or ``>``).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Mapping
from typing import NamedTuple

from kvlint.finding import Span
from kvlint.lazy_re import lazy
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

_OPERATORS = (";", "&&", "||", "|", "&", "\n", "(", ")")
_K8S_VAR_RE = lazy(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_SHELL_VAR_RE = lazy(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_BLANKS_RE = lazy(r"\s*")
_SHELL_OR_K8S_VAR_RE = lazy(f"{_K8S_VAR_RE.pattern}|{_SHELL_VAR_RE.pattern}")


class Aligner:
    """Maps offsets in a scalar's parsed text to offsets in the file (both 0-based).

    Linear in the scalar: a plain scalar is its own map (no table); otherwise each character of
    the text is looked for a few characters on in the file (past folded whitespace), never
    across the rest of the script, so a megabyte of escapes costs a megabyte of steps (the
    search to the end for each of them took 21 s on 2.4 MB, issue 15)."""

    __slots__ = ("_identity", "_map", "scalar")

    # An escape is at most 10 characters (`\U0001F600`), a continuation a backslash, a newline
    # and the next line's indentation: a character further on than this is not the one sought.
    WINDOW = 64

    def __init__(self, scalar: Scalar) -> None:
        self.scalar = scalar
        self._map: array[int] | None = None
        self._identity: bool | None = None  # the text is the file's characters as they are

    def _build(self) -> array[int]:
        scalar = self.scalar
        raw = scalar.source.text[scalar.start : scalar.end]
        text = scalar.text
        start = scalar.start
        pos = 0
        if scalar.style in ("|", ">"):
            pos = raw.find("\n") + 1  # skip the block header (`|-`, `>2`, a comment)
        elif scalar.style in ('"', "'"):
            pos = 1
        # Characters only escapes make (`\u00e9` for é when no é is written): found nowhere.
        missing = set(text).difference(raw)
        mapping = array("q")
        append = mapping.append
        window = self.WINDOW
        for char in text:
            if char.isspace() or char in missing:
                append(start + pos)
                continue
            if raw.startswith(char, pos):
                append(start + pos)
                pos += 1
                continue
            # Non-blank characters appear in the file in order; folding, indentation and
            # escapes only add characters between them.
            after = _BLANKS_RE.match(raw, pos).end()  # type: ignore[union-attr]
            found = raw.find(char, after, after + window)
            if found < 0:
                append(start + pos)
                continue
            append(start + found)
            pos = found + 1
        append(start + pos)
        return mapping

    def offset(self, index: int) -> int:
        scalar = self.scalar
        if self._identity is None:
            # A plain one-line scalar: the identity, no table.
            self._identity = scalar.end - scalar.start == len(scalar.text) and (
                scalar.source.text.startswith(scalar.text, scalar.start)
            )
        if self._identity:
            return scalar.start + min(index, len(scalar.text))
        if self._map is None:
            self._map = self._build()
        return self._map[min(index, len(self._map) - 1)]

    def span(self, start: int, end: int) -> Span:
        """The file span of ``text[start:end]`` (``end`` exclusive, ``start < end``)."""
        first = self.offset(start)
        last = self.offset(end - 1) + 1 if end > start else first
        return self.scalar.source.span(first, last, self.scalar.path)


class Token(NamedTuple):
    """One argv word: its text (after quote removal) and where its characters are."""

    text: str
    node: Scalar | None
    aligner: Aligner | None = None
    start: int = 0  # offsets in node.text (only with an aligner)
    end: int = 0
    fallback: Span | None = None  # for tokens with no node (synthesised)

    @property
    def span(self) -> Span:
        if self.aligner is not None:
            return self.aligner.span(self.start, self.end)
        if self.node is not None:
            return self.node.span
        assert self.fallback is not None
        return self.fallback

    @property
    def raw(self) -> str:
        if self.node is None:
            return self.text
        if self.aligner is not None:
            span = self.span
            source = self.node.source
            first = source.line_starts[span.line - 1] + span.column - 1
            last_line = span.end_line or span.line
            last = source.line_starts[last_line - 1] + (span.end_column or span.column) - 1
            return source.text[first:last]
        return self.node.raw

    def tail(self, skip: int) -> Token:
        """The token without its first ``skip`` characters: the value of ``--flag=value``."""
        if self.aligner is not None:
            return self._replace(text=self.text[skip:], start=self.start + skip)
        if self.node is not None and self.node.text == self.text:
            aligner = Aligner(self.node)
            return Token(self.text[skip:], self.node, aligner, skip, len(self.text))
        return self._replace(text=self.text[skip:])


def from_node(node: Node | None) -> list[Token]:
    """Tokens of a ``command``/``args`` value: a list (one token per item) or one string."""
    if node is None:
        return []
    if isinstance(node, Sequence):
        return [
            Token(item.text, item)
            for item in node.items
            if isinstance(item, Scalar) and item.value is not None
        ]
    if isinstance(node, Scalar) and node.value is not None:
        return words(node)
    return []


def words(scalar: Scalar) -> list[Token]:
    """A string split into words as a shell would (compose ``command: "..."``)."""
    return [token for command in commands(scalar) for token in command]


def commands(scalar: Scalar) -> list[list[Token]]:
    """A shell script split into simple commands (at ``;``, ``&&``, ``|``, newlines), as words."""
    aligner = Aligner(scalar)
    result: list[list[Token]] = [[]]
    for text, start, end, is_operator in _lex(scalar.text):
        if is_operator:
            if result[-1]:
                result.append([])
            continue
        result[-1].append(Token(text, scalar, aligner, start, end))
    return [command for command in result if command]


def _lex(text: str) -> list[tuple[str, int, int, bool]]:
    """(word, start, end, is_operator) with POSIX-shell quoting, comments and continuations."""
    out: list[tuple[str, int, int, bool]] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2  # a line continuation
            continue
        if char in " \t\r":
            i += 1
            continue
        if char == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        operator = next((op for op in _OPERATORS if text.startswith(op, i)), None)
        if operator is not None:
            out.append((operator, i, i + len(operator), True))
            i += len(operator)
            continue
        start = i
        word: list[str] = []
        while i < n:
            char = text[i]
            if char in " \t\r\n;&|()":
                break
            if char == "$" and i + 1 < n and text[i + 1] in "({":
                # $(VAR) / ${VAR} stay in the word (Kubernetes or shell expansion, done later).
                close = text.find(")" if text[i + 1] == "(" else "}", i + 2)
                close = n - 1 if close < 0 else close
                word.append(text[i : close + 1])
                i = close + 1
            elif char == "\\" and i + 1 < n:
                if text[i + 1] != "\n":
                    word.append(text[i + 1])
                i += 2
            elif char == "'":
                close = text.find("'", i + 1)
                close = n if close < 0 else close
                word.append(text[i + 1 : close])
                i = close + 1
            elif char == '"':
                i += 1
                while i < n and text[i] != '"':
                    if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`':
                        i += 1
                    word.append(text[i])
                    i += 1
                i += 1
            else:
                word.append(char)
                i += 1
        out.append(("".join(word), start, min(i, n), False))
    return out


def substitute(token: Token, env: Mapping[str, Token], *, shell: bool = False) -> Token:
    """Kubernetes ``$(VAR)`` expansion from the container's env (``$VAR`` too for a shell).

    A token that is exactly one variable takes the span of the variable's value, so a finding
    points where the value is written.
    """
    text = token.text
    if "$" not in text:
        return token
    pattern = _SHELL_OR_K8S_VAR_RE if shell else _K8S_VAR_RE
    whole = pattern.fullmatch(text)
    if whole is not None:
        name = next(group for group in whole.groups() if group)
        if name in env:
            return env[name]

    def value(match: re.Match[str]) -> str:
        name = next(group for group in match.groups() if group)
        return env[name].text if name in env else match.group(0)

    # One pass over the text (a str.replace per variable was quadratic in a long script).
    result = pattern.sub(value, text)
    return token._replace(text=result) if result != text else token


def nested_commands(word: Token) -> list[list[Token]]:
    """The commands of a script that is itself one word of a string (compose's
    ``command: sh -c "vllm serve ..."``), each token still pointing at its characters."""
    node, aligner = word.node, word.aligner
    if node is None or aligner is None:
        return []
    result: list[list[Token]] = [[]]
    cursor = word.start
    for text, _, _, is_operator in _lex(word.text):
        if is_operator:
            if result[-1]:
                result.append([])
            continue
        # The words appear in the string in order; quotes and escapes only add characters.
        found = node.text.find(text, cursor, word.end) if text else -1
        if found < 0:
            result[-1].append(Token(text, node, aligner, word.start, word.end))
            continue
        result[-1].append(Token(text, node, aligner, found, found + len(text)))
        cursor = found + len(text)
    return [command for command in result if command]
