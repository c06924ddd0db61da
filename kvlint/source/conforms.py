"""Whether a document conforms to one of kvlint's schemas, decided without jsonschema.

jsonschema (with attrs, referencing and rpds) is about 25 ms of import, more than checking a
valid plan file takes altogether (issue 20: a plan was 2.3x yamllint). This check knows the
keywords kvlint's own schemas use and decides them as Draft 2020-12 does; a keyword, reference
or value it does not know leaves the answer to jsonschema (``None``). Only a "yes" is trusted:
an invalid document is validated again by jsonschema, which words each error
(kvlint.source.schema). tests/source/conforms_test.py holds the two to the same answers on the
project's schemas.
"""

from __future__ import annotations

import re
from typing import Any

# Keywords decided here; annotations (title, description, $schema, $id) assert nothing.
_KNOWN = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "$ref",
        "title",
        "description",
        "type",
        "const",
        "enum",
        "required",
        "properties",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "minLength",
        "minimum",
        "exclusiveMinimum",
        "pattern",
        "anyOf",
    }
)
_LOCAL_REF = "#/$defs/"


class _Undecided(Exception):
    """Something this check does not decide: jsonschema answers."""


def conforms(instance: Any, schema: dict[str, Any]) -> bool | None:
    """True when ``instance`` is valid under ``schema``, False when not, None when this check
    cannot tell (a keyword or value it does not know)."""
    try:
        return _valid(instance, schema, schema)
    except _Undecided:
        return None


def _valid(x: Any, schema: Any, root: dict[str, Any]) -> bool:
    if schema is True:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict) or not schema.keys() <= _KNOWN:
        raise _Undecided
    if "$ref" in schema and not _valid(x, _target(schema["$ref"], root), root):
        return False
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(x, name) for name in names):
            return False
    if "const" in schema and not _equal(x, schema["const"]):
        return False
    if "enum" in schema and not any(_equal(x, value) for value in schema["enum"]):
        return False
    if isinstance(x, str):
        if len(x) < schema.get("minLength", 0):
            return False
        if "pattern" in schema and not re.search(schema["pattern"], x):
            return False
    if _is(x, "number"):
        if "minimum" in schema and x < schema["minimum"]:
            return False
        if "exclusiveMinimum" in schema and x <= schema["exclusiveMinimum"]:
            return False
    if isinstance(x, dict) and not _valid_object(x, schema, root):
        return False
    return "anyOf" not in schema or any(_valid(x, sub, root) for sub in schema["anyOf"])


def _valid_object(x: dict[Any, Any], schema: dict[str, Any], root: dict[str, Any]) -> bool:
    if not all(isinstance(key, str) for key in x):
        raise _Undecided  # JSON has none; jsonschema says what it makes of them
    if any(key not in x for key in schema.get("required", ())):
        return False
    if len(x) < schema.get("minProperties", 0):
        return False
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    additional = schema.get("additionalProperties", True)
    for key, value in x.items():
        matched = key in properties
        if matched and not _valid(value, properties[key], root):
            return False
        for pattern, sub in patterns.items():
            if re.search(pattern, key):
                matched = True
                if not _valid(value, sub, root):
                    return False
        if not matched and not _valid(value, additional, root):
            return False
    return True


def _target(ref: Any, root: dict[str, Any]) -> Any:
    """A ``#/$defs/NAME`` reference's schema; any other reference is undecided."""
    if not isinstance(ref, str) or not ref.startswith(_LOCAL_REF):
        raise _Undecided
    name = ref[len(_LOCAL_REF) :]
    defs = root.get("$defs", {})
    if any(c in name for c in "/~%") or name not in defs:
        raise _Undecided
    return defs[name]


def _is(x: Any, name: str) -> bool:
    """Draft 2020-12's types: a bool is no number, and 1.0 is an integer."""
    if name == "string":
        return isinstance(x, str)
    if name == "object":
        return isinstance(x, dict)
    if name == "array":
        return isinstance(x, list)
    if name == "boolean":
        return isinstance(x, bool)
    if name == "null":
        return x is None
    if isinstance(x, bool):
        return False
    if name == "integer":
        return isinstance(x, int) or (isinstance(x, float) and x.is_integer())
    if name == "number":
        return isinstance(x, (int, float))
    raise _Undecided


def _equal(x: Any, value: Any) -> bool:
    """``const`` / ``enum`` equality as jsonschema's: strings as strings, bools never equal
    to numbers; arrays and objects are left to it."""
    if isinstance(x, str) or isinstance(value, str):
        return bool(x == value)
    if isinstance(x, (list, dict)) or isinstance(value, (list, dict)):
        raise _Undecided
    if isinstance(x, bool) or isinstance(value, bool):
        return isinstance(x, bool) and isinstance(value, bool) and x == value
    return bool(x == value)
