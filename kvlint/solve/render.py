"""A Plan as JSON (every number) or as rich tables with the terminal chart."""

from __future__ import annotations

import dataclasses
from typing import Any

from kvlint.arith.parallel import Layout
from kvlint.estimate import EngineEstimate
from kvlint.solve.fleet import GpuPlan
from kvlint.solve.fleet import ReplicaResult
from kvlint.solve.plan import Plan
from kvlint.units import format_bytes

# -- JSON -----------------------------------------------------------------------------------


def _estimate(est: EngineEstimate | None) -> dict[str, Any] | None:
    return None if est is None else dataclasses.asdict(est)


def _layout(layout: Layout | None) -> dict[str, int] | None:
    if layout is None:
        return None
    return {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "gpus": layout.gpus}


def _replica(result: ReplicaResult) -> dict[str, Any]:
    est = result.estimate
    return {
        "tp": result.layout.tp,
        "pp": result.layout.pp,
        "kv_heads_per_gpu": result.kv_heads_per_gpu,
        "bytes_per_token_per_gpu": est.bytes_per_token,
        "available_kv_bytes_per_gpu": est.available_kv_bytes,
        "admitted": result.admitted,
        "fits": est.fits,
    }


def _gpus(plan: GpuPlan) -> dict[str, Any]:
    return {
        "context": plan.context,
        "concurrency": plan.concurrency,
        "max_gpus": plan.max_gpus,
        "gpus": plan.gpus,
        "layout": _layout(plan.layout),
        "admitted": plan.admitted,
        "replica": None if plan.replica is None else _replica(plan.replica),
        "replicas_tried": [_replica(r) for r in plan.replicas],
    }


def plan_json(plan: Plan) -> dict[str, Any]:
    """Every number of the plan, JSON-ready."""
    return {
        "deployment": plan.label,
        "model": plan.spec.name,
        "gpu": {"name": plan.gpu.key, "total_bytes": plan.gpu.total_bytes},
        "engine": {"name": plan.base.engine, "version": plan.base.version},
        "target": {"context": plan.context, "concurrency": plan.concurrency},
        "model_max_len": plan.model_limit,
        "first_principles": {
            "per_token_bytes": plan.kv_per_token,
            "per_sequence_bytes": plan.kv_per_sequence,
            "target_bytes": None
            if plan.kv_per_sequence is None
            else plan.kv_per_sequence * plan.concurrency,
        },
        "layout": {**(_layout(plan.layout) or {}), "reason": plan.layout_reason},
        "max_num_seqs": {
            "max_model_len": plan.seqs.max_model_len,
            "value": plan.seqs.max_num_seqs,
            "estimate": _estimate(plan.seqs.estimate),
        },
        "max_model_len": {
            "concurrency": plan.length.concurrency,
            "value": plan.length.max_model_len,
            "limit": plan.length.limit,
            "at_limit": plan.length.at_limit,
        },
        "gpus": _gpus(plan.gpus),
        "levers": [
            {
                "group": lever.group,
                "setting": lever.label,
                "current": lever.current,
                "offered": lever.offered,
                "note": lever.note,
                "available_kv_bytes_per_gpu": lever.available_kv_bytes,
                "kv_cache_tokens": lever.kv_cache_tokens,
                "admitted": lever.admitted,
                "gpus": None if lever.plan is None else lever.plan.gpus,
                "layout": None if lever.plan is None else _layout(lever.plan.layout),
            }
            for lever in plan.levers
        ],
        "engines": [
            {
                "engine": row.engine,
                "version": row.version,
                "label": row.label,
                "layout": _layout(row.layout),
                "available_kv_bytes_per_gpu": row.estimate.available_kv_bytes
                if row.estimate
                else None,
                "kv_cache_tokens": row.estimate.kv_cache_tokens if row.estimate else None,
                "max_concurrency": row.estimate.max_concurrency if row.estimate else None,
                "first_principles_tokens": row.estimate.first_principles_tokens
                if row.estimate
                else None,
                "admitted": row.admitted,
                "hardware_tokens": row.hardware_tokens,
                "share_of_hardware": row.share,
                "note": row.note,
            }
            for row in plan.engines
        ],
        "chart": None
        if plan.chart is None
        else {
            "title": plan.chart.title,
            "series": [
                {"label": s.label, "points": [list(p) for p in s.points]} for s in plan.chart.series
            ],
            "marker": None
            if plan.chart.marker_x is None
            else {"x": plan.chart.marker_x, "label": plan.chart.marker_label},
            "annotations": [
                {"x": x, "y": y, "label": label} for x, y, label in plan.chart.annotations
            ],
        },
        "notes": list(plan.notes),
    }


# -- text -----------------------------------------------------------------------------------


def _bytes(n: int | None) -> str:
    return "-" if n is None else format_bytes(n)


def _pool(n: int | None) -> str:
    """A pool per GPU; at or below zero the weights and overheads leave no room at all."""
    if n is not None and n <= 0:
        return "no room"
    return _bytes(n)


