"""The fewest GPUs, and their TP x PP x DP layout, that hold a concurrency at a context."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import kv_heads_per_gpu
from kvlint.engines import account
from kvlint.estimate import EngineEstimate
from kvlint.settled import Settled
from kvlint.solve.capacity import admitted_at
from kvlint.solve.layout import replica_layouts
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import placed

DEFAULT_MAX_GPUS = 64
# TP stays within a node unless told otherwise: 8 GPUs, the HGX / DGX board.
DEFAULT_MAX_TP = 8


@dataclass(frozen=True)
class ReplicaResult:
    """One TP x PP replica at the target context: what one GPU of it holds, what it admits."""

    layout: Layout
    kv_heads_per_gpu: int
    admitted: int
    estimate: EngineEstimate


@dataclass(frozen=True)
class GpuPlan:
    """The answer to "how many GPUs for ``concurrency`` users at ``context`` tokens?".

    ``layout`` is None when no layout within ``max_gpus`` does it. ``replicas`` holds every
    replica shape tried (pipeline-free ones first), for the table that shows why the winner won.
    """

    context: int
    concurrency: int
    max_gpus: int
    layout: Layout | None
    replica: ReplicaResult | None
    replicas: tuple[ReplicaResult, ...]

    @property
    def gpus(self) -> int | None:
        return None if self.layout is None else self.layout.gpus

    @property
    def admitted(self) -> int:
        """Sequences the whole fleet admits (every replica together)."""
        if self.layout is None or self.replica is None:
            return 0
        return self.replica.admitted * self.layout.dp


def replica_at(
    settled: Settled, layout: Layout, *, context: int, estimator: Estimator
) -> ReplicaResult:
    """One replica of ``layout`` (its TP and PP) serving ``context``-token sequences."""
    variant = placed(settled, layout, data_parallel_size=None)
    seqs, est = admitted_at(variant, context, estimator)
    heads = kv_heads_per_gpu(settled.model, layout.tp)
    return ReplicaResult(Layout(layout.tp, layout.pp), heads, seqs, est)


def min_gpus(
    settled: Settled,
    *,
    context: int,
    concurrency: int,
    max_gpus: int = DEFAULT_MAX_GPUS,
    max_tp: int | None = DEFAULT_MAX_TP,
    replicas: bool = True,
    any_layout: bool = False,
    estimator: Estimator = account,
) -> GpuPlan:
    """The smallest GPU count, and its layout, whose engine admits ``concurrency`` sequences of
    ``context`` tokens at once.

    Every replica shape the engine accepts is sized once (``layout.replica_layouts``: heads and
    KV heads divisible, TP beyond the KV heads replicating them, PP stages of a node's TP for
    what TP cannot split; ``any_layout`` tries every TP x PP);
    a replica admitting ``a`` sequences needs ``ceil(concurrency / a)`` copies side by side
    (data parallelism; ``replicas=False`` forbids that). Fewest GPUs wins; ties go to the layout
    admitting the most sequences, then to fewer pipeline stages, then to fewer replicas.
    ``max_tp`` caps tensor parallelism (the GPUs of one node, where TP belongs).
    """
    need = max(1, concurrency)
    tried: list[ReplicaResult] = []
    best: tuple[tuple[int, int, int, int], Layout, ReplicaResult] | None = None
    rules = settled.facts.parallel
    shapes = replica_layouts(
        settled.model, rules, max_gpus=max_gpus, max_tp=max_tp, any_layout=any_layout
    )
    for shape in shapes:
        result = replica_at(settled, shape, context=context, estimator=estimator)
        tried.append(result)
        if result.admitted < 1:
            continue
        copies = math.ceil(need / result.admitted)
        if copies > 1 and not replicas:
            continue
        layout = Layout(shape.tp, shape.pp, copies)
        if layout.gpus > max_gpus:
            continue
        key = (layout.gpus, -result.admitted * copies, layout.pp, layout.dp)
        if best is None or key < best[0]:
            best = (key, layout, result)
    if best is None:
        return GpuPlan(context, need, max_gpus, None, None, tuple(tried))
    return GpuPlan(context, need, max_gpus, best[1], best[2], tuple(tried))
