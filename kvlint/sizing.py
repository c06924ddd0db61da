"""Sizing: everything the rules see about one deployment, computed once before they run (a
record; ``kvlint.engines.sizer`` computes it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced

if TYPE_CHECKING:
    from kvlint.arith.kv import KvSize
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import EngineFacts
    from kvlint.settled import Settled


@dataclass(frozen=True)
class Sizing:
    """What the engine will run with (``settled``), first principles (``kv``) and the engine's
    own accounting (``engine``), always all three when the facts allow. ``missing`` names facts
    the files do not give, for the info finding. ``spec`` is the model as the engine runs it
    (the deployment's length and RoPE overrides applied)."""

    spec: ModelSpec | None
    kv: KvSize | None  # at the deployment's cache dtype
    gpu: GpuSpec | None
    engine: EngineEstimate | None
    missing: tuple[str, ...] = ()
    settled: Settled | None = None  # None when the model is unknown (nothing to settle on)
    facts: EngineFacts | None = None  # the engine's, known even without a model


def runtime_values(dep: Deployment) -> dict[str, Sourced[str]]:
    """The settings the arithmetic needs whose value is filled in at deploy or run time."""
    return {name: value for name, value in dep.runtime.items() if name not in _NOT_SIZED}


def runtime_fact(name: str, value: Sourced[str]) -> str:
    """How a run-time value is listed among the missing facts."""
    return f"value of `{name}` (`{value.value}` is filled in at deploy or run time)"


# Deployment fields a run-time value leaves the arithmetic unaffected by.
_NOT_SIZED = frozenset(
    {
        "served_model_name",
        "engine_version",
        # Where the engine's ranks run, not what one GPU holds (KV306 reads them).
        "nnodes",
        "headless",
        "distributed_executor_backend",
        "data_parallel_size_local",
        "data_parallel_rank",
        "enable_dp_attention",
    }
)
