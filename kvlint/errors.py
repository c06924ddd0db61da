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

    def lines(self) -> list[str]:
        """What the CLI prints, one ``kvlint: `` line each."""
        return [str(self)]


class KvlintErrors(KvlintError):
    """Several errors reported together (every mistake of a config file, not only the first)."""

    def __init__(self, errors: list[KvlintError]) -> None:
        first = errors[0]
        super().__init__(first.message, first.span, path=first.path)
        self.errors = errors

    def lines(self) -> list[str]:
        return [line for error in self.errors for line in error.lines()]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def raise_all(errors: list[KvlintError]) -> None:
    """Nothing when ``errors`` is empty; the one error, or all of them together."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise KvlintErrors(errors)


class ModelNotResolved(KvlintError):
    """A model reference kvlint cannot turn into its facts here and now: not in the catalog or
    the cache while offline, the Hub unreachable, or an architecture kvlint does not size.

    Unlike an unreadable file this is no mistake in the input: the linter reports it as a
    KV902 warning naming the checks that did not run, and the run goes on.
    """


class UnsizedArchitecture(ModelNotResolved):
    """A config whose ``model_type`` no family module reads (or one kvlint knows it cannot
    size): refused, never read as a generic decoder."""


class ClosedPipe(Exception):
    """The output pipe closed (``kvlint check | head -1``); ``code`` is the exit code the run
    had reached, which stays its verdict."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code
