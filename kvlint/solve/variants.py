"""What the solver varies: a settled deployment, revised one setting at a time and settled again
by its engine (``kvlint.engines.revise``), so every default that depends on the change is
derived anew (vLLM's batch defaults by GPU, SGLang's memory fraction by TP, TGI's shards)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvlint.arith.parallel import Layout
from kvlint.deployment import Sourced
from kvlint.engines import revise
from kvlint.estimate import EngineEstimate
from kvlint.settled import Settled

# What the solver calls to learn the engine's numbers: the engine's own accounting
# (kvlint.engines.account) by default, swappable so a test can pin the search itself.
Estimator = Callable[[Settled], EngineEstimate]


def placed(settled: Settled, layout: Layout, **changes: Any) -> Settled:
    """``settled`` as one replica of ``layout``: its TP and PP over that many GPUs."""
    return revise(
        settled,
        tensor_parallel_size=layout.tp,
        pipeline_parallel_size=layout.pp,
        gpu_count=layout.gpus_per_replica,
        **changes,
    )


def value(field: Sourced[Any] | None) -> Any:
    """A setting's value, None when unset."""
    return None if field is None else field.value
