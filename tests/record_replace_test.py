"""kvlint.record_replace: the same copy as dataclasses.replace, made without its field walk."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass
from dataclasses import field

import pytest

import kvlint
from kvlint.estimate import EngineEstimate
from kvlint.finding import Span
from kvlint.record_replace import _plain_fields
from kvlint.record_replace import replace
from testing.builders import dense


def test_a_copy_equals_what_dataclasses_makes() -> None:
    estimate = EngineEstimate(engine="vllm", version="0.11.0", max_model_len=8192, notes=("a",))
    changes = {"fits": False, "error": "no", "max_model_len": 4096}
    ours, theirs = replace(estimate, **changes), dataclasses.replace(estimate, **changes)
    assert ours == theirs and type(ours) is EngineEstimate
    assert ours.__dict__ == theirs.__dict__
    assert estimate.fits is None and estimate.max_model_len == 8192  # the original is untouched


def test_a_cached_property_is_not_carried_to_the_copy() -> None:
    spec = dense(layers=4)
    assert spec.layer_shapes[0][1] == 4  # cached on the instance
    shorter = replace(spec, layers=spec.layers[:2])
    assert shorter.layer_shapes[0][1] == 2 and shorter.num_layers == 2
    assert shorter == dataclasses.replace(spec, layers=spec.layers[:2])


def test_a_name_that_is_not_a_field_is_refused_as_dataclasses_refuses_it() -> None:
    estimate = EngineEstimate(engine="vllm", version="0.11.0", max_model_len=8192)
    with pytest.raises(TypeError):
        dataclasses.replace(estimate, no_such_field=1)
    with pytest.raises(TypeError):
        replace(estimate, no_such_field=1)


@dataclass(frozen=True)
class _Checked:
    """A record whose __post_init__ refuses a negative count."""

    count: int

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("negative")


@dataclass
class _Derived:
    """A record with a field __init__ does not take."""

    width: int
    area: int = field(init=False, default=0)


class _Stored:
    """A data descriptor standing for a field: __init__ stores through it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = "_" + name

    def __get__(self, instance: object, owner: type | None = None) -> object:
        return getattr(instance, self.name, 0) if instance is not None else 0

    def __set__(self, instance: object, value: int) -> None:
        object.__setattr__(instance, self.name, value * 2)


@dataclass
class _Described:
    """A record whose field is a descriptor."""

    size: _Stored = _Stored()


@dataclass
class _OwnInit:
    """A record whose __init__ is written by hand."""

    size: int

    def __init__(self, size: int) -> None:
        self.size = size + 1


def test_records_dataclasses_must_build_go_to_dataclasses() -> None:
    with pytest.raises(ValueError, match="negative"):
        replace(_Checked(1), count=-1)  # __post_init__ still runs
    assert replace(_Checked(1), count=2) == _Checked(2)
    assert _plain_fields(_Checked) is None
    assert _plain_fields(_Derived) is None and replace(_Derived(3), width=4).width == 4
    assert _plain_fields(_Described) is None
    expected = dataclasses.replace(_Described(1), size=3).size
    assert replace(_Described(size=1), size=3).size == expected
    assert _plain_fields(_OwnInit) is None
    assert replace(_OwnInit(1), size=5).size == 6  # the hand-written __init__ ran


def _kvlint_dataclasses() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(kvlint.__path__, "kvlint."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


def test_every_record_taken_the_short_way_is_stored_field_for_field() -> None:
    """For each kvlint dataclass the short way accepts, its fields are exactly the parameters
    of the __init__ dataclasses wrote, in order; most records qualify."""
    records = _kvlint_dataclasses()
    short = [cls for cls in records if _plain_fields(cls) is not None]
    assert len(short) > len(records) // 2
    for cls in short:
        names = tuple(f.name for f in dataclasses.fields(cls))
        assert _plain_fields(cls) == names
        code = cls.__init__.__code__  # type: ignore[misc]
        assert code.co_varnames[: code.co_argcount] == ("self", *names)


def test_a_span_field_is_copied_as_it_is() -> None:
    from kvlint.deployment import Sourced

    sourced = Sourced(1, Span("f.yaml", 1, 1))
    moved = replace(sourced, value=2)
    assert moved.span is sourced.span and moved == dataclasses.replace(sourced, value=2)
