"""Sizing reused across deployments that run the same model with the same settings, per run.

``kvlint.sizing.size`` walks the model's layers several times (first principles, the engine's
paging, its pipeline stages); a repository often repeats one deployment (a staging and a
production copy, the replicas of a fleet, every round of ``--fix``). Two deployments share a
key when they have the same model spec object (one per reference per run) and the same value
for every field except those that only say where they are written (path, span, name,
annotations, problems); only the engine defaults' spans are then redone for the new one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import TYPE_CHECKING
from typing import Any

from kvlint.deployment import Sourced

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.model.spec import ModelSpec
    from kvlint.sizing import Sizing

# Fields that say where a deployment is written, not what it runs: sizing never reads them.
PLACE_FIELDS = frozenset({"path", "span", "name", "annotations", "problems"})
MAX_ENTRIES = 4096  # bounds the memory of a run over a repository of all-different files


class SizingCache:
    """``size(dep, spec)`` remembered per (spec object, settings); a miss computes it."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, Sizing] = {}
        self.hits = 0

    def size(self, dep: Deployment, spec: ModelSpec | None) -> Sizing:
        from kvlint.sizing import size

        key = sizing_key(dep, spec)
        cached = self._entries.get(key) if key is not None else None
        if cached is None:
            sizing = size(dep, spec)
            if key is not None and len(self._entries) < MAX_ENTRIES:
                self._entries[key] = sizing
            return sizing
        self.hits += 1
        if not cached.defaults:
            return cached
        # The only spans in a Sizing: each engine default is cited at its deployment.
        defaults = {
            name: dataclasses.replace(value, span=dep.span)
            for name, value in cached.defaults.items()
        }
        return dataclasses.replace(cached, defaults=defaults)


def sizing_key(dep: Deployment, spec: ModelSpec | None) -> Hashable | None:
    """What sizing depends on, hashable; None when some value cannot be hashed (not cached).

    The spec is keyed by identity: the linter resolves each reference once per run, and the
    cached Sizing holds the spec, so the id cannot be reused while the entry lives."""
    try:
        values = tuple(
            _frozen(getattr(dep, f.name))
            for f in dataclasses.fields(dep)
            if f.name not in PLACE_FIELDS
        )
        key = (id(spec), values)
        hash(key)
    except TypeError:
        return None
    return key


def _frozen(value: Any) -> Hashable:
    if isinstance(value, Sourced):
        return ("sourced", _frozen(value.value), value.raw, value.default)
    if isinstance(value, dict):
        return ("dict", tuple((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_frozen(item) for item in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(_frozen(getattr(value, f.name)) for f in dataclasses.fields(value)),
        )
    hash(value)  # anything else must be hashable as it is, or the deployment is not cached
    # The type too: 1, 1.0 and True are equal keys in a dict but not the same setting.
    return (type(value).__name__, value)
