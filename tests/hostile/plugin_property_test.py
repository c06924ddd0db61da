"""Generated plugins through the real pipeline (issue 15, item 9): a third-party rule package
whose import, ``get_rules()`` or rules do anything (raise any exception, ``SystemExit``,
``GeneratorExit`` and ``KeyboardInterrupt`` included; return or yield what is not a Problem;
yield Problems with any span, message, numbers and fix, spans and edits pointing at other files,
past the end of the file or at absurd lines; print) never breaks a run: each failing rule is
one KV909 naming it and its package and none of its findings, a package that fails to load is
one plugin warning, the built-in findings survive, every report format stays well formed and
free of control characters, nothing reaches stdout but the report, and ``--fix`` writes no file
but the one it was given. In process, with the generated package registered beside the
built-ins exactly as an entry point is (``kvlint.registry.build_registry``)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import kvlint.registry
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Fix
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.main import main
from kvlint.registry import Registry
from kvlint.registry import Source
from kvlint.registry import build_registry
from kvlint.registry import entry_point_sources
from kvlint.rule import Rule
from kvlint.rule import problem_error

PACKAGE = "kvlint-plugin-generated"
FILE = "deploy.yaml"
# max-num-seqs 0 is a built-in KV502 whatever the plugin does: the finding that must survive.
DEPLOY = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 4096\nmax-num-seqs: 0\n"
BUILTIN_LINE = f"{FILE}:3:15: KV502 [error] `max-num-seqs` must be a positive integer, got `0`"
NOISE = "noise-from-the-plugin"
# Beside the checked file: one in the tree kvlint was not given, one outside the tree.
OTHER, OUTSIDE = "other.yaml", "../outside.yaml"
FORMATS = ("concise", "full", "json", "github", "sarif", "gitlab", "junit")
# What no report may carry raw: C0 controls but the newline and TAB, DEL, C1.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

DOC = """## What it does
Checks something.

## Why is this bad?
It is.

## Example
```yaml
model: meta-llama/Llama-3.1-8B-Instruct
```

