"""The replicas the solver tries: which TP x PP layouts to search, in which order."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import kv_heads_per_gpu
from kvlint.arith.parallel import pp_problem
from kvlint.arith.parallel import valid_tps
from kvlint.model.spec import ModelSpec
from kvlint.settled import ParallelRules


def pipeline_tp(spec: ModelSpec, rules: ParallelRules, max_tp: int) -> int:
    """The TP that pipeline stages are built from: the largest the engine accepts up to
    ``max_tp`` (one node) without replicating KV heads, since a replicated head buys no cache
    (for one-KV-head and MLA models every TP replicates, so the largest is taken)."""
    tps = valid_tps(spec, rules, max_tp)
    kv = kv_heads_per_gpu(spec, 1)
    unreplicated = [tp for tp in tps if tp <= kv]
    return max(unreplicated if kv > 1 and unreplicated else tps)


def replica_layouts(
    spec: ModelSpec,
    rules: ParallelRules,
    *,
    max_gpus: int,
    max_tp: int | None = None,
    any_layout: bool = False,
) -> Iterator[Layout]:
    """The (TP, PP) replicas to try with at most ``max_gpus`` GPUs, fewest GPUs first, then the
    larger TP first.

    By default a replica is tensor parallel alone, or pipeline stages of the one TP
    ``pipeline_tp`` picks: vLLM's own advice (TP across the GPUs of a node, PP across nodes),
    and the only way past the KV-head limit on cache per GPU. ``any_layout`` tries every TP x PP
    the engine accepts (``TP 1 x PP 21`` included).
    """
    tp_limit = min(max_gpus, max_tp or max_gpus)
    tps = valid_tps(spec, rules, tp_limit)
    stage_tp = pipeline_tp(spec, rules, tp_limit)
    found = []
    for tp in tps:
        for pp in range(1, max_gpus // tp + 1):
            if pp > 1 and not any_layout and tp != stage_tp:
                continue
            if pp_problem(spec, rules, pp) is None:
                found.append(Layout(tp, pp))
    yield from sorted(found, key=lambda lay: (lay.gpus_per_replica, -lay.tp))
