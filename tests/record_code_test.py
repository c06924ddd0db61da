"""kvlint's records get the methods dataclasses would compile for them, compiled ahead of
time (kvlint/record_code.py): each function of the generated file is what its text compiles
to, the records of a check get their methods from it, and they behave as exec's."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest

from kvlint import _record_code
from kvlint.deployment import Sourced
from kvlint.finding import Span
from testing.shared import REPO

same_release = pytest.mark.skipif(
    sys.version_info[:2] != tuple(_record_code.PYTHON),
    reason=f"kvlint/_record_code.py was generated on Python {_record_code.PYTHON}",
)


def _same_code(made: Any, expected: Any) -> bool:
    """The same bytecode, names and constants (nested functions too); the function's own name,
    file and line numbers aside."""
    if made.co_code != expected.co_code or made.co_names != expected.co_names:
        return False
    if made.co_varnames != expected.co_varnames or made.co_freevars != expected.co_freevars:
        return False
    if len(made.co_consts) != len(expected.co_consts):
        return False
    for a, b in zip(made.co_consts, expected.co_consts, strict=True):
        if hasattr(a, "co_code") != hasattr(b, "co_code"):
            return False
        if hasattr(a, "co_code") and not _same_code(a, b):
            return False
        if not hasattr(a, "co_code") and a != b:
            return False
    return True


@same_release
def test_each_precompiled_function_is_what_its_text_compiles_to() -> None:
    # dont_inherit: this module's `from __future__ import annotations` would compile the
    # texts' annotations otherwise than dataclasses' exec does.
    for text, factory in _record_code.FACTORIES.items():
        expected = next(
            c
            for c in compile(text, "<string>", "exec", dont_inherit=True).co_consts
            if hasattr(c, "co_code")
        )
        assert _same_code(factory.__code__, expected), text
    for text, made in _record_code.NAMEDTUPLES.items():
        assert _same_code(
            made.__code__, compile(text, "<string>", "eval", dont_inherit=True).co_consts[0]
        ), text


@same_release
def test_every_record_of_a_check_is_defined_without_exec() -> None:
    # A fresh interpreter: each dataclass kvlint defines on the way through a check.
    probe = """
import dataclasses, sys
made = []
original = dataclasses._process_class
def spy(cls, *args, **kwargs):
    made.append(cls)
    return original(cls, *args, **kwargs)
dataclasses._process_class = spy
from kvlint.main import main
main(["check", "--format", "concise", "--offline", "examples/deploy.yaml"])
for cls in made:
    for name in ("__init__", "__repr__", "__eq__"):
        method = cls.__dict__.get(name)
        method = getattr(method, "__wrapped__", method)  # __repr__ guards recursion
        code = getattr(method, "__code__", None)
        if code is not None and not code.co_filename.endswith("_record_code.py"):
            print("compiled at start-up:", cls.__module__, cls.__qualname__, name)
print("records", len(made))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    lines = done.stdout.splitlines()
    assert lines and lines[-1].startswith("records"), done.stdout + done.stderr
    records = int(lines[-1].split()[1])
    stale = [line for line in lines if line.startswith("compiled")]
    stale_records = {tuple(line.split()[3:5]) for line in stale}  # (module, class)
    assert records >= 30
    # A record changed since the file was generated is compiled at start-up, as before: only
    # slower, never different. Branches that change records land side by side, so up to half
    # are tolerated here; `python scripts/gen_record_code.py --check` says whether the file is
    # current, and the generator brings it up to date.
    assert len(stale_records) <= records // 2, "\n".join(stale)


@same_release
def test_named_tuples_get_their_new_precompiled() -> None:
    from kvlint.finding import Span
    from kvlint.linter import CodeCount

    for cls in (Span, CodeCount):
        assert cls.__new__.__code__.co_filename.endswith("_record_code.py")
    assert Span("a.yaml", 1, 2) == ("a.yaml", 1, 2, "", None, None)  # its defaults kept
    assert Span("a.yaml", 1, 2)._replace(line=3).line == 3


def test_a_named_tuple_kvlint_does_not_know_is_made_as_before() -> None:
    import collections

    Pair = collections.namedtuple("Pair", ["left_side", "right_side"])
    assert Pair(1, 2).right_side == 2
    assert Pair.__new__.__code__.co_filename == "<string>"


def test_a_precompiled_record_behaves_as_a_dataclass() -> None:
    span = Span("a.yaml", 3, 5)
    value = Sourced(64, span)
    assert value == Sourced(64, Span("a.yaml", 3, 5))
    assert hash(value) == hash(Sourced(64, Span("a.yaml", 3, 5)))
    assert value != Sourced(65, span)
    assert repr(value).startswith("Sourced(value=64, span=")
    assert dataclasses.replace(value, value=8).value == 8
    assert [f.name for f in dataclasses.fields(Sourced)][:2] == ["value", "span"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.value = 1  # type: ignore[misc]


def test_a_dataclass_kvlint_does_not_know_is_compiled_as_before() -> None:
    @dataclasses.dataclass(frozen=True)
    class Other:
        count: int = 0
        names: list[str] = dataclasses.field(default_factory=list)

    first = Other(2)
    assert first == Other(2) and first.names == [] and Other().count == 0
    assert Other.__init__.__code__.co_filename == "<string>"


@same_release
def test_forward_references_of_one_text_share_its_code_and_a_bad_one_still_fails() -> None:
    import typing

    import kvlint  # noqa: F401  (installs the hooks)

    first, second = (
        typing.ForwardRef("tuple[int, ...] | None"),
        typing.ForwardRef("tuple[int, ...] | None"),
    )
    assert first.__forward_code__ is second.__forward_code__
    assert eval(first.__forward_code__) == (tuple[int, ...] | None)
    with pytest.raises(SyntaxError):
        typing.ForwardRef("int |")
