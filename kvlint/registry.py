"""The rule registry: every `kvlint.rules` entry point loaded and validated, failures isolated."""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple

from kvlint import DISTRIBUTION
from kvlint.lazy_re import lazy

if TYPE_CHECKING:
    from kvlint.rule import Rule

GROUP = "kvlint.rules"
# The distribution allowed to use the reserved `KV` prefix, normalised (PEP 503) as names are
# compared: METADATA may say `kvcache-lint`, a folder `kvcache_lint`.
BUILTIN_PACKAGE = DISTRIBUTION
CODE_RE = lazy(r"^[A-Z]{2,4}[0-9]{3}$")  # flake8 checks plugin codes the same way
NAME_RE = lazy(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class PluginError:
    """A rule plugin that could not be loaded, or a rule class the registry refused."""

    package: str  # the distribution that declared the entry point ("kvlint-plugin-example")
    entry_point: str  # "acme = kvlint_plugin_example"
    message: str

    def __str__(self) -> str:
        return f"plugin {self.package!r} ({self.entry_point}): {self.message}"


class Source(NamedTuple):
    """One entry point: where its rules come from, and how to get them."""

    package: str
    entry_point: str
    load: Callable[[], Any]  # returns the module (or callable) exposing get_rules()


class Registry:
    """The accepted rules by code (in code order), with the package each came from.

    ``Registry.deferred(load)`` is one whose plugins are imported when it is first asked for a
    rule: a run that finds no document running an engine (a commit touching only a Service)
    never imports the rules (issue 20: 86 ms of a 0.1 s run went to loading them up front).
    """

    def __init__(
        self,
        rules: dict[str, type[Rule]],
        packages: dict[str, str],  # code -> distribution name
        errors: tuple[PluginError, ...] = (),
    ) -> None:
        self._contents: tuple[dict[str, type[Rule]], dict[str, str], tuple[PluginError, ...]]
        self._contents = (rules, packages, errors)
        self._load: Callable[[], Registry] | None = None

    @classmethod
    def deferred(cls, load: Callable[[], Registry]) -> Registry:
        """A registry that calls ``load`` the first time its rules are needed."""
        registry = cls({}, {})
        registry._load = load
        return registry

    def _loaded(
        self,
    ) -> tuple[dict[str, type[Rule]], dict[str, str], tuple[PluginError, ...]]:
        if self._load is not None:
            load, self._load = self._load, None
            self._contents = load()._contents
        return self._contents

    @property
    def rules(self) -> dict[str, type[Rule]]:
        return self._loaded()[0]

    @property
    def packages(self) -> dict[str, str]:
        return self._loaded()[1]

    @property
    def errors(self) -> tuple[PluginError, ...]:
        return self._loaded()[2]

    @property
    def is_loaded(self) -> bool:
        return self._load is None

    def loaded_errors(self) -> tuple[PluginError, ...]:
        """The plugins' load errors, if they were loaded: a run that needed no rule reports
        none (it imported none)."""
        return self._contents[2] if self._load is None else ()

    def __iter__(self) -> Iterator[type[Rule]]:
        return iter(self.rules.values())

    def __len__(self) -> int:
        return len(self.rules)

    @functools.cached_property
    def by_name(self) -> dict[str, type[Rule]]:
        return {rule.name: rule for rule in self.rules.values()}

    def get(self, code_or_name: str) -> type[Rule] | None:
        """The rule with this code (any case) or name, or None."""
        text = code_or_name.strip()
        return self.rules.get(text.upper()) or self.by_name.get(text.lower())

    def codes(self) -> list[str]:
        return list(self.rules)


def entry_point_sources() -> list[Source]:
    """Every installed ``kvlint.rules`` entry point, sorted so the built-ins come first."""
    from kvlint.entry_points import entry_points

    found = entry_points(GROUP)
    if found is not None:
        sources = [Source(ep.package, f"{ep.name} = {ep.value}", ep.load) for ep in found]
    else:
        sources = _metadata_sources()
    if not any(is_builtin(s.package) for s in sources):
        # Running from a checkout that was never installed: the built-ins are still importable.
        sources.append(Source(BUILTIN_PACKAGE, "kvlint = kvlint_rules", _import_builtin))
    return sorted(sources, key=lambda s: (not is_builtin(s.package), s.package, s.entry_point))


def is_builtin(package: str) -> bool:
    """Whether ``package`` names kvlint's own distribution, however it is spelled."""
    return re.sub(r"[-_.]+", "-", package).lower() == BUILTIN_PACKAGE


def _metadata_sources() -> list[Source]:
    """The group as importlib.metadata finds it in the site directories (never the working
    directory: see kvlint.entry_points), the first distribution of a name winning."""
    import importlib.metadata

    from kvlint.entry_points import site_directories

    sources = []
    seen: set[str] = set()
    for dist in importlib.metadata.distributions(path=site_directories()):
        name = dist.metadata["Name"] or ""
        key = re.sub(r"[-_.]+", "_", name).lower()  # PEP 503
        if key in seen:
            continue
        seen.add(key)
        for ep in dist.entry_points.select(group=GROUP):
            sources.append(Source(name, f"{ep.name} = {ep.value}", ep.load))
    return sources


def _import_builtin() -> Any:
    return importlib.import_module("kvlint_rules")


@functools.lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The registry of the installed plugins, loaded once per process when first asked for a
    rule (``Registry.deferred``)."""
    return Registry.deferred(lambda: build_registry(entry_point_sources()))


def build_registry(sources: Iterable[Source]) -> Registry:
    """Load each source in turn; a source that fails is recorded and the others still load."""
    from kvlint.isolation import PluginFailure
    from kvlint.isolation import call

    rules: dict[str, type[Rule]] = {}
    packages: dict[str, str] = {}
    names: dict[str, str] = {}  # name -> code
    errors: list[PluginError] = []
    for source in sources:
        # Plugin code (its import, get_rules(), the class attributes and doc() read below) runs
        # isolated: whatever it raises or prints, and an import that never ends, is this
        # plugin's error and the others still load (flake8 isolates plugins the same way).
        label = f"plugin {source.package!r}"
        try:
            classes = call(functools.partial(_rules_of, source), label=label)
        except PluginFailure as failure:
            errors.append(PluginError(source.package, source.entry_point, failure.reason))
            continue
        for cls in classes:
            builtin = is_builtin(source.package)
            try:
                problem = call(functools.partial(validate_rule, cls, builtin=builtin), label=label)
            except PluginFailure as failure:
                problem = failure.reason
            if problem is None and cls.code in rules:
                problem = f"code {cls.code} is already used by {packages[cls.code]!r}"
            if problem is None and cls.name in names:
                problem = f"name {cls.name!r} is already used by {names[cls.name]}"
            if problem is not None:
                errors.append(
                    PluginError(source.package, source.entry_point, f"{_name(cls)}: {problem}")
                )
                continue
            rules[cls.code] = cls
            packages[cls.code] = source.package
            names[cls.name] = cls.code
    ordered = dict(sorted(rules.items()))
    return Registry(ordered, packages, tuple(errors))


def _rules_of(source: Source) -> list[type[Rule]]:
    target = source.load()
    get_rules = getattr(target, "get_rules", target)
    if not callable(get_rules):
        raise TypeError("the entry point exposes no get_rules()")
    result = get_rules()
    if not isinstance(result, (list, tuple)):
        raise TypeError(f"get_rules() returned {type(result).__name__}, not a list of Rule classes")
    return list(result)


def _name(cls: object) -> str:
    """The class's name for an error line (a plugin's class may not even have one)."""
    name = getattr(cls, "__qualname__", None) if isinstance(cls, type) else None
    return name if isinstance(name, str) else f"a {type(cls).__name__}"


def validate_rule(cls: object, *, builtin: bool) -> str | None:
    """Why ``cls`` cannot be registered, or None when it is a well-formed rule."""
    from dataclasses import is_dataclass

    from kvlint.finding import Severity
    from kvlint.options import is_pydantic_model
    from kvlint.rule import FixAvailability
    from kvlint.rule import Rule

    if not (isinstance(cls, type) and issubclass(cls, Rule)):
        return "not a subclass of kvlint.rule.Rule"
    code = getattr(cls, "code", None)
    if not isinstance(code, str) or not CODE_RE.match(code):
        return f"code {code!r} does not match {CODE_RE.pattern}"
    if code.startswith("KV") and not builtin:
        return f"code {code}: the `KV` prefix is reserved for kvlint's built-in rules"
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not NAME_RE.match(name):
        return f"name {name!r} is not kebab-case"
    if not isinstance(getattr(cls, "severity", None), Severity):
        return "severity is not a kvlint.finding.Severity"
    engines = cls.engines
    if not isinstance(engines, frozenset) or not all(isinstance(e, str) for e in engines):
        return "engines is not a frozenset of engine names"
    if not isinstance(cls.fix_availability, FixAvailability):
        return "fix_availability is not a FixAvailability"
    options = cls.Options
    if not (isinstance(options, type) and (is_dataclass(options) or is_pydantic_model(options))):
        return "Options is not a dataclass or a pydantic model"
    try:
        options()
    except Exception:  # TypeError from a dataclass, ValidationError from a pydantic model
        return "Options has required fields (every option needs a default)"
    if builtin:
        # Built-in docs are checked by the test suite (tests/rules/docs_test.py); parsing all
        # of them at every start-up cost a check of one file inspect and 24 docstrings.
        return None
    doc_problems = cls.doc().problems()
    if doc_problems:
        return "doc: " + "; ".join(doc_problems)
    return None
