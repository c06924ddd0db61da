"""JSON-Schema validation of a node tree, each error at the line and column of what is wrong.

A document that conforms (kvlint.source.conforms decides that without jsonschema) has no
errors to place; jsonschema, slow to import (~25 ms with attrs and referencing), is imported only
to find and word the errors of one that does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvlint import codes
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.source.conforms import conforms
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Sequence


def validate(
    root: Node, schema: dict[str, Any], *, code: str = codes.SCHEMA_VIOLATION
) -> list[InputProblem]:
    """Every schema error as a problem at the offending key or value, in file order."""
    instance = root.plain()
    if conforms(instance, schema):
        return []
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    validator = Draft202012Validator(schema)
    problems: list[InputProblem] = []
    for error in validator.iter_errors(instance):
        node = _at(root, error.absolute_path)
        where, message = _describe(node, error, schema)
        problems.append(InputProblem(code, where.span, message, Severity.ERROR))
    problems.sort(key=lambda p: (p.span.line, p.span.column))
    return problems


def _at(root: Node, path: Iterable[Any]) -> Node:
    node = root
    for part in path:
        if isinstance(node, Mapping) and isinstance(part, str):
            child = node.get(part)
        elif isinstance(node, Sequence) and isinstance(part, int) and part < len(node.items):
            child = node.items[part]
        else:
            child = None
        if child is None:
            break
        node = child
    return node


def _dotted(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(node: Node, error: Any, schema: dict[str, Any]) -> tuple[Node, str]:
    where = _dotted(error.absolute_path)
    prefix = f"`{where}`: " if where else ""
    if error.validator == "additionalProperties" and isinstance(node, Mapping):
        allowed = set(error.schema.get("properties", {}))
        extra = [key for key in node.items if key[0].text not in allowed]
        if extra:
            key = extra[0][0]
            known = ", ".join(sorted(allowed))
            return key, f"{prefix}unknown key `{key.text}` (known: {known})"
    if error.validator == "enum":
        choices = ", ".join(str(c) for c in error.validator_value)
        return node, f"{prefix}{error.instance!r} is not one of {choices}"
    if error.validator == "const":
        return node, f"{prefix}must be `{error.validator_value}`, got {error.instance!r}"
    if error.validator == "anyOf":
        for name, definition in schema.get("$defs", {}).items():
            if definition is error.schema or definition == error.schema:
                expected = definition.get("description", name)
                return node, f"{prefix}expected {expected}, got {error.instance!r}"
    return node, prefix + error.message
