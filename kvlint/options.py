"""Validating option mappings (the config file, a rule's options) with pydantic, lazily.

Options are declared as frozen dataclasses: their defaults cost nothing to build, so a run whose
config sets nothing, or only plain values, never imports pydantic (about 65 ms of a 250 ms
one-file run on the project's machine, issue 9). pydantic stays the validator: a dataclass is
turned into a pydantic model (``field(metadata=...)`` holds the ``Field`` arguments: bounds,
description) the first time a value needs more than an exact type match, and every error comes
from that model. A plugin's ``Options`` may also be a pydantic model, validated as it is.

The fast path accepts a mapping only when every key names a field and every value already has
exactly the field's type (``str``, ``list[str]``, a ``Literal`` member, ...) and the field has
no constraint: pydantic would return the same values for it. Anything else (a coercion, a
bound, an unknown key, a wrong type) goes to pydantic. ``tests/options_test.py`` checks the
agreement on generated inputs.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import NamedTuple


class OptionsError(Exception):
    """The first error pydantic found: where (field names and indexes), what kind, and why;
    ``errors`` holds every error it found, the first included, as (loc, kind, message)."""

    def __init__(
        self,
        loc: tuple[str | int, ...],
        kind: str,
        message: str,
        errors: tuple[tuple[tuple[str | int, ...], str, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.loc = loc
        self.kind = kind  # pydantic's error type: "extra_forbidden", "literal_error", ...
        self.message = message
        self.errors = errors or ((loc, kind, message),)


class _Field(NamedTuple):
    name: str
    annotation: Any
    constrained: bool  # metadata beyond a description: only pydantic checks it


def is_pydantic_model(cls: object) -> bool:
    """Whether ``cls`` is a pydantic model class, without importing pydantic to find out."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(cls, type) and issubclass(cls, pydantic.BaseModel)


def validate(
    cls: type[Any], data: Mapping[str, Any], *, alias: Callable[[str], str] | None = None
) -> Any:
    """An instance of ``cls`` (a dataclass or a pydantic model) from ``data``; OptionsError when
    the data is wrong. ``alias`` maps a field name to the key a file writes (kebab-case); both
    spellings are accepted, as pydantic's ``populate_by_name``."""
    if is_pydantic_model(cls):
        return _with_pydantic(cls, data)
    fast = _exact(cls, data, alias)
    if fast is not None:
        return fast
    model = pydantic_model(cls, alias)
    validated = _with_pydantic(model, data)
    return cls(**{f.name: getattr(validated, f.name) for f in dataclasses.fields(cls)})


def _with_pydantic(model: type[Any], data: Mapping[str, Any]) -> Any:
    import pydantic

    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        found = tuple((tuple(e["loc"]), e["type"], e["msg"]) for e in exc.errors())
        raise OptionsError(*found[0], errors=found) from None


def pydantic_model(cls: type[Any], alias: Callable[[str], str] | None = None) -> type[Any]:
    """The pydantic model that validates dataclass ``cls``: same fields, defaults and docstring;
    ``field(metadata=...)`` gives each ``Field``'s arguments; unknown keys are errors."""
    model = _MODELS.get((cls, alias))
    if model is None:
        model = _MODELS[cls, alias] = _build_model(cls, alias)
    return model


_MODELS: dict[tuple[type[Any], Callable[[str], str] | None], type[Any]] = {}
_FIELDS: dict[type[Any], tuple[_Field, ...]] = {}


def _build_model(cls: type[Any], alias: Callable[[str], str] | None) -> type[Any]:
    import pydantic

    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            spec = pydantic.Field(f.default, **f.metadata)
        elif f.default_factory is not dataclasses.MISSING:
            # The value itself (pydantic copies a mutable default), so the schema shows it.
            spec = pydantic.Field(f.default_factory(), **f.metadata)
        else:
            spec = pydantic.Field(**f.metadata)
        fields[f.name] = (hints[f.name], spec)
    config = pydantic.ConfigDict(extra="forbid", frozen=True)
    if alias is not None:
        config["alias_generator"] = alias
        config["populate_by_name"] = True
    model: type[Any] = pydantic.create_model(
        cls.__name__, __config__=config, __doc__=cls.__doc__, __module__=cls.__module__, **fields
    )
    return model


def _fields(cls: type[Any]) -> tuple[_Field, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = _FIELDS[cls] = tuple(
            _Field(f.name, hints[f.name], any(key != "description" for key in f.metadata))
            for f in dataclasses.fields(cls)
        )
    return found


def _exact(cls: type[Any], data: Mapping[str, Any], alias: Callable[[str], str] | None) -> Any:
    """``cls(**data)`` when pydantic would give exactly that, else None."""
    by_key: dict[str, _Field] = {}
    for field in _fields(cls):
        by_key[field.name] = field
        if alias is not None:
            by_key[alias(field.name)] = field
    values: dict[str, Any] = {}
    for key, value in data.items():
        known = by_key.get(key) if isinstance(key, str) else None
        if known is None or known.constrained or known.name in values:
            return None
        if not _has_type(value, known.annotation):
            return None
        values[known.name] = value
    try:
        return cls(**values)
    except TypeError:  # a field without a default left out: pydantic words the error
        return None


def _has_type(value: Any, annotation: Any) -> bool:
    """Whether ``value`` is already of ``annotation``'s type, so validating it changes nothing."""
    if annotation is Any:
        return True
    if annotation is None or annotation is type(None):
        return value is None
    if annotation in (str, int, float, bool):
        return type(value) is annotation  # exact: pydantic turns an int into a float, and so on
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return any(type(value) is type(arg) and value == arg for arg in args)
    if origin is typing.Union or origin is types.UnionType:
        return any(_has_type(value, arg) for arg in args)
    if origin is list and len(args) == 1:
        return type(value) is list and all(_has_type(item, args[0]) for item in value)
    if origin is dict and len(args) == 2:
        return type(value) is dict and all(
            _has_type(k, args[0]) and _has_type(v, args[1]) for k, v in value.items()
        )
    return False  # anything else: pydantic decides
