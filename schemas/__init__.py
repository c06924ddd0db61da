"""kvlint's JSON Schemas, installed as package data (import name ``kvlint_schemas``)."""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``name`` (e.g. ``"plan"`` for ``plan.schema.json``) as a dict."""
    # The package's own loader reads the file (zip-safe), as importlib.resources does, without
    # importing it and with it tempfile, shutil, zipfile and threading (~6 ms of a plan's check).
    loader = __spec__.loader if __spec__ is not None else None
    get_data = getattr(loader, "get_data", None)
    if get_data is None or __file__ is None:  # pragma: no cover  (a loader without data files)
        raise FileNotFoundError(f"{name}.schema.json: this package's loader cannot read it")
    raw: bytes = get_data(os.path.join(os.path.dirname(__file__), f"{name}.schema.json"))
    schema: dict[str, Any] = json.loads(raw.decode("utf-8"))
    return schema