Use instead:
```yaml
model: meta-llama/Llama-3.1-8B-Instruct
```
"""

EXCEPTIONS: list[Callable[[], BaseException]] = [
    lambda: SystemExit(0),
    lambda: SystemExit(1),
    lambda: SystemExit("bye"),
    lambda: GeneratorExit(),
    lambda: KeyboardInterrupt(),
    lambda: ZeroDivisionError("division by zero"),
    lambda: RecursionError("maximum recursion depth exceeded"),
    lambda: StopIteration(),
    lambda: MemoryError(),
    lambda: BaseException("\x1b[2J\n::error::a message of control characters"),
]
TEXT = st.text(max_size=60)
# A span anywhere: the checked file, another file in the tree or outside it, an absolute path,
# a name holding a newline; any line and column (a valid Problem needs both at least 1).
PATHS = st.sampled_from([FILE, OTHER, OUTSIDE, "/etc/passwd", "x\n::error::y.yaml", ""])
POSITIONS = st.integers(min_value=1, max_value=10**12)
SPANS = st.builds(
    Span,
    path=PATHS,
    line=st.one_of(st.integers(1, 5), POSITIONS),
    column=st.one_of(st.integers(1, 20), POSITIONS),
    key=TEXT,
    end_column=st.one_of(st.none(), st.integers(-5, 30), POSITIONS),
    end_line=st.one_of(st.none(), st.integers(-5, 6), POSITIONS),
)
FIXES = st.builds(
    Fix,
    title=TEXT,
    edits=st.lists(st.builds(Edit, span=SPANS, replacement=TEXT), max_size=3).map(tuple),
    applicability=st.sampled_from(Applicability),
)
VALID = st.builds(
    Problem,
    span=SPANS,
    message=st.one_of(TEXT, st.just("x" * 3_000)),  # past MAX_MESSAGE: cut in its middle
    fix=st.one_of(st.none(), FIXES),
    numbers=st.lists(st.tuples(TEXT, TEXT), max_size=2).map(tuple),
    severity=st.one_of(st.none(), st.sampled_from(Severity)),
)
JUNK = st.one_of(
    st.sampled_from(["a string", 1, None, b"bytes", ("a", "tuple")]),
    st.builds(object),
    st.builds(Problem, span=st.just(None), message=TEXT),  # type: ignore[arg-type]
    st.builds(Problem, span=SPANS, message=st.just(b"bytes")),  # type: ignore[arg-type]
    st.builds(Problem, span=SPANS, message=TEXT, severity=st.just("high")),  # type: ignore[arg-type]
    st.builds(Problem, span=SPANS, message=TEXT, numbers=st.just((("a", 1),))),  # type: ignore[arg-type]
    st.builds(Problem, span=SPANS, message=TEXT, fix=st.just("a fix")),  # type: ignore[arg-type]
    st.builds(
        Problem,
        span=st.builds(Span, path=PATHS, line=st.integers(-3, 0), column=st.integers(-3, 3)),
        message=TEXT,
    ),
)


@dataclass(frozen=True)
class Behaviour:
    """What one generated rule does when it checks the deployment."""

    items: tuple[Any, ...] = ()  # what it yields, in order
    raises: Callable[[], BaseException] | None = None  # raised after the items
    returns_junk: bool = False  # check() returns a number instead of an iterable
    prints: bool = False
    init_raises: bool = False  # the rule's constructor raises

    @property
    def fails(self) -> bool:
        junk = any(problem_error(item) is not None for item in self.items)
        return junk or self.raises is not None or self.returns_junk or self.init_raises


BEHAVIOURS = st.builds(
    Behaviour,
    items=st.lists(st.one_of(*[VALID] * 7, JUNK), max_size=4).map(tuple),
    raises=st.sampled_from([None] * 20 + EXCEPTIONS),
    returns_junk=st.sampled_from([False] * 7 + [True]),
    prints=st.booleans(),
    init_raises=st.sampled_from([False] * 7 + [True]),
)


@dataclass(frozen=True)
class Package:
    """The generated distribution: how its import and get_rules() behave, and its rules."""

    rules: tuple[Behaviour, ...]
    import_raises: Callable[[], BaseException] | None = None
    get_rules_junk: Any = None  # returned instead of the rule classes when not None
    prints_at_import: bool = False

    @property
    def loads(self) -> bool:
        return self.import_raises is None and self.get_rules_junk is None


PACKAGES = st.builds(
    Package,
    rules=st.lists(BEHAVIOURS, min_size=1, max_size=3).map(tuple),
    import_raises=st.sampled_from([None] * 30 + EXCEPTIONS),
    get_rules_junk=st.sampled_from([None] * 45 + ["HYP001", 7, {"a": 1}, (None,), [object()]]),
    prints_at_import=st.booleans(),
)


def _rule_class(code: str, behaviour: Behaviour) -> type[Rule]:
    def __init__(self: Rule, options: Any = None) -> None:
        if behaviour.init_raises:
            raise ValueError("a constructor that fails")
        Rule.__init__(self, options)

    def check(self: Rule, dep: Any, sizing: Any) -> Any:
        if behaviour.returns_junk:
            return 5
        return _yield(behaviour)

    namespace = {
        "__doc__": DOC,
        "code": code,
        "name": f"generated-{code.lower()}",
        "severity": Severity.WARNING,
        "needs_model": False,
        "__init__": __init__,
        "check": check,
    }
    return type(f"Rule{code}", (Rule,), namespace)


def _yield(behaviour: Behaviour) -> Iterator[Any]:
    if behaviour.prints:
        print(NOISE)
    yield from behaviour.items
    if behaviour.raises is not None:
        raise behaviour.raises()


def _source(package: Package) -> Source:
    classes = [_rule_class(f"HYP{i:03d}", b) for i, b in enumerate(package.rules, start=1)]

    def load() -> Any:
        if package.prints_at_import:
            print(NOISE)
        if package.import_raises is not None:
            raise package.import_raises()
        junk = package.get_rules_junk
        return SimpleNamespace(get_rules=lambda: classes if junk is None else junk)

    return Source(PACKAGE, "generated = kvlint_plugin_generated", load)


@contextlib.contextmanager
def _in_tree(registry: Registry) -> Iterator[Path]:
    """A repository holding the deployment, another file and one beside the tree, the run's
    registry that of the built-ins and the generated package."""
    import tempfile

    before = os.getcwd()
    original = kvlint.registry.default_registry
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        tree = root / "repo"
        tree.mkdir()
        (tree / ".git").mkdir()
        (tree / FILE).write_text(DEPLOY)
        (tree / OTHER).write_text(DEPLOY)
        (root / "outside.yaml").write_text(DEPLOY)
        kvlint.registry.default_registry = lambda: registry  # type: ignore[assignment]
        os.chdir(tree)
        try:
            yield tree
        finally:
            os.chdir(before)
            kvlint.registry.default_registry = original  # type: ignore[assignment]


def _assert_well_formed(fmt: str, out: str) -> None:
    assert not _CONTROL.search(out), f"{fmt}: a raw control character: {out[:400]!r}"
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(out)
    elif fmt == "junit":
        ET.fromstring(out)
    elif fmt == "github":
        assert all(line.startswith("::") for line in out.splitlines()), out[:400]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf-home")))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


BUILTINS = entry_point_sources()
ARGS = ("check", "--offline", "--no-config", "--jobs", "1")


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(package=PACKAGES)
def test_a_generated_plugin_never_breaks_the_run(
    package: Package, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = build_registry([*BUILTINS, _source(package)])
    # A package that fails to load is one plugin warning; its rules are not registered.
    errors = [e for e in registry.errors if e.package == PACKAGE]
    assert len(errors) == (0 if package.loads else 1), errors
    failing = {
        f"HYP{i:03d}" for i, b in enumerate(package.rules, start=1) if package.loads and b.fails
    }
    event(f"the package loads: {package.loads}; rules failing: {len(failing)}")
    with _in_tree(registry) as tree:
        for fmt in FORMATS:
            code = main([*ARGS, "--format", fmt, FILE])
            out, err = capsys.readouterr()
            assert "Traceback" not in out + err and "internal error" not in out + err, err
            assert NOISE not in out, f"{fmt}: a plugin's print reached the report"
            _assert_well_formed(fmt, out)
            assert code == (2 if failing else 1), (fmt, code, err)
            if fmt != "concise":
                continue
            lines = out.splitlines()
            assert BUILTIN_LINE in lines  # the built-in finding survives any plugin
            for rule in sorted(failing):  # one KV909 each, naming the rule and its package
                failures = [s for s in lines if f" KV909 [error] rule {rule} " in s]
                assert len(failures) == 1 and repr(PACKAGE) in failures[0], lines
                assert not [s for s in lines if f" {rule} [" in s], lines
        before = {p: (tree / p).read_bytes() for p in (OTHER, OUTSIDE)}
        code = main([*ARGS, "--fix", "--unsafe-fixes", FILE])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err and "internal error" not in out + err, err
        assert code in (1, 2)
        # --fix writes the file it was given, never another in the tree or outside it.
        assert {p: (tree / p).read_bytes() for p in (OTHER, OUTSIDE)} == before


class Endless(Rule):
    __doc__ = DOC
    code = "HYP900"
    name = "endless"
    severity = Severity.WARNING
    needs_model = False

    def check(self, dep: Any, sizing: Any) -> Iterator[Problem]:
        while True:  # each one a valid Problem: only the count is wrong
            yield Problem(dep.span, "again")


def test_a_rule_that_yields_without_end_is_one_kv909(capsys: pytest.CaptureFixture[str]) -> None:
    load = lambda: SimpleNamespace(get_rules=lambda: [Endless])  # noqa: E731
    registry = build_registry([*BUILTINS, Source(PACKAGE, "endless = endless", load)])
    with _in_tree(registry):
        code = main([*ARGS, "--format", "concise", FILE])
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = out.splitlines()
    assert BUILTIN_LINE in lines
    assert [s for s in lines if " HYP900 " in s or " KV909 " in s] == [
        f"{FILE}:1:1: KV909 [error] rule HYP900 `endless` of {PACKAGE!r} failed, so its findings "
        "on this deployment are missing: it yielded more than 100,000 problems"
    ]


class ControlTitle(Rule):
    __doc__ = DOC
    code = "HYP901"
    name = "control-title"
    severity = Severity.WARNING
    needs_model = False

    def check(self, dep: Any, sizing: Any) -> Iterator[Problem]:
        yield Problem(dep.span, "a finding", Fix("set \x7f\x9b[2J\x1b]0;x\x07 it"))


def test_a_fix_title_of_control_characters_reaches_no_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The title was printed as the rule wrote it: DEL and C1 raw in junit, sarif and json
    (found by the property above). It is escaped where the finding is stamped, as the
    message is."""
    load = lambda: SimpleNamespace(get_rules=lambda: [ControlTitle])  # noqa: E731
    registry = build_registry([*BUILTINS, Source(PACKAGE, "title = title", load)])
    with _in_tree(registry):
        for fmt in FORMATS:
            main([*ARGS, "--format", fmt, FILE])
            out, _ = capsys.readouterr()
            _assert_well_formed(fmt, out)
            shown = "set \\x7f\\x9b[2J\\x1b]0;x\\x07 it"
            if fmt in ("full", "junit"):
                assert shown in out, out
            elif fmt == "json":
                titles = [f["fix"]["title"] for f in json.loads(out)["findings"] if f["fix"]]
                assert titles == [shown], titles
