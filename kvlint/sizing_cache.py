"""The engine's accounting reused across deployments that settle the same, per run.

The accounting walks the model's layers several times (the engine's paging, its pipeline
stages, first principles); a repository often repeats one deployment (a staging and a
production copy, the replicas of a fleet, every round of ``--fix``). The settle step runs for
each deployment (its values carry their own spans, which a finding cites); the accounting of two
Settled records with the same values, spans aside, is shared: an EngineEstimate holds no span.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Hashable
from typing import TYPE_CHECKING
from typing import Any

from kvlint.deployment import Sourced
from kvlint.finding import Span

if TYPE_CHECKING:
    from kvlint.estimate import EngineEstimate
    from kvlint.settled import Settled

# The most recently used accountings kept. An entry (its key and EngineEstimate) is about 70 KB:
# 4,096 of them were most of the 334 MiB a check of 10,000 all-different deployment files took
# (issue 20). Repeats sit close together (a file's staging and production copies, the files of
# one fleet, every round of `--fix` on the same file), so a short memory keeps the hits.
MAX_ENTRIES = 128


class SizingCache:
    """``account(settled)`` remembered per settled values; a miss runs the engine's accounting."""

    def __init__(self, account: Callable[[Settled], EngineEstimate] | None = None) -> None:
        self._entries: dict[Hashable, EngineEstimate] = {}
        self._account = account
        self.hits = 0

    def account(self, settled: Settled) -> EngineEstimate:
        key = settled_key(settled)
        cached = self._entries.pop(key, None) if key is not None else None
        if cached is not None:
            self.hits += 1
            self._entries[key] = cached  # the most recently used, last
            return cached
        if self._account is None:
            from kvlint.engines import account

            self._account = account
        estimate = self._account(settled)
        if key is not None:
            if len(self._entries) >= MAX_ENTRIES:
                del self._entries[next(iter(self._entries))]  # the least recently used
            self._entries[key] = estimate
        return estimate


def settled_key(settled: Settled) -> Hashable | None:
    """What the accounting depends on, hashable; None when some value cannot be hashed.

    Spans are left out (they say where a value is written, not what it is), and so is the
    request the values were settled from (``_field_names``). The records that hold no span (the
    model before and after the overrides, the engine's facts, the GPU, the cache's storage
    types) are frozen and compared by value as they are: the settle step makes a new model spec
    for a deployment whose overrides change it, so its identity would never match (and could be
    reused), and walking a model's layers field by field was a sixth of a check of many files.
    The key's hash is taken once, each record's hash from a memory of recent records by
    identity (a model's layers hash one by one)."""
    try:
        state = settled.__dict__
        values = tuple(
            (name, state[name] if name in _BY_VALUE else _frozen(state[name]))
            for name in _field_names(type(settled))
        )
        hashed = tuple(
            (name, _record_hash(value) if name in _BY_VALUE else value) for name, value in values
        )
        kind = type(settled).__name__
        key = _Key((kind, values), hash((kind, hashed)))
    except TypeError:
        return None
    return key


def _field_names(cls: type) -> tuple[str, ...]:
    """The fields of a Settled class but its span and its request, in order (read once per
    class). The request is what the settle step read every other field from; no accounting
    reads it again (only the solver's revise does, and that settles anew), and freezing its
    thirty fields was most of the key's cost for every deployment of a run."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(
            f.name for f in dataclasses.fields(cls) if f.name not in _NOT_KEYED
        )
    return names


_NOT_KEYED = frozenset({"span", "request"})


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _all_fields(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (read once per class: a Request's 30 fields were
    looked up through dataclasses.fields() for every deployment)."""
    names = _ALL_FIELDS.get(cls)
    if names is None:
        names = _ALL_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_ALL_FIELDS: dict[type, tuple[str, ...]] = {}

# Settled's fields that are frozen records without spans, compared by value as they are.
_BY_VALUE = frozenset({"spec", "model", "facts", "gpu", "cache_types"})

# The hashes of recent span-free records, by identity: the same model spec, engine facts and GPU
# stand in most deployments of a run, and a model's hash walks every layer (a tenth of the
# accounting's time at 1,000 files). Each entry holds its record, so its id is not reused.
_HASHES: dict[int, tuple[object, int]] = {}
_HASHES_KEPT = 256


def _record_hash(record: object) -> int:
    found = _HASHES.get(id(record))
    if found is not None and found[0] is record:
        return found[1]
    value = hash(record)
    if len(_HASHES) >= _HASHES_KEPT:
        _HASHES.clear()
    _HASHES[id(record)] = (record, value)
    return value


class _Key:
    """A settled record's values with their hash computed once."""

    __slots__ = ("_hash", "values")

    def __init__(self, values: tuple[Any, ...], hashed: int) -> None:
        self.values = values
        self._hash = hashed

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self._hash == other._hash and self.values == other.values


# Values hashable as they are, keyed with their type (exact types: a subclass takes the long way).
_PLAIN = frozenset({int, float, str, bool, type(None)})


def _frozen(value: Any) -> Hashable:
    kind = type(value)
    if kind in _PLAIN:  # most values: the same key the checks below make, sooner
        return (kind.__name__, value)
    if kind is Sourced and type(value.value) in _PLAIN:
        return ("sourced", (type(value.value).__name__, value.value), value.raw, value.default)
    if isinstance(value, Sourced):
        return ("sourced", _frozen(value.value), value.raw, value.default)
    if isinstance(value, Span):
        return None
    if isinstance(value, dict):
        return ("dict", tuple((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(item) for item in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(_frozen(getattr(value, name)) for name in _all_fields(kind)),
        )
    hash(value)  # anything else must be hashable as it is, or the deployment is not cached
    # The type too: 1, 1.0 and True are equal keys in a dict but not the same setting.
    return (type(value).__name__, value)
