"""``kvlint size MODEL``: what a model's KV cache costs, per token and per sequence, exactly.

MODEL is a Hub id (the built-in catalog answers offline), a ``config.json``, a model directory
or a ``.gguf`` file. The text output is a table in the seeds' style: the layer kinds, bytes per
token of the growing layers, one sequence at 8,000 / 32,000 / 128,000 tokens (decimal, as the
seeds quote them) and at ``--context``, times ``--batch``, and beside it the figure the
cancelled formula (``head_dim = hidden_size / kv_heads``) gives, with the ratio.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
from typing import TYPE_CHECKING
from typing import Any

from kvlint import codes
from kvlint import reading
from kvlint.commands.arguments import human_count
from kvlint.errors import KvlintError
from kvlint.report.size_text import print_deployment
from kvlint.report.size_text import print_model
from kvlint.report.size_text import print_problem

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.model.spec import ModelSpec

# The contexts the seeds quote per sequence (decimal thousands: "2.62 GB at 8K" is 8,000 tokens).
REFERENCE_CONTEXTS = (8_000, 32_000, 128_000)
DEFAULT_CONTEXT = 8_192  # when the config states no maximum length


def _batch(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of sequences, got {text!r}"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"--batch must be at least 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        metavar="MODEL",
        help="a Hub id (e.g. meta-llama/Llama-3.1-70B-Instruct), a config.json, a model "
        "directory, a .gguf file, or a deployment file",
    )
    parser.add_argument(
        "--context",
        type=human_count,
        metavar="N",
        help="tokens per sequence: 8192, 32k (32,000), 128K (131,072), 1M (1,048,576) "
        "(default: the model's maximum length)",
    )
    parser.add_argument(
        "--kv-cache-dtype",
        default="auto",
        metavar="DTYPE",
        help="auto (the model dtype), bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, int8, "
        "q8_0, q4_0, ... (default: auto)",
    )
    parser.add_argument(
        "--batch",
        type=_batch,
        metavar="N",
        help="sequences (default 1; for a deployment file, its max_num_seqs)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--offline", action="store_true", help="never download a model's config.json"
    )
    parser.add_argument(
        "--gpu",
        metavar="NAME",
        help="for a deployment file: the GPU of deployments that name none (as check's --gpu)",
    )
    parser.add_argument(
        "--engine-version",
        metavar="V",
        help="for a deployment file: the engine version when it gives none (or ENGINE=V)",
    )
    parser.add_argument(
        "--reserved-memory",
        metavar="SIZE",
        help="for a deployment file: memory of each GPU other residents hold (`16 GB`) when "
        "it states none",
    )


def run(args: argparse.Namespace) -> int:
    target = pathlib.Path(args.model)
    if _is_deployment_file(target):
        return _run_deployment_file(args, target)
    from kvlint.model.resolve import resolve_model

    resolved = resolve_model(args.model, offline=args.offline)
    report = model_report(
        resolved.spec,
        context=args.context,
        cache_dtype=args.kv_cache_dtype,
        batch=args.batch or 1,
        resolved_from=resolved.origin,
        detail=resolved.detail,
    )
    report = {"requested": args.model, **report}
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_model(report)
    return 0


def model_report(
    spec: ModelSpec,
    *,
    context: int | None,
    cache_dtype: str = "auto",
    v_dtype: str | None = None,
    batch: int = 1,
    resolved_from: str = "",
    detail: str = "",
    context_from: str = "--context",
) -> dict[str, Any]:
    """The JSON object ``kvlint size`` prints: integers in bytes, contexts in tokens.

    Without ``context`` the model's maximum length is used (``context_from`` says which).
    """
    from kvlint.arith.kv import kv_size

    try:
        kv = kv_size(spec, cache_dtype, v_dtype)
    except ValueError as exc:
        raise KvlintError(f"--kv-cache-dtype: {exc}") from None
    ctx = context or spec.max_position_embeddings or DEFAULT_CONTEXT
    per_token = kv.per_token_bytes
    cancelled = kv.cancelled_per_token_bytes
    per_sequence = kv.per_sequence_bytes(ctx)
    layers = [_layer_group(kind, count, spec) for kind, count in spec.layer_counts().items()]
    return {
        "model": spec.name,
        "resolved_from": resolved_from,
        "detail": detail,
        "source": spec.source,
        "model_type": spec.model_type,
        "attention": spec.attention_kind,
        "dtype": spec.dtype,
        "kv_cache_dtype": kv.types.label,
        "quantization": spec.quantization.method if spec.quantization else None,
        "max_position_embeddings": spec.max_position_embeddings,
        "context": ctx,
        "context_default": context is None,
        "context_from": context_from if context is not None else "model maximum",
        "batch": batch,
        "num_layers": spec.num_layers,
        "layers": spec.layer_counts(),
        "layer_groups": layers,
        "per_token_bytes": per_token,
        "bounded_bytes": kv.bounded_bytes(ctx),
        "state_bytes": kv.state_bytes,
        "per_sequence_bytes": per_sequence,
        "total_bytes": per_sequence * batch,
        "per_sequence_at": {str(n): kv.per_sequence_bytes(n) for n in REFERENCE_CONTEXTS},
        "cancelled_per_token_bytes": cancelled,
        "cancelled_per_sequence_bytes": cancelled * ctx,
        "ratio": round(cancelled / per_token, 2) if per_token else None,
        "notes": list(spec.notes),
    }


def _layer_group(kind: str, count: int, spec: ModelSpec) -> dict[str, Any]:
    layer = next(layer for layer in spec.layers if layer.kind.value == kind)
    group: dict[str, Any] = {"kind": kind, "count": count}
    if layer.kv_heads:
        group["kv_heads"] = layer.kv_heads
        group["head_dim_k"] = layer.head_dim_k
        group["head_dim_v"] = layer.head_dim_v
    if layer.window:
        group["window"] = layer.window
    if layer.state_elements:
        group["state_elements"] = layer.state_elements
    return group


# --- deployment files -------------------------------------------------------------------


def _is_deployment_file(path: pathlib.Path) -> bool:
    """A YAML file, or a JSON file that is not a model config, on disk."""
    try:
        if not path.is_file():
            return False
    except OSError:
        return False
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return True
    if suffix != ".json":
        return False
    try:
        data = json.loads(reading.read_utf8(path, reading.DEPLOYMENT))
    except (OSError, ValueError, RecursionError):
        return False  # resolve_model reports the unreadable config with its position
    return isinstance(data, dict) and not any(
        key in data for key in ("model_type", "architectures", "text_config", "num_hidden_layers")
    )


# Deployment fields reported as "the settings used", in this order.
_SETTING_FIELDS = (
    "engine_version",
    "model",
    "kv_cache_dtype",
    "kv_cache_dtype_v",
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "memory_fraction",
    "kv_cache_memory_bytes",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "gpu",
    "gpu_count",
    "block_size",
    "quantization",
    "dtype",
)


def _run_deployment_file(args: argparse.Namespace, path: pathlib.Path) -> int:
    """Every deployment in ``path``, each at its own settings, with the engine's accounting."""
    from kvlint.config import configured_facts
    from kvlint.config import configured_reserved
    from kvlint.deploy.load import load_path
    from kvlint.finding import Severity
    from kvlint.linter import with_configured_facts

    loaded = load_path(path, display=args.model)
    # The GPU and versions the file's config gives, as `kvlint check` fills them in.
    gpu, versions = configured_facts(path, gpu=args.gpu, engine_version=args.engine_version)
    reserved = configured_reserved(path, args.reserved_memory)
    problems = [
        {
            "code": problem.code,
            "severity": str(problem.severity),
            "path": problem.span.path,
            "line": problem.span.line,
            "column": problem.span.column,
            "message": problem.message,
        }
        for problem in loaded.problems
    ]
    failed = any(problem.severity is Severity.ERROR for problem in loaded.problems)
    reports: list[dict[str, Any]] = []
    for dep in loaded.deployments:
        dep = with_configured_facts(dep, gpu, versions, reserved_memory=reserved)
        report, error = _deployment_report(args, dep, path.parent)
        if error is not None:
            failed = True
            problems.append(error)
        reports.append(report)
    if not loaded.deployments:
        for problem in problems:
            print_problem(problem)
        raise KvlintError("no deployment found in the file: nothing to size", path=args.model)
    if args.format == "json":
        out = {"path": loaded.path, "deployments": reports, "problems": problems}
        json.dump(out, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        for report in reports:
            print_deployment(report)
    for problem in problems:
        print_problem(problem)
    return 2 if failed else 0


def _deployment_report(
    args: argparse.Namespace, dep: Deployment, base_dir: pathlib.Path
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One deployment's report, and the problem when its model cannot be resolved."""
    from kvlint.engines.sizer import size as size_deployment
    from kvlint.model.resolve import resolve_model

    head: dict[str, Any] = {
        "path": dep.path,
        "line": dep.span.line,
        "name": dep.name,
        "carrier": dep.carrier,
        "engine_name": dep.engine.value,
        "settings": _settings(dep),
    }
    if dep.model is None:
        return head, None
    try:
        resolved = resolve_model(str(dep.model.value), offline=args.offline, base_dir=base_dir)
    except KvlintError as exc:
        from kvlint.errors import ModelNotResolved

        span = dep.model.span
        problem = {
            "code": codes.UNKNOWN_MODEL,
            # as `check` reports it; `size` still exits 2, having no figures for the deployment
            "severity": "warning" if isinstance(exc, ModelNotResolved) else "error",
            "path": span.path,
            "line": span.line,
            "column": span.column,
            "message": exc.message,
        }
        return {**head, "error": exc.message}, problem
    if dep.speculative_model is not None:
        from kvlint.model.resolve import draft_spec

        named = str(dep.speculative_model.value)
        found = draft_spec(named, offline=args.offline, base_dir=base_dir)
        dep = dataclasses.replace(dep, draft_spec=found)
    sizing = size_deployment(dep, resolved.spec)
    engine = sizing.engine
    context, context_from = args.context, "--context"
    slots = sizing.facts is not None and sizing.facts.context_spans_slots
    if context is None and slots and engine is not None and engine.max_model_len:
        # llama.cpp's -c is every slot's cells: one sequence is a slot's share, as the engine
        # allocates it (n_ctx_seq), and the slots are the sequences.
        context = engine.max_model_len
        share = engine.kv_cache_tokens or context
        context_from = "max_model_len, every slot" if share == context else "one slot"
    if context is None and dep.max_model_len is not None:
        context, context_from = int(dep.max_model_len.value), "max_model_len"
    if context is None and engine is not None:
        context, context_from = engine.max_model_len, "engine default"
    batch = args.batch
    if batch is None and dep.max_num_seqs is not None and not dep.max_num_seqs.default:
        batch = int(dep.max_num_seqs.value)  # the concurrency the file asks for
    cache_dtype, v_dtype = args.kv_cache_dtype, None
    if cache_dtype == "auto" and sizing.kv is not None:
        cache_dtype = sizing.kv.types.k.name  # the deployment's own cache dtype(s)
        if sizing.kv.types.v != sizing.kv.types.k:
            v_dtype = sizing.kv.types.v.name
    report = model_report(
        resolved.spec,
        context=context,
        cache_dtype=cache_dtype,
        v_dtype=v_dtype,
        batch=batch or 1,
        resolved_from=resolved.origin,
        detail=resolved.detail,
        context_from=context_from,
    )
    report.update(head)
    report["engine"] = dataclasses.asdict(engine) if engine is not None else None
    report["missing"] = list(sizing.missing)
    return report, None


def _settings(dep: Deployment) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in _SETTING_FIELDS:
        value = getattr(dep, name, None)
        if value is None:
            continue
        out[name] = {
            "value": value.value,
            "line": value.span.line,
            "column": value.span.column,
            "default": value.default,
        }
    return out
