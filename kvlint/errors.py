"""KvlintError: the one exit-2 path for bad input; printed as one line, never a traceback."""

from __future__ import annotations

from kvlint.finding import Span
from kvlint.finding import printable


class KvlintError(Exception):
    """Input kvlint cannot work with: a file, a key, a model, a GPU name.

    ``str()`` is the single line the CLI prints: ``path:line:col: message`` when a position is
    known, else ``path: message`` or just the message.
    """

    def __init__(self, message: str, span: Span | None = None, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.path = span.path if span is not None else path

    def __str__(self) -> str:
        # printable: a path or value from a hostile file cannot split the line or drive a terminal
        if self.span is not None:
            return f"{self.span.location()}: {printable(self.message)}"
        if self.path:
            return f"{printable(self.path)}: {printable(self.message)}"
        return printable(self.message)
