"""kvlint's JSON Schemas, installed as package data (import name ``kvlint_schemas``)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``name`` (e.g. ``"plan"`` for ``plan.schema.json``) as a dict."""
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
