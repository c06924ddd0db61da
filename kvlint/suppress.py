"""Suppressions: ``# kvlint: disable=...`` comments and ``kvlint.dev/ignore`` annotations."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import NamedTuple

from kvlint.finding import Finding
from kvlint.finding import Span
from kvlint.lazy_re import lazy

if TYPE_CHECKING:
    from kvlint.deployment import Sourced

ANNOTATION = "kvlint.dev/ignore"

_CODES = r"[A-Za-z0-9][A-Za-z0-9-]*(?:[ \t]*,[ \t]*[A-Za-z0-9][A-Za-z0-9-]*)*"
# A comment starts at `#` at the start of a line or after blank space (a `#` inside a word, as
# in `image: repo#tag`, is not a YAML comment).
_DIRECTIVE = lazy(
    rf"(?:^|(?<=\s))#[ \t]*kvlint:[ \t]*(?P<kind>disable-file|disable)(?=[ \t=]|$)"
    rf"(?:[ \t]*=[ \t]*(?P<codes>{_CODES}))?(?P<reason>.*)$"
)
# Any `# kvlint:` comment: one the pattern above does not read is reported, not ignored.
_COMMENT = lazy(r"(?:^|(?<=\s))#[ \t]*kvlint:[ \t]*(?P<text>.*)$")
# `disable KV301` (no `=`) would read as "disable every rule, because KV301": a mistake.
_CODE_AS_REASON = lazy(r"[A-Za-z]{2,4}[0-9]{1,3}\b")
_ANNOTATION_ENTRY = lazy(rf"^\s*(?P<codes>{_CODES})\s*(?::(?P<reason>.*))?$")


@dataclass
class Directive:
    """One suppression as written. ``codes`` empty: every code. ``lines`` empty: the whole file
    (``disable-file``) or, for an annotation, the whole deployment."""

    kind: str  # "disable", "disable-file", "annotation"; "malformed": not understood
    span: Span  # where it is written: the `#` of the comment, or the annotation's value
    codes: tuple[str, ...]
    reason: str = ""
    lines: frozenset[int] = frozenset()
    used: set[str] = field(default_factory=set)  # the selectors that suppressed something
    problem: str = ""  # a malformed directive: what was not understood, and how to write it

    @property
    def text(self) -> str:
        if self.kind == "annotation":
            return f"{ANNOTATION}: {', '.join(self.codes)}"
        codes = f"={','.join(self.codes)}" if self.codes else ""
        return f"# kvlint: {self.kind}{codes}"

    def covers(self, finding: Finding) -> str | None:
        """The selector that matches ``finding`` (``"*"`` for a bare directive), or None."""
        if self.kind == "malformed":
            return None
        if self.lines and finding.span.line not in self.lines:
            return None
        if not self.codes:
            return "*"
        for selector in self.codes:
            if _matches(selector, finding):
                return selector
        return None


def _matches(selector: str, finding: Finding) -> bool:
    if selector.lower() == finding.name:
        return True
    upper = selector.upper()
    return bool(re.fullmatch(r"[A-Z]{1,4}[0-9]{0,3}", upper)) and finding.code.startswith(upper)


def _split_codes(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(part.strip() for part in text.split(",") if part.strip())


def parse_comments(path: str, text: str) -> list[Directive]:
    """Every ``# kvlint:`` comment of a file. A trailing comment covers its own line; a comment
    alone on its line covers that line and the next line that is not blank or a comment."""
    lines = text.splitlines()
    out: list[Directive] = []
    for index, line in enumerate(lines):
        if "kvlint:" not in line:
            continue
        number = index + 1
        match = _DIRECTIVE.search(line)
        comment = _COMMENT.search(line)
        if match is None or (
            not match.group("codes") and _CODE_AS_REASON.match(match.group("reason").strip())
        ):
            if comment is not None:
                out.append(_malformed_comment(path, number, comment))
            continue
        end = match.end("codes") if match.group("codes") else match.end("kind")
        span = Span(path, number, match.start() + 1, end_column=end + 1)
        codes = _split_codes(match.group("codes"))
        reason = match.group("reason").strip()
        if match.group("kind") == "disable-file":
            out.append(Directive("disable-file", span, codes, reason))
            continue
        covered = {number}
        if not line[: match.start()].strip():
            following = next(
                (
                    i + 1
                    for i in range(index + 1, len(lines))
                    if lines[i].strip() and not lines[i].lstrip().startswith("#")
                ),
                None,
            )
            if following is not None:
                covered.add(following)
        out.append(Directive("disable", span, codes, reason, frozenset(covered)))
    return out


def parse_annotations(annotations: Mapping[str, Sourced[str]]) -> list[Directive]:
    """The ``kvlint.dev/ignore: "KV301, KV302: reason"`` annotation of a Kubernetes object;
    several entries may be separated by ``;``."""
    value = annotations.get(ANNOTATION)
    if value is None:
        return []
    out: list[Directive] = []
    for entry in str(value.value).split(";"):
        match = _ANNOTATION_ENTRY.match(entry)
        if match is None:
            if entry.strip():
                out.append(_malformed_annotation(value.span, entry.strip()))
            continue
        reason = (match.group("reason") or "").strip()
        out.append(Directive("annotation", value.span, _split_codes(match.group("codes")), reason))
    return out


def _malformed_comment(path: str, number: int, comment: re.Match[str]) -> Directive:
    text = comment.group(0).strip()
    word = comment.group("text").split("=", 1)[0].split(None, 1)
    if word and word[0] in ("disable", "disable-file"):
        # `disable KV301`: the codes need the `=`.
        rest = comment.group("text")[len(word[0]) :].strip()
        hint = f"write `# kvlint: {word[0]}={rest.split()[0]}` to name the rule"
    else:
        hint = (
            "kvlint reads `# kvlint: disable=CODES reason` (this line, or the next when alone "
            "on its line) and `# kvlint: disable-file`"
        )
    span = Span(path, number, comment.start() + 1, end_column=comment.end() + 1)
    return Directive("malformed", span, (), problem=f"`{text}` is not understood: {hint}")


def _malformed_annotation(span: Span, entry: str) -> Directive:
    words = entry.split(None, 1)
    example = f"{words[0]}: {words[1]}" if len(words) == 2 else "KV301: reason"
    problem = (
        f"`{ANNOTATION}` entry `{entry}` is not understood: write the codes, a colon and the "
        f"reason (`{example}`)"
    )
    return Directive("malformed", span, (), problem=problem)


def apply(
    findings: Iterable[Finding], directives: Iterable[Directive]
) -> tuple[list[Finding], int]:
    """The findings no directive covers, and how many were suppressed; marks directives used."""
    active = list(directives)
    kept: list[Finding] = []
    suppressed = 0
    for finding in findings:
        hit = False
        for directive in active:
            selector = directive.covers(finding)
            if selector is not None:
                directive.used.add(selector)
                hit = True
        if hit:
            suppressed += 1
        else:
            kept.append(finding)
    return kept, suppressed


class Unused(NamedTuple):
    """A directive (or some of its codes) that suppressed nothing: a KV906 problem."""

    span: Span
    message: str


def unused(directives: Iterable[Directive], is_known: Callable[[str], bool | None]) -> list[Unused]:
    """Directives that suppressed nothing. A code whose rule did not run (not selected) is not
    reported: it would suppress if the rule were turned on. An unknown code always is.
    ``is_known(selector)``: None when no rule matches it, True when a matching rule ran, False
    when it matches rules that were not selected."""
    out: list[Unused] = []
    for directive in directives:
        if directive.kind == "malformed":
            out.append(Unused(directive.span, directive.problem))
            continue
        if not directive.codes:
            if not directive.used:
                out.append(Unused(directive.span, f"`{directive.text}` suppresses nothing"))
            continue
        unknown = [c for c in directive.codes if is_known(c) is None]
        idle = [c for c in directive.codes if c not in directive.used and is_known(c) is True]
        if unknown:
            names = ", ".join(f"`{c}`" for c in unknown)
            out.append(Unused(directive.span, f"`{directive.text}` names no known rule: {names}"))
        if idle and len(idle) == len(directive.codes):
            out.append(Unused(directive.span, f"`{directive.text}` suppresses nothing"))
        elif idle:
            names = ", ".join(f"`{c}`" for c in idle)
            out.append(Unused(directive.span, f"{names} in `{directive.text}` suppresses nothing"))
    return out
