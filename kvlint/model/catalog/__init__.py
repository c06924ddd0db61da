"""The built-in model catalog: compact config facts with provenance, loaded once, built on demand.

``models.json`` (package data, regenerated in part by ``scripts/build_catalog.py``) holds one entry
per model: the few ``config.json`` keys the family code reads, the names people write for it, and
where the facts came from. A variant (an Instruct release, a quantised checkpoint) names its
``base`` and lists only the keys that differ, so a quantised model is "base + quantization_config".
The JSON is read once per process; a ModelSpec is built only for the entry asked for, so
``kvlint check`` pays for the models it meets and nothing more.
"""

from __future__ import annotations

import functools
import json
import pkgutil
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple

from kvlint.errors import KvlintError

if TYPE_CHECKING:
    from kvlint.model.spec import ModelSpec

DATA_FILE = "models.json"

# What people prefix a Hub id with when they paste it.
_PREFIX_RE = re.compile(
    r"^(?:(?:https?://)?(?:www\.)?(?:hf\.co/|huggingface\.co/|ollama\.com/library/)|hf://|ollama://)",
    re.I,
)


class CatalogEntry(NamedTuple):
    """One model: its id, the names it answers to, its config facts and their provenance."""

    id: str
    config: Mapping[str, Any]  # merged with the base entry's config, when there is one
    aliases: tuple[str, ...]
    source: Mapping[str, str]
    base: str | None = None
    # What kvlint lacks to size this architecture (its refusal); None for the entries it sizes.
    unsized: str | None = None

    @property
    def source_text(self) -> str:
        """One line saying where the facts came from."""
        src = self.source
        parts = []
        if src.get("repo"):
            where = src["repo"]
            if src.get("revision"):
                where += f"@{src['revision'][:12]}"
            if src.get("path"):
                where += f":{src['path']}"
            parts.append(where)
        if src.get("url"):
            parts.append(src["url"])
        if src.get("note"):
            parts.append(src["note"])
        if self.base:
            base = get_entry(self.base)
            if base is not None:
                parts.append(f"base {base.id}: {base.source_text}")
        return "; ".join(parts)


class _Catalog(NamedTuple):
    entries: dict[str, CatalogEntry]  # id -> entry, in file order
    by_name: dict[str, str]  # normalised id or alias -> id
    by_bare: dict[str, frozenset[str]]  # normalised name without the org -> ids


def normalise(ref: str) -> str:
    """The form names are matched in: no URL prefix, no trailing slash, lower case."""
    text = _PREFIX_RE.sub("", ref.strip()).strip("/")
    return text.lower()


def _bare(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _read_data() -> dict[str, Any]:
    # pkgutil rather than importlib.resources: the same package-data read (zip-safe, through the
    # package's loader) without importing tempfile, zipfile and threading (~6 ms of start-up).
    raw = pkgutil.get_data(__package__, DATA_FILE)
    if raw is None:  # pragma: no cover  (a loader that cannot read data files)
        raise KvlintError(f"the built-in catalog {DATA_FILE} cannot be read")
    data: dict[str, Any] = json.loads(raw.decode("utf-8"))
    return data


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``; a nested ``text_config`` is merged key by key too."""
    merged = dict(base)
    for key, value in over.items():
        if value is None:
            merged.pop(key, None)  # a variant can drop a key of its base with null
        elif key == "text_config" and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@functools.cache
def _catalog() -> _Catalog:
    raw = _read_data()
    records: dict[str, dict[str, Any]] = {}
    for record in raw["models"]:
        if record["id"] in records:
            raise ValueError(f"{DATA_FILE}: duplicate id {record['id']!r}")
        records[record["id"]] = record

    resolved: dict[str, dict[str, Any]] = {}

    def config_of(model_id: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
        if model_id in resolved:
            return resolved[model_id]
        if model_id in seen:
            raise ValueError(f"{DATA_FILE}: base cycle through {model_id!r}")
        record = records[model_id]
        own = record.get("config", {})
        base = record.get("base")
        config = _merge(config_of(base, (*seen, model_id)), own) if base else dict(own)
        resolved[model_id] = config
        return config

    entries: dict[str, CatalogEntry] = {}
    by_name: dict[str, str] = {}
    by_bare: dict[str, set[str]] = {}
    for model_id, record in records.items():
        entry = CatalogEntry(
            id=model_id,
            config=config_of(model_id),
            aliases=tuple(record.get("aliases", ())),
            source=record.get("source", {}),
            base=record.get("base"),
            unsized=record.get("unsized"),
        )
        entries[model_id] = entry
        for name in (model_id, *entry.aliases):
            key = normalise(name)
            if by_name.get(key, model_id) != model_id:
                raise ValueError(f"{DATA_FILE}: {name!r} names two entries")
            by_name[key] = model_id
            by_bare.setdefault(_bare(key), set()).add(model_id)
    return _Catalog(entries, by_name, {k: frozenset(v) for k, v in by_bare.items()})


def catalog_ids() -> list[str]:
    """Every entry's id, in catalog order."""
    return list(_catalog().entries)


def sized_ids() -> list[str]:
    """The ids of the entries kvlint sizes (not those marked ``unsized``), in catalog order."""
    return [entry.id for entry in _catalog().entries.values() if not entry.unsized]


def entries() -> list[CatalogEntry]:
    return list(_catalog().entries.values())


def get_entry(model_id: str) -> CatalogEntry | None:
    """The entry with exactly this id."""
    return _catalog().entries.get(model_id)


def find_entry(ref: str) -> CatalogEntry | None:
    """The entry ``ref`` names: an id or alias in any case, or a bare name without the org when
    exactly one entry has it (``Llama-3.1-70B-Instruct``)."""
    catalog = _catalog()
    key = normalise(ref)
    if not key:
        return None
    model_id = catalog.by_name.get(key)
    if model_id is None and "/" not in key:
        ids = catalog.by_bare.get(key, frozenset())
        if len(ids) == 1:
            (model_id,) = ids
    return catalog.entries.get(model_id) if model_id else None


def ambiguous(ref: str) -> list[str]:
    """The ids a bare name could mean, when it means more than one."""
    key = normalise(ref)
    if "/" in key or key in _catalog().by_name:
        return []
    ids = _catalog().by_bare.get(key, frozenset())
    return sorted(ids) if len(ids) > 1 else []


@functools.cache
def entry_spec(model_id: str) -> ModelSpec:
    """Build (once) the ModelSpec of the entry with this id, through the family code."""
    from kvlint.model.hf import spec_from_config

    entry = _catalog().entries[model_id]
    try:
        return spec_from_config(
            entry.config, name=entry.id, source=f"kvlint catalog: {entry.source_text}"
        )
    except KvlintError as exc:  # an architecture kvlint does not size, or our bug
        raise type(exc)(f"built-in catalog entry {model_id!r}: {exc.message}") from exc


def lookup(ref: str) -> ModelSpec | None:
    """The ModelSpec of the catalog entry ``ref`` names, or None."""
    entry = find_entry(ref)
    return entry_spec(entry.id) if entry else None
