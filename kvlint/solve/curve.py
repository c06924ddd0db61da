"""The chart's data: one GPU's KV memory per sequence against context, with the pool as lines."""

from __future__ import annotations

from kvlint.arith.kv import kv_size
from kvlint.arith.parallel import Layout
from kvlint.engines import account
from kvlint.engines import revise
from kvlint.settled import Settled
from kvlint.solve.plot import Chart
from kvlint.solve.plot import Series
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import placed
from kvlint.solve.variants import value

POINTS = 24


def kv_chart(
    settled: Settled,
    *,
    layout: Layout,
    context: int,
    concurrency: int,
    limit: int,
    estimator: Estimator = account,
) -> Chart:
    """KV bytes one sequence takes on one GPU of ``layout`` (as the engine pages it) for contexts
    up to about twice the target, with the GPU's KV pool and the pool's share per sequence at
    ``concurrency`` as horizontal lines: where the curve crosses the share is the longest
    context that concurrency allows."""
    spec, gpu = settled.model, settled.gpu
    base = placed(settled, layout)
    top = max(1, min(limit, 2 * context) if limit >= context else 2 * context)
    points: list[tuple[float, float]] = [(0.0, 0.0)]
    pool: int | None = None
    for i in range(1, POINTS + 1):
        length = max(1, round(top * i / POINTS))
        est = estimator(revise(base, max_model_len=length))
        needed = est.needed_bytes_one_sequence
        if needed is None:  # no engine figure: the first-principles cost over the GPUs
            kv = kv_size(spec, str(value(base.request.kv_cache_dtype) or "auto"))
            needed = kv.per_sequence_bytes(length) // layout.gpus_per_replica
        points.append((float(length), float(needed)))
        if length == top or pool is None:
            pool = est.available_kv_bytes
    series = [Series("KV per sequence, one GPU", tuple(points), "*", "#1f77b4")]
    if pool is not None and pool > 0:
        series.append(Series("KV pool, one GPU", ((0.0, float(pool)),), "=", "#d62728"))
        if concurrency > 1:
            share = float(pool) / concurrency
            label = f"pool / {concurrency} sequences"
            series.append(Series(label, ((0.0, share),), "-", "#ff7f0e", dashed=True))
    gpu_name = gpu.key if gpu is not None else "GPU"
    title = f"{spec.name} on {gpu_name}, {layout.label}: KV memory per sequence"
    return Chart(title, "context (tokens)", "bytes per GPU", tuple(series), float(context))
