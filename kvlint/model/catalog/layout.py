"""How the catalog is stored: one small index of names, the entries in one file per organisation.

A lookup reads ``index.json`` (every id and alias, ~60 KB) and then only the file of the entry
it found (``entries/<org>.json``), so start-up does not grow with the catalog: at 500 entries a
single file took ~3 ms to parse on every run that met a model, the index and one file ~0.6 ms.
``scripts/build_catalog.py`` writes both; a test checks the index against the entry files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from kvlint.lazy_re import lazy

FORMAT = 2
INDEX_FILE = "index.json"
ENTRIES_DIR = "entries"
ABOUT = (
    "kvlint's built-in model catalog: per model, the config.json keys kvlint's family code reads "
    "(never a whole config), the names it answers to, and where the facts came from "
    "(repo@revision:path and the sha256 of the file they were read from, or a URL and a note). "
    "Regenerate entries with scripts/build_catalog.py."
)

# What people prefix a Hub id with when they paste it.
_PREFIX_RE = lazy(
    r"^(?:(?:https?://)?(?:www\.)?(?:hf\.co/|huggingface\.co/|ollama\.com/library/)|hf://|ollama://)",
    re.I,
)
_UNSAFE = lazy(r"[^a-z0-9._-]")


def normalise(ref: str) -> str:
    """The form names are matched in: no URL prefix, no trailing slash, lower case."""
    text = _PREFIX_RE.sub("", ref.strip()).strip("/")
    return text.lower()


def shard_of(model_id: str) -> str:
    """The entry file an id lives in: its organisation, lower case (``meta-llama``)."""
    org = model_id.split("/", 1)[0] if "/" in model_id else "_"
    return _UNSAFE.sub("_", org.lower()) or "_"


def build_index(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The index of ``records``: every id in order, and every alias with the id it names.

    Raises ValueError on a duplicate id or a name two entries claim."""
    ids: list[str] = []
    names: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for record in records:
        model_id = record["id"]
        for name in (model_id, *record.get("aliases", ())):
            key = normalise(name)
            if names.get(key, model_id) != model_id:
                raise ValueError(f"{name!r} names two entries: {names[key]!r} and {model_id!r}")
            if key in names and name == model_id:
                raise ValueError(f"duplicate id {model_id!r}")
            names[key] = model_id
            if name != model_id:
                aliases[key] = model_id
        ids.append(model_id)
    return {"format": FORMAT, "ids": ids, "aliases": dict(sorted(aliases.items()))}


def dump_index(index: Mapping[str, Any]) -> str:
    lines = ["{", f' "format": {index["format"]},', ' "ids": [']
    ids = index["ids"]
    lines.extend(f"  {json.dumps(i)}{',' if n < len(ids) - 1 else ''}" for n, i in enumerate(ids))
    lines.extend(["  ],", ' "aliases": {'])
    items = list(index["aliases"].items())
    lines.extend(
        f"  {json.dumps(k)}: {json.dumps(v)}{',' if n < len(items) - 1 else ''}"
        for n, (k, v) in enumerate(items)
    )
    lines.extend(["  }", "}"])
    return "\n".join(lines) + "\n"


def dump_shard(records: Sequence[Mapping[str, Any]]) -> str:
    """One entry per line group, short lists on one line: small diffs, readable by eye."""
    lines = ["{", f' "format": {FORMAT},', f' "about": {json.dumps(ABOUT)},', ' "models": [']
    for index, record in enumerate(records):
        lines.append("  {")
        items = list(record.items())
        for item_index, (key, value) in enumerate(items):
            comma = "," if item_index < len(items) - 1 else ""
            lines.append(f"   {json.dumps(key)}: {json.dumps(value)}{comma}")
        lines.append("  }" + ("," if index < len(records) - 1 else ""))
    lines.extend([" ]", "}"])
    return "\n".join(lines) + "\n"
