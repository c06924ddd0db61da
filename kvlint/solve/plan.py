"""Every planning answer for one deployment at once: what ``kvlint solve`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from kvlint.arith.kv import kv_size
from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import valid_tps
from kvlint.deployment import Claims
from kvlint.engines import account
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.settled import Settled
from kvlint.solve.capacity import LenAnswer
from kvlint.solve.capacity import SeqsAnswer
from kvlint.solve.capacity import max_model_len_at
from kvlint.solve.capacity import max_num_seqs_at
from kvlint.solve.chart import Chart
from kvlint.solve.compare import EngineRow
from kvlint.solve.compare import engines_compare
from kvlint.solve.curve import kv_chart
from kvlint.solve.fleet import DEFAULT_MAX_GPUS
from kvlint.solve.fleet import DEFAULT_MAX_TP
from kvlint.solve.fleet import GpuPlan
from kvlint.solve.fleet import min_gpus
from kvlint.solve.levers import Lever
from kvlint.solve.levers import levers
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import placed
from kvlint.solve.variants import value


@dataclass(frozen=True)
class Plan:
    """The answers for one deployment. ``layout`` is the replica the per-layout answers are
    for (the deployment's own, the one asked for, or the smallest that holds one sequence)."""

    label: str
    spec: ModelSpec
    gpu: GpuSpec
    context: int
    concurrency: int
    model_limit: int  # the model's own maximum context as the engine derives it
    layout: Layout
    layout_reason: str
    base: EngineEstimate  # the deployment on ``layout`` at ``context``
    seqs: SeqsAnswer  # max_num_seqs at ``context`` on ``layout``
    length: LenAnswer  # max_model_len at ``concurrency`` on ``layout``
    gpus: GpuPlan  # GPUs for ``concurrency`` x ``context``
    levers: list[Lever] = field(default_factory=list)
    engines: list[EngineRow] = field(default_factory=list)
    chart: Chart | None = None
    notes: tuple[str, ...] = ()
    kv_per_token: int | None = None  # first principles, whole model, growing layers
    kv_per_sequence: int | None = None  # first principles, whole model, at ``context``


def first_principles(settled: Settled, context: int) -> tuple[int, int] | None:
    """(bytes per token, bytes per sequence of ``context``) for the whole model at the
    deployment's cache dtype: the seeds' hand arithmetic, no engine, no parallelism."""
    name = str(value(settled.request.kv_cache_dtype) or "auto").lower()
    if name.startswith("fp8") or name.endswith("_per_token_head"):
        name = "fp8"
    elif name.startswith("nvfp4"):
        name = "nvfp4"
    elif name == "fp8_e4m3fn":
        name = "fp8"
    try:
        kv = kv_size(settled.model, name)
    except ValueError:
        return None
    return kv.per_token_bytes, kv.per_sequence_bytes(context)


def _replication_note(settled: Settled, per_token: int | None) -> str | None:
    """Say where tensor parallelism stops shrinking the cache: past the KV heads each GPU holds
    a replica of one head (vllm/config/model.py get_num_kv_heads: max(1, kv_heads // tp))."""
    spec = settled.model
    kv = spec.num_key_value_heads
    uniform = all(layer.kind is CacheKind.FULL and layer.kv_heads == kv for layer in spec.layers)
    if per_token is None or kv < 1 or not uniform:  # hybrids and MLA: no single figure
        return None
    beyond = [tp for tp in valid_tps(spec, settled.facts.parallel, 64) if tp > kv]
    if not beyond:
        return None
    from kvlint.units import format_binary

    per_gpu = format_binary(per_token // kv)
    return (
        f"TP {beyond[0]} and beyond replicate the {kv} KV heads: a token costs {per_gpu} per "
        f"GPU there as at TP {kv}; pipeline stages, not more TP, split the cache further"
    )


def _beyond(settled: Settled) -> str:
    """What the engine does with a context past the model's (KV402's three cases)."""
    switch = settled.facts.long_context_switch
    if switch is None:
        return "positions past it were never trained and degrade output"
    if settled.allow_long is not None and settled.allow_long.value:
        return f"{switch} lets the engine start, but RoPE positions past it give NaN"
    return f"the engine refuses it without an override ({switch})"


def _own_layout(settled: Settled, from_file: bool) -> Layout | None:
    """The layout a deployment file runs: the TP and PP its engine settles on (what the file
    sets, else the engine's default: TP 1, or TGI's shards over the pod's GPUs). None for a
    bare model on the command line, which has no layout of its own."""
    request = settled.request
    stated = request.tensor_parallel_size is not None or request.pipeline_parallel_size is not None
    if not (from_file or stated):
        return None
    return Layout(settled.tensor_parallel_size.value, settled.pipeline_parallel_size.value)


def solve(
    settled: Settled,
    *,
    label: str,
    claims: Claims | None = None,
    from_file: bool = False,
    context: int | None = None,
    concurrency: int | None = None,
    layout: Layout | None = None,
    max_gpus: int = DEFAULT_MAX_GPUS,
    max_tp: int | None = DEFAULT_MAX_TP,
    any_layout: bool = False,
    replicas: bool = True,
    with_levers: bool = True,
    engines: Sequence[str] = (),
    estimator: Estimator = account,
) -> Plan:
    """Answer the planning questions for a settled deployment (on a GPU). What only its file
    knows comes beside it: ``label``, the plan's ``claims``, and ``from_file`` (a file runs a
    layout of its own; a model named on the command line does not). ``context`` defaults to
    the deployment's ``max_model_len`` (then its plan's claimed context, then the model's
    maximum); ``concurrency`` to the plan's claimed concurrency, then ``max_num_seqs`` as
    written, then 1. ``engines`` are compared side by side, in that order.
    """
    gpu = settled.gpu
    if gpu is None:
        raise ValueError("the solver sizes a deployment on a GPU: settle it with one")
    claims = claims or Claims()
    request = settled.request
    notes: list[str] = []
    limit = settled.derived_max_model_len
    if context is None:
        # The length the engine gives one sequence, when the files set one: llama.cpp's -c is
        # every slot's cells together, so one slot holds -c / -np of it.
        stated_length = estimator(settled).max_model_len if request.max_model_len else None
        context = stated_length or value(claims.context) or limit
    asked = None  # the chart's name for the concurrency line: "requested: N" unless set here
    if concurrency is None:
        stated = request.max_num_seqs
        written = stated if stated and not stated.default else None
        concurrency = value(claims.concurrency) or value(written) or 1
        if not value(claims.concurrency):
            spelling = settled.facts.spelling("max_num_seqs")
            asked = f"{spelling}: {concurrency:,}" if written else "one sequence (none requested)"
    assert context is not None and concurrency is not None
    if context > limit:
        notes.append(f"{context:,} tokens is beyond the model's {limit:,}: {_beyond(settled)}")
    gpus = min_gpus(
        settled,
        context=context,
        concurrency=concurrency,
        replicas=replicas,
        estimator=estimator,
        max_gpus=max_gpus,
        max_tp=max_tp,
        any_layout=any_layout,
    )
    if layout is not None:
        reason = "as asked"
    elif (own := _own_layout(settled, from_file)) is not None:
        layout, reason = own, "the deployment's own"
    else:
        one = min_gpus(
            settled,
            context=context,
            concurrency=1,
            replicas=False,
            estimator=estimator,
            max_gpus=max_gpus,
            max_tp=max_tp,
            any_layout=any_layout,
        )
        if one.layout is not None:
            layout, reason = one.layout, "the smallest that holds the weights and one sequence"
        else:
            layout, reason = Layout(), f"nothing within {max_gpus} GPUs holds one sequence"
    on_layout = placed(settled, layout)
    seqs = max_num_seqs_at(on_layout, max_model_len=context, estimator=estimator)
    length = max_model_len_at(on_layout, concurrency=concurrency, limit=limit, estimator=estimator)
    lever_rows = (
        levers(
            on_layout,
            context=context,
            concurrency=concurrency,
            layout=layout,
            estimator=estimator,
            max_gpus=max_gpus,
            max_tp=max_tp,
            any_layout=any_layout,
        )
        if with_levers
        else []
    )
    engine_rows = engines_compare(
        on_layout, context=context, layout=layout, engines=engines, estimator=estimator
    )
    chart = kv_chart(
        on_layout,
        layout=layout,
        context=context,
        concurrency=concurrency,
        limit=limit,
        estimator=estimator,
        longest=length.max_model_len,  # the crossing is the plan's own answer
        asked=asked,
    )
    fp = first_principles(settled, context)
    replication = _replication_note(settled, fp[0] if fp else None)
    if replication:
        notes.append(replication)
    return Plan(
        label=label,
        spec=settled.model,
        gpu=gpu,
        context=context,
        concurrency=concurrency,
        model_limit=limit,
        layout=layout,
        layout_reason=reason,
        base=seqs.estimate,
        seqs=seqs,
        length=length,
        gpus=gpus,
        levers=lever_rows,
        engines=engine_rows,
        chart=chart,
        notes=tuple(notes),
        kv_per_token=fp[0] if fp else None,
        kv_per_sequence=fp[1] if fp else None,
    )
