"""Every planning answer for one deployment at once: what ``kvlint solve`` prints."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from kvlint.arith.kv import kv_size
from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import valid_tps
from kvlint.deployment import Deployment
from kvlint.engines import facts
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.solve.capacity import LenAnswer
from kvlint.solve.capacity import SeqsAnswer
from kvlint.solve.capacity import max_model_len_at
from kvlint.solve.capacity import max_num_seqs_at
from kvlint.solve.capacity import model_max_len
from kvlint.solve.compare import EngineRow
from kvlint.solve.compare import engines_compare
from kvlint.solve.curve import kv_chart
from kvlint.solve.fleet import DEFAULT_MAX_GPUS
from kvlint.solve.fleet import DEFAULT_MAX_TP
from kvlint.solve.fleet import GpuPlan
from kvlint.solve.fleet import min_gpus
from kvlint.solve.levers import Lever
from kvlint.solve.levers import levers
from kvlint.solve.plot import Chart
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import default_estimator
from kvlint.solve.variants import value
from kvlint.solve.variants import vary


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


def first_principles(dep: Deployment, spec: ModelSpec, context: int) -> tuple[int, int] | None:
    """(bytes per token, bytes per sequence of ``context``) for the whole model at the
    deployment's cache dtype: the seeds' hand arithmetic, no engine, no parallelism."""
    name = str(value(dep.kv_cache_dtype) or "auto").lower()
    if name.startswith("fp8") or name.endswith("_per_token_head"):
        name = "fp8"
    elif name.startswith("nvfp4"):
        name = "nvfp4"
    elif name == "fp8_e4m3fn":
        name = "fp8"
    try:
        kv = kv_size(spec, name)
    except ValueError:
        return None
    return kv.per_token_bytes, kv.per_sequence_bytes(context)


def _replication_note(dep: Deployment, spec: ModelSpec, per_token: int | None) -> str | None:
    """Say where tensor parallelism stops shrinking the cache: past the KV heads each GPU holds
    a replica of one head (vllm/config/model.py get_num_kv_heads: max(1, kv_heads // tp))."""
    kv = spec.num_key_value_heads
    uniform = all(layer.kind is CacheKind.FULL and layer.kv_heads == kv for layer in spec.layers)
    if per_token is None or kv < 1 or not uniform:  # hybrids and MLA: no single figure
        return None
    beyond = [tp for tp in valid_tps(spec, facts(dep.engine.value).parallel, 64) if tp > kv]
    if not beyond:
        return None
    from kvlint.units import format_binary

    per_gpu = format_binary(per_token // kv)
    return (
        f"TP {beyond[0]} and beyond replicate the {kv} KV heads: a token costs {per_gpu} per "
        f"GPU there as at TP {kv}; pipeline stages, not more TP, split the cache further"
    )


def _own_layout(dep: Deployment) -> Layout | None:
    """The layout a deployment file runs: what it sets, else the engine's TP 1 (a file that
    asks for 2 GPUs but sets no TP still runs on one). None for a bare model on the command
    line, which has no layout of its own."""
    tp, pp = value(dep.tensor_parallel_size), value(dep.pipeline_parallel_size)
    if tp is None and pp is None and dep.carrier == "cli":
        return None
    return Layout(int(tp or 1), int(pp or 1))


def solve(
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec,
    *,
    label: str,
    context: int | None = None,
    concurrency: int | None = None,
    layout: Layout | None = None,
    max_gpus: int = DEFAULT_MAX_GPUS,
    max_tp: int | None = DEFAULT_MAX_TP,
    any_layout: bool = False,
    replicas: bool = True,
    with_levers: bool = True,
    with_engines: bool = True,
    estimator: Estimator | None = None,
) -> Plan:
    """Answer the planning questions for ``dep``. ``context`` defaults to the deployment's
    ``max_model_len`` (then its plan's claimed context, then the model's maximum);
    ``concurrency`` to the plan's claimed concurrency, then ``max_num_seqs`` as written, then 1.
    """
    estimate = estimator or default_estimator()
    notes: list[str] = []
    limit = model_max_len(dep, spec, gpu, estimate)
    if context is None:
        context = value(dep.max_model_len) or value(dep.claims.context) or limit
    if concurrency is None:
        written = dep.max_num_seqs if dep.max_num_seqs and not dep.max_num_seqs.default else None
        concurrency = value(dep.claims.concurrency) or value(written) or 1
    assert context is not None and concurrency is not None
    if context > limit:
        notes.append(
            f"{context:,} tokens is beyond the model's {limit:,}: the engine refuses it "
            "without an override (VLLM_ALLOW_LONG_MAX_MODEL_LEN)"
        )

    gpus = min_gpus(
        dep,
        spec,
        gpu,
        context=context,
        concurrency=concurrency,
        max_gpus=max_gpus,
        max_tp=max_tp,
        any_layout=any_layout,
        replicas=replicas,
        estimator=estimate,
    )
    if layout is not None:
        reason = "as asked"
    elif (own := _own_layout(dep)) is not None:
        layout, reason = own, "the deployment's own"
    else:
        one = min_gpus(
            dep,
            spec,
            gpu,
            context=context,
            concurrency=1,
            max_gpus=max_gpus,
            max_tp=max_tp,
            any_layout=any_layout,
            replicas=False,
            estimator=estimate,
        )
        if one.layout is not None:
            layout, reason = one.layout, "the smallest that holds the weights and one sequence"
        else:
            layout, reason = Layout(), f"nothing within {max_gpus} GPUs holds one sequence"
    placed = vary(
        dep,
        tensor_parallel_size=layout.tp,
        pipeline_parallel_size=layout.pp,
        gpu_count=layout.gpus_per_replica,
    )
    seqs = max_num_seqs_at(placed, spec, gpu, max_model_len=context, estimator=estimate)
    length = max_model_len_at(
        placed, spec, gpu, concurrency=concurrency, limit=limit, estimator=estimate
    )
    lever_rows = (
        levers(
            placed,
            spec,
            gpu,
            context=context,
            concurrency=concurrency,
            layout=layout,
            max_gpus=max_gpus,
            max_tp=max_tp,
            any_layout=any_layout,
            estimator=estimate,
        )
        if with_levers
        else []
    )
    engine_rows = (
        engines_compare(placed, spec, gpu, context=context, layout=layout, estimator=estimate)
        if with_engines
        else []
    )
    chart = kv_chart(
        placed,
        spec,
        gpu,
        layout=layout,
        context=context,
        concurrency=concurrency,
        limit=limit,
        estimator=estimate,
    )
    fp = first_principles(dep, spec, context)
    replication = _replication_note(dep, spec, fp[0] if fp else None)
    if replication:
        notes.append(replication)
    return Plan(
        label=label,
        spec=spec,
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
