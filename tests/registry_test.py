"""Tests for kvlint.registry: loading entry points, refusing bad rules, isolating failures."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.registry import Registry
from kvlint.registry import Source
from kvlint.registry import build_registry
from kvlint.registry import default_registry
from kvlint.registry import validate_rule
from kvlint.rule import Rule
from kvlint.sizing import Sizing

DOC = """## What it does
Checks a thing.

## Why is this bad?
Because.

## Example
```yaml
a: 1
```
Use instead:
```yaml
a: 2
```
"""


def make_rule(code: str, name: str, doc: str = DOC) -> type[Rule]:
    def check(self: Rule, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        return iter(())

    attrs: dict[str, Any] = {
        "__doc__": doc,
        "code": code,
        "name": name,
        "severity": Severity.WARNING,
        "check": check,
    }
    return type(f"Rule{code}", (Rule,), attrs)


def source(package: str, *rules: type[Rule]) -> Source:
    module = SimpleNamespace(get_rules=lambda: list(rules))
    return Source(package, f"{package} = {package.replace('-', '_')}", lambda: module)


def broken(package: str) -> Source:
    def load() -> Any:
        raise ImportError("No module named 'acme_missing'")

    return Source(package, f"{package} = acme_missing", load)


def test_builtins_load_without_errors() -> None:
    registry = default_registry()
    assert registry.errors == ()
    assert {"KV501", "KV901", "KV902", "KV906", "KV907"} <= set(registry.rules)
    assert registry.codes() == sorted(registry.codes())
    assert all(registry.packages[code] == "kvcache-lint" for code in registry.rules)


def test_lookup_by_code_or_name() -> None:
    registry = default_registry()
    assert registry.get("kv906") is registry.get("unused-suppression") is registry.rules["KV906"]
    assert registry.get("nope") is None


def test_failing_plugin_is_isolated_and_named() -> None:
    good = make_rule("ACME001", "acme-mistake")
    registry = build_registry([broken("kvlint-plugin-broken"), source("acme-rules", good)])
    assert list(registry.rules) == ["ACME001"]
    assert [str(e) for e in registry.errors] == [
        "plugin 'kvlint-plugin-broken' (kvlint-plugin-broken = acme_missing): "
        "ImportError: No module named 'acme_missing'"
    ]


def test_kv_prefix_is_reserved_for_builtins() -> None:
    clash = make_rule("KV301", "acme-mistake")
    registry = build_registry([source("acme-rules", clash)])
    assert len(registry) == 0
    assert registry.errors[0].message == (
        "RuleKV301: code KV301: the `KV` prefix is reserved for kvlint's built-in rules"
    )


def test_duplicate_code_and_name_refused() -> None:
    first = make_rule("ACME001", "acme-mistake")
    same_code = make_rule("ACME001", "other-mistake")
    same_name = make_rule("ACME002", "acme-mistake")
    registry: Registry = build_registry(
        [source("acme-rules", first), source("beta-rules", same_code, same_name)]
    )
    assert list(registry.rules) == ["ACME001"]
    assert [e.message for e in registry.errors] == [
        "RuleACME001: code ACME001 is already used by 'acme-rules'",
        "RuleACME002: name 'acme-mistake' is already used by ACME001",
    ]


def test_malformed_rules_refused() -> None:
    assert validate_rule(make_rule("acme1", "x"), builtin=False) == (
        "code 'acme1' does not match ^[A-Z]{2,4}[0-9]{3}$"
    )
    assert validate_rule(make_rule("ACME001", "Bad_Name"), builtin=False) == (
        "name 'Bad_Name' is not kebab-case"
    )
    assert validate_rule(make_rule("ACME001", "no-doc", doc="Nothing."), builtin=False) == (
        "doc: section `## What it does` is missing; section `## Why is this bad?` is missing; "
        "section `## Example` is missing"
    )
    assert validate_rule(object, builtin=False) == "not a subclass of kvlint.rule.Rule"


def test_get_rules_must_return_a_list() -> None:
    bad = Source("acme-rules", "acme = acme", lambda: SimpleNamespace(get_rules=lambda: "KV1"))
    registry = build_registry([bad])
    assert registry.errors[0].message == (
        "TypeError: get_rules() returned str, not a list of Rule classes"
    )


def test_the_builtin_distribution_is_known_by_its_normalised_name() -> None:
    from kvlint.registry import is_builtin

    assert is_builtin("kvcache-lint") and is_builtin("kvcache_lint") and is_builtin("KVCache.Lint")
    # The package index's `kvlint` is another project: it may not use the reserved prefix.
    assert not is_builtin("kvlint")