def _int(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def _gpus_text(plan: GpuPlan) -> str:
    if plan.layout is None:
        return f"none within {plan.max_gpus} GPUs"
    return f"{plan.gpus} ({plan.layout.label})"


def render_plan(plan: Plan) -> list[Any]:
    """The renderables ``kvlint solve`` prints for one plan, in order."""
    from rich.table import Table
    from rich.text import Text

    from kvlint.solve.plot import render_text  # the text chart: only for this output

    est = plan.base
    out: list[Any] = []
    header = Text()
    if plan.label != plan.spec.name:
        header.append(f"{plan.label}\n", style="bold")
    header.append(
        f"{plan.spec.name} · {est.engine} {est.version} · {plan.gpu.key} · "
        f"target {plan.concurrency:,} x {plan.context:,} tokens"
    )
    out.append(header)

    answers = Table(title="Answers", title_justify="left", show_header=False, box=None)
    answers.add_column(style="dim")
    answers.add_column(justify="right", style="bold")
    if plan.kv_per_token is not None and plan.kv_per_sequence is not None:
        answers.add_row(
            "KV per token / per sequence / for the target (first principles, whole model)",
            f"{_bytes(plan.kv_per_token)} / {format_bytes(plan.kv_per_sequence)} / "
            f"{format_bytes(plan.kv_per_sequence * plan.concurrency)}",
        )
    answers.add_row(
        f"max_num_seqs at max_model_len {plan.context:,} on {plan.layout.label} "
        f"({plan.layout_reason})",
        _int(plan.seqs.max_num_seqs),
    )
    limit_note = " (the model's maximum)" if plan.length.at_limit else ""
    answers.add_row(
        f"max_model_len for {plan.concurrency:,} sequences on {plan.layout.label}",
        f"{plan.length.max_model_len:,}{limit_note}",
    )
    answers.add_row(
        f"GPUs for {plan.concurrency:,} x {plan.context:,} tokens on {plan.gpu.key}",
        _gpus_text(plan.gpus),
    )
    answers.add_row(
        f"KV pool per GPU on {plan.layout.label}",
        f"{_bytes(est.available_kv_bytes)} = {_int(est.kv_cache_tokens)} tokens",
    )
    out.append(answers)

    layouts = Table(title="Layouts (one replica)", title_justify="left")
    for name in ("TP", "PP", "KV heads/GPU", "KV/token/GPU", "pool/GPU", "admitted", "GPUs"):
        layouts.add_column(name, justify="right")
    winner = plan.gpus.replica.layout if plan.gpus.replica is not None else None
    for result in plan.gpus.replicas:
        # Pipeline shapes up to the winner's size: the ones just short of the target show why.
        limit = winner.gpus_per_replica if winner is not None else 0
        if result.layout.pp > 1 and result.layout.gpus_per_replica > limit:
            continue
        copies = -(-plan.concurrency // result.admitted) if result.admitted else None
        total = None if copies is None else copies * result.layout.gpus_per_replica
        style = "bold" if result.layout == winner else None
        layouts.add_row(
            str(result.layout.tp),
            str(result.layout.pp),
            str(result.kv_heads_per_gpu),
            _bytes(result.estimate.bytes_per_token),
            _pool(result.estimate.available_kv_bytes),
            _int(result.admitted),
            "-" if total is None else f"{total:,}",
            style=style,
        )
    out.append(layouts)

    if plan.levers:
        table = Table(
            title=f"Levers for {plan.concurrency:,} x {plan.context:,}", title_justify="left"
        )
        for name in (
            "lever",
            "setting",
            "pool/GPU",
            "tokens",
            f"admitted ({plan.layout.label})",
            "GPUs needed",
            "note",
        ):
            table.add_column(
                name, justify="left" if name in ("lever", "setting", "note") else "right"
            )
        for lever in plan.levers:
            mark = " *" if lever.current else ""
            if not lever.offered:
                table.add_row(
                    lever.group, lever.label, "-", "-", "-", "not offered", lever.note, style="dim"
                )
                continue
            table.add_row(
                lever.group,
                lever.label + mark,
                _pool(lever.available_kv_bytes),
                _int(lever.kv_cache_tokens),
                _int(lever.admitted),
                "-" if lever.plan is None else _gpus_text(lever.plan),
                lever.note,
            )
        out.append(table)

    if plan.engines:
        table = Table(
            title=f"Engines on {plan.layout.label} at {plan.context:,}", title_justify="left"
        )
        for name in (
            "engine",
            "pool/GPU",
            "tokens",
            "concurrency",
            "admitted",
            "first-principles pool",
            "share",
            "note",
        ):
            table.add_column(name, justify="left" if name in ("engine", "note") else "right")
        for row in plan.engines:
            e = row.estimate
            table.add_row(
                row.label,
                _pool(e.available_kv_bytes if e else None),
                _int(e.kv_cache_tokens if e else None),
                "-" if e is None or e.max_concurrency is None else f"{e.max_concurrency:.2f}x",
                _int(row.admitted),
                _int(row.hardware_tokens),
                "-" if row.share is None else f"{row.share:.0%}",
                row.note,
            )
        out.append(table)

    if plan.chart is not None:
        out.append(Text(render_text(plan.chart)))
    for note in plan.notes:
        out.append(Text(f"note: {note}", style="yellow"))
    return out
