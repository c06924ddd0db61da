"""The Rule base class every check subclasses, its Options base model and the doc-section parser."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar
from typing import NamedTuple

from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Fix
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.lazy_re import lazy

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class FixAvailability(enum.Enum):
    """Whether a rule can offer a fix (ruff's ``FixAvailability``)."""

    NONE = "none"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@dataclass(frozen=True)
class NoOptions:
    """The options of a rule that takes none: any key given in the config is an error.

    A rule's ``Options`` is a frozen dataclass whose fields all have defaults (bounds and a
    description go in ``field(metadata=...)``, as ``pydantic.Field`` arguments), or a pydantic
    model; ``kvlint.options`` validates what the config file gives.
    """


class Rule:
    """A check over one Deployment. Subclasses set the class attributes and write ``check``.

    The subclass docstring is the rule's documentation, in ruff's sections (see ``REQUIRED``).
    A rule never reads files, prints or touches the network: everything it needs is in the
    Deployment and its Sizing.
    """

    code: ClassVar[str]  # "KV301"
    name: ClassVar[str]  # "max-num-seqs-over-kv-budget": names the mistake, not the remedy
    severity: ClassVar[Severity]  # the default; config may override it
    engines: ClassVar[frozenset[str]] = frozenset()  # empty: every engine
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    Options: ClassVar[type[Any]] = NoOptions
    # False for rules that work without the model's facts (input problems, unknown flags): when
    # the model cannot be resolved (KV902) the linter runs only these for the deployment.
    needs_model: ClassVar[bool] = True

    def __init__(self, options: Any = None) -> None:
        self.options = options if options is not None else self.Options()

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        """Yield a Problem for each mistake in ``dep``; ``sizing`` has the numbers."""
        raise NotImplementedError(f"{type(self).__name__}.check")
        yield  # pragma: no cover  (makes this a generator for type checkers and readers)

    @classmethod
    def applies_to(cls, engine: str) -> bool:
        return not cls.engines or engine in cls.engines

    @classmethod
    def doc(cls) -> RuleDoc:
        import inspect  # for `kvlint explain` and documentation only: off a check's start-up

        return parse_doc(inspect.getdoc(cls) or "")


# What one rule may yield on one deployment: one per key or item a file may hold (the reader
# refuses more than 100,000, kvlint.source.yaml.MAX_ENTRIES); more is a runaway rule.
MAX_PROBLEMS = 100_000


def checked_problems(items: Iterable[Any]) -> list[Problem]:
    """What a rule's ``check`` yields, each item checked (a plugin's NamedTuple can hold
    anything); the first that is not a valid Problem raises PluginFailure saying why."""
    from kvlint.isolation import PluginFailure

    out: list[Problem] = []
    for item in items:
        why = problem_error(item)
        if why is not None:
            raise PluginFailure(f"it yielded {why}")
        out.append(item)
        if len(out) > MAX_PROBLEMS:
            raise PluginFailure(f"it yielded more than {MAX_PROBLEMS:,} problems")
    return out


def problem_error(item: Any) -> str | None:
    """Why ``item`` is not a Problem kvlint can report, or None. Plain type tests, no
    generators: every built-in finding passes through here too."""
    if not isinstance(item, Problem):
        return f"a {type(item).__name__}, not a kvlint.finding.Problem"
    span, message, fix, numbers, severity = item
    if not _valid_span(span):
        return f"a Problem whose span is not a kvlint.finding.Span of a file: {span!r:.80}"
    if type(message) is not str:  # a long one is cut where it is stamped (message_text)
        return "a Problem whose message is not text"
    if severity is not None and not isinstance(severity, Severity):
        return f"a Problem whose severity {severity!r:.40} is not a kvlint.finding.Severity"
    if type(numbers) is not tuple:
        return "a Problem whose numbers are not (label, value) pairs of text"
    for pair in numbers:
        if type(pair) is not tuple or len(pair) != 2 or type(pair[0]) is not str:
            return "a Problem whose numbers are not (label, value) pairs of text"
        if type(pair[1]) is not str:
            return "a Problem whose numbers are not (label, value) pairs of text"
    if fix is not None and not _valid_fix(fix):
        return "a Problem whose fix is not a kvlint.finding.Fix of Edits"
    return None


def _valid_span(span: Any) -> bool:
    if not isinstance(span, Span) or type(span.path) is not str:
        return False
    line, column, end_column, end_line = span.line, span.column, span.end_column, span.end_line
    if type(line) is not int or type(column) is not int or line < 1 or column < 1:
        return False
    return (end_column is None or type(end_column) is int) and (
        end_line is None or type(end_line) is int
    )


def _valid_fix(fix: Any) -> bool:
    if not isinstance(fix, Fix) or type(fix.title) is not str or type(fix.edits) is not tuple:
        return False
    if not isinstance(fix.applicability, Applicability):
        return False
    for edit in fix.edits:
        if not isinstance(edit, Edit) or type(edit.replacement) is not str:
            return False
        if not _valid_span(edit.span):
            return False
    return True


# The sections every rule doc must have, in this order (ruff's template); "Use instead:" is a
# paragraph inside "Example", as in ruff's docs.
REQUIRED = ("What it does", "Why is this bad?", "Example")
OPTIONAL = ("Fix safety", "Options", "References")

_HEADING = lazy(r"^## +(.+?)\s*$", re.MULTILINE)
_YAML_BLOCK = lazy(r"```ya?ml\n(.*?)```", re.DOTALL)


class RuleDoc(NamedTuple):
    """A rule docstring split into its sections."""

    text: str
    sections: dict[str, str]  # heading -> body (stripped)
    example: str | None  # the first ```yaml block of "Example": triggers the rule
    use_instead: str | None  # the ```yaml block after "Use instead:": does not

    @property
    def summary(self) -> str:
        """The first sentence of "What it does", one line."""
        body = " ".join(self.sections.get("What it does", "").split())
        return body.partition(". ")[0].rstrip(".")

    def problems(self) -> list[str]:
        """What is wrong with the doc (empty when it is complete)."""
        found = [s for s in self.sections if s in REQUIRED]
        missing = [f"section `## {s}` is missing" for s in REQUIRED if s not in self.sections]
        out = list(missing)
        if not missing and found != list(REQUIRED):
            out.append("sections are out of order (What it does, Why is this bad?, Example)")
        unknown = [s for s in self.sections if s not in REQUIRED and s not in OPTIONAL]
        out.extend(f"unknown section `## {s}`" for s in unknown)
        if "Example" in self.sections:
            if self.example is None:
                out.append("`## Example` has no ```yaml block")
            if self.use_instead is None:
                out.append("`## Example` has no `Use instead:` followed by a ```yaml block")
        return out


def parse_doc(text: str) -> RuleDoc:
    """Split a rule docstring (already dedented) into its ``## `` sections and yaml examples."""
    sections: dict[str, str] = {}
    matches = list(_HEADING.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        sections[match.group(1)] = text[match.end() : end].strip()
    example = use_instead = None
    body = sections.get("Example")
    if body is not None:
        before, marker, after = body.partition("Use instead:")
        first = _YAML_BLOCK.search(before)
        example = first.group(1) if first else None
        if marker:
            second = _YAML_BLOCK.search(after)
            use_instead = second.group(1) if second else None
    return RuleDoc(text, sections, example, use_instead)
