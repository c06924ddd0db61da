"""Pure functions of a model remembered per (model, arguments): ``@by_model``.

A check of many files asks the same question of one model again and again: the vLLM band's two
ends and every release line of a file naming none page the model's layers the same way and
hold the same weights; a repository deploys a handful of models many times. The function's
first argument, the model, is keyed by identity (hashing a ModelSpec hashes every layer) and
held by the entry, so its id cannot be taken by another model while the entry lives; the other
arguments are keyed by value and must be hashable. The results must be immutable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from typing import Concatenate
from typing import ParamSpec
from typing import TypeVar

from kvlint.model.spec import ModelSpec

P = ParamSpec("P")
R = TypeVar("R")

# Results kept per function: a run's models times their settings; emptied when full (the
# repeats sit close together, and an entry is recomputed in microseconds).
KEPT = 256


def by_model(
    compute: Callable[Concatenate[ModelSpec, P], R],
) -> Callable[Concatenate[ModelSpec, P], R]:
    """``compute`` remembered per model (by identity) and arguments (by value)."""
    entries: dict[tuple[Any, ...], tuple[ModelSpec, R]] = {}

    @functools.wraps(compute)
    def remembered(spec: ModelSpec, /, *args: P.args, **kwargs: P.kwargs) -> R:
        key = (id(spec), args, tuple(kwargs.items()))
        found = entries.get(key)
        if found is not None and found[0] is spec:
            return found[1]
        result = compute(spec, *args, **kwargs)
        if len(entries) >= KEPT:
            entries.clear()
        entries[key] = (spec, result)
        return result

    return remembered
