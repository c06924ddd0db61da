"""Compose interpolation: ``${VAR:-default}`` is read as its default, ``${VAR}`` as run time.

docker compose substitutes ``${VAR}``, ``${VAR:-default}`` and ``${VAR-default}`` from the
shell and the project's ``.env`` before a container starts (``$$`` is a literal ``$``). kvlint
sees neither, so a default is what the file says the value is, and a variable without one is a
value filled in at run time: left as written, the engine readers keep it as such (KV907).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kvlint.deploy.argv import Aligner
from kvlint.deploy.argv import Token
from kvlint.lazy_re import lazy

# ${VAR:-default} / ${VAR-default}: the innermost (a default holds no `}` and no `$`, so
# `${LEN:-${CTX:-8192}}` is read from the inside out).
_DEFAULT_RE = lazy(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?-([^}$]*)\}")
# `$$` is a literal `$` (read left to right, so `$${VAR:-x}` stays a shell expression).
_ESCAPED_OR_DEFAULT_RE = lazy(r"\$\$|" + _DEFAULT_RE.pattern)


def interpolate(token: Token) -> Token:
    """``token`` with each ``${VAR:-default}`` replaced by its default and ``$$`` by ``$``.

    A token that is one such expression points at the default's own characters, so a finding
    on the value lands where the default is written."""
    text = token.text
    if "$" not in text:
        return token
    whole = _DEFAULT_RE.fullmatch(text)
    if whole is not None:
        return _slice(token, whole.start(2), whole.end(2))

    def value(match: re.Match[str]) -> str:
        return "$" if match.group(0) == "$$" else match.group(2)

    result = _ESCAPED_OR_DEFAULT_RE.sub(value, text)
    while _DEFAULT_RE.search(result):  # nested defaults, from the inside out
        result = _DEFAULT_RE.sub(lambda match: match.group(2), result)
    if result == text:
        return token
    if "$" not in result and result and text.startswith("${"):
        # One nested expression: its value is the innermost default, written last in it.
        at = text.rfind(result)
        if at > 0:
            return _slice(token, at, at + len(result))
    return token._replace(text=result)


def _slice(token: Token, start: int, end: int) -> Token:
    """The characters ``start:end`` of the token, keeping their place in the file."""
    text = token.text[start:end]
    if token.aligner is not None:
        return token._replace(text=text, start=token.start + start, end=token.start + end)
    if token.node is not None and token.node.text == token.text and end > start:
        return Token(text, token.node, Aligner(token.node), start, end)
    return token._replace(text=text)


def shell_defaults(token: Token, env: Mapping[str, Token]) -> Token:
    """A shell word's ``${VAR:-default}``: the container's ``VAR`` when it sets one, else the
    default (what the shell running ``sh -c`` does)."""
    whole = _DEFAULT_RE.fullmatch(token.text)
    if whole is not None:
        name = whole.group(1)
        return env[name] if name in env else _slice(token, whole.start(2), whole.end(2))
    if "${" not in token.text:
        return token

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return env[name].text if name in env else match.group(2)

    result = _DEFAULT_RE.sub(value, token.text)
    return token._replace(text=result) if result != token.text else token
