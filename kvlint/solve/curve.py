"""The chart's data: the sequences the engine admits against context length, the requested
concurrency, and where the two cross."""

from __future__ import annotations

from kvlint.arith.parallel import Layout
from kvlint.engines import account
from kvlint.settled import Settled
from kvlint.solve.capacity import admitted_at
from kvlint.solve.capacity import max_model_len_at
from kvlint.solve.chart import Chart
from kvlint.solve.chart import Series
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import placed

POINTS = 24


def kv_chart(
    settled: Settled,
    *,
    layout: Layout,
    context: int,
    concurrency: int,
    limit: int,
    estimator: Estimator = account,
    longest: int | None = None,
    asked: str | None = None,
) -> Chart:
    """The answer as a picture: how many sequences the engine admits at each context length
    (``capacity.admitted_at``, the count the plan's ``max_num_seqs`` answer quotes), the
    requested concurrency as a horizontal line (labelled ``asked``, "requested: N" unless
    told), the target context as a vertical rule, and the point where the curve crosses the
    requested count labelled with its numbers: the longest context that concurrency allows
    (``longest``, the plan's own answer, when given; 0 when not one token's worth fits). The
    x range holds the target and the crossing; the y axis runs to the largest count drawn."""
    base = placed(settled, layout)

    def admitted(length: int) -> int:
        return admitted_at(base, length, estimator)[0]

    if longest is None:
        answer = max_model_len_at(base, concurrency=concurrency, limit=limit, estimator=estimator)
        longest = answer.max_model_len
    crossing = longest or None  # 0: not even one token's worth fits
    far = max(context, crossing or 0)
    near = min(context, crossing) if crossing else context
    # Half again past the farther of the two, within the model's limit (but never short of the
    # target, so a target beyond the limit is drawn where the engine admits none).
    top = max(2, context, min(limit, round(far * 1.5)))
    low = max(1, near // 4)
    lengths = {round(low + (top - low) * i / POINTS) for i in range(POINTS + 1)}
    # The crossing (and the step just past it) and the target are drawn exactly, so the
    # labelled points sit on the curve instead of on a chord between two grid points.
    exact = {context, crossing, crossing + 1} if crossing else {context}
    lengths |= {length for length in exact if low <= length <= top}
    counts = {length: admitted(length) for length in sorted(lengths)}
    points = tuple((float(length), float(count)) for length, count in counts.items())
    series = (
        Series(f"sequences {settled.facts.display} admits", points, "*", "#1f77b4"),
        Series(
            asked or f"requested: {concurrency:,}",
            ((0.0, float(concurrency)),),
            "-",
            "#d62728",
            dashed=True,
        ),
    )
    wanted = _sequences(concurrency)
    verb = "fits" if concurrency == 1 else "fit"
    if crossing is None:
        x, label = low, f"{wanted} never {verb}"
    else:
        x, label = crossing, f"{wanted} {verb} up to {crossing:,} tokens"
        if crossing >= limit:  # the whole range: even the model's longest context fits
            label += ", the model's limit"
    notes = [(float(x), float(concurrency), label)]
    at_target = counts[context]  # low <= context <= top: always drawn
    target = f"{_sequences(at_target)} at {context:,} tokens"
    notes.append((float(context), float(at_target), target))
    gpu_name = settled.gpu.key if settled.gpu is not None else "GPU"
    where = f"{settled.model.name} on {gpu_name}, {layout.label}"
    return Chart(
        f"{where}: sequences admitted by context length",
        "context length (tokens)",
        "sequences admitted",
        series,
        float(context),
        marker_label=f"target: {context:,} tokens",
        annotations=tuple(notes),
        y_format=lambda y: f"{y:,.0f}",
    )


def _sequences(count: int) -> str:
    return f"{count:,} sequence" if count == 1 else f"{count:,} sequences"
