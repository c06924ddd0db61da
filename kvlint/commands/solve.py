"""``kvlint solve``: GPUs, max_model_len, max_num_seqs and the levers, for a model or a file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple

from kvlint import reading
from kvlint.commands.arguments import count_at_most
from kvlint.commands.arguments import human_count
from kvlint.errors import KvlintError

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import Settled

# The engines a plan is made for (--engine) and compared under, in the order its table lists them.
ENGINES = ("vllm", "sglang", "tgi", "llamacpp", "trtllm", "mlx")

# Where a setting given on the command line is cited.
SOLVER_PATH = "<kvlint solve>"


# The bounds a file's settings have (a larger one is a KV502 there): the search loops per GPU
# count and per stage.
GPU_COUNT = count_at_most(4096, "a GPU count")
TP_SIZE = count_at_most(16_384, "a tensor parallel size")
PP_SIZE = count_at_most(1_024, "a pipeline parallel size")


def _fraction(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction such as 0.9, got {text!r}") from None
    if not 0 < number <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1], got {text!r}")
    return number


def _size(text: str) -> int:
    from kvlint.units import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="MODEL_OR_FILE",
        help="a model (catalog id, hub id, config.json or directory) or a deployment file",
    )
    parser.add_argument("--gpu", help="GPU type, e.g. H100-80GB (overrides the file's)")
    parser.add_argument("--engine", choices=ENGINES, help="serving engine (default: vllm)")
    parser.add_argument("--engine-version", help="engine version to size as, e.g. 0.11.0")
    parser.add_argument(
        "--context", type=human_count, help="target context per sequence: 128k = 128,000"
    )
    parser.add_argument(
        "--max-model-len",
        type=human_count,
        help="the engine's max_model_len; the same as --context when that is not given",
    )
    parser.add_argument("--concurrency", type=human_count, help="sequences served at once")
    parser.add_argument("--kv-cache-dtype", help="cache dtype: auto, fp8, q8_0, ...")
    parser.add_argument("--quantization", help="weight quantisation: fp8, awq, ...")
    parser.add_argument(
        "--gpu-memory-utilization",
        type=_fraction,
        help="memory fraction (vLLM gpu_memory_utilization, SGLang mem_fraction_static, TGI "
        "cuda_memory_fraction)",
    )
    parser.add_argument(
        "--reserved-memory",
        type=_size,
        metavar="SIZE",
        help="memory of each GPU other residents hold: 16 GB (overrides the file's)",
    )
    parser.add_argument("--tp", type=TP_SIZE, help="tensor parallel size to answer for")
    parser.add_argument("--pp", type=PP_SIZE, help="pipeline parallel size to answer for")
    parser.add_argument(
        "--max-gpus", type=GPU_COUNT, default=64, help="search up to this many GPUs (64)"
    )
    parser.add_argument(
        "--max-tp",
        type=GPU_COUNT,
        default=8,
        help="largest TP to consider: the GPUs of one node (8)",
    )
    parser.add_argument(
        "--any-layout",
        action="store_true",
        help="try every TP x PP the engine accepts, not only TP within a node and PP across",
    )
    parser.add_argument(
        "--no-replicas",
        action="store_true",
        help="one replica only: no data-parallel copies in the GPU count",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--plot", metavar="FILE", help="write the chart as SVG to FILE")
    parser.add_argument("--offline", action="store_true", help="never use the network")


def _is_deployment_file(target: str) -> bool:
    path = Path(target)
    if not path.is_file():
        return False
    if path.suffix.lower() in (".yaml", ".yml"):
        return True
    if path.suffix.lower() == ".json" and path.name != "config.json":
        try:
            data = json.loads(reading.read_utf8(path, reading.DEPLOYMENT))
        except (OSError, ValueError, RecursionError):  # load_path or the resolver says why
            return False
        return isinstance(data, dict) and not ({"model_type", "architectures"} & set(data))
    return False


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The engine settings the command line states (the rest stay the deployment's)."""
    max_len = args.max_model_len or args.context
    stated = {
        "engine_version": args.engine_version,
        "max_model_len": max_len,
        "kv_cache_dtype": args.kv_cache_dtype,
        "quantization": args.quantization,
        "memory_fraction": args.gpu_memory_utilization,
        "reserved_memory": args.reserved_memory,
    }
    return {name: value for name, value in stated.items() if value is not None}


class _Job(NamedTuple):
    """One deployment to solve: its label, its model (or why it has none) and, for a file, the
    Deployment read from it (None for a model named on the command line)."""

    label: str
    spec: ModelSpec | KvlintError
    dep: Deployment | None = None


def _jobs(args: argparse.Namespace) -> list[_Job]:
    """The deployments to solve: the model named, or each deployment of the file."""
    from kvlint.model.resolve import resolve_model

    if not _is_deployment_file(args.target):
        resolved = resolve_model(args.target, offline=args.offline)
        return [_Job(resolved.spec.name, resolved.spec)]

    from kvlint.deploy.load import load_path

    path = Path(args.target)
    result = load_path(path, display=args.target)
    for problem in result.problems:
        if problem.code.startswith("KV9") and str(problem.severity) == "error":
            raise KvlintError(problem.message, problem.span)
    if not result.deployments:
        raise KvlintError("no deployment found in the file", path=args.target)
    jobs: list[_Job] = []
    for dep in result.deployments:
        label = f"{args.target}: {dep.name}"
        if dep.model is None:
            jobs.append(_Job(label, KvlintError(f"{label}: the deployment names no model"), dep))
            continue
        try:
            spec = resolve_model(dep.model.value, offline=args.offline, base_dir=path.parent).spec
        except KvlintError as exc:
            jobs.append(_Job(label, KvlintError(f"{label}: {exc}"), dep))
            continue
        if dep.speculative_model is not None:
            import dataclasses

            from kvlint.model.resolve import draft_spec

            named = str(dep.speculative_model.value)
            found = draft_spec(named, offline=args.offline, base_dir=path.parent)
            dep = dataclasses.replace(dep, draft_spec=found)
        jobs.append(_Job(label, spec, dep))
    return jobs


def _gpu(args: argparse.Namespace, job: _Job) -> GpuSpec:
    """The GPU to solve on: ``--gpu``, else the one the file names."""
    from kvlint.gpus import known_gpu_names
    from kvlint.gpus import lookup_gpu

    name = args.gpu
    if name is None and job.dep is not None and job.dep.gpu is not None:
        name = job.dep.gpu.value
    if name is None:
        raise KvlintError(f"{job.label}: no GPU named; pass --gpu (e.g. --gpu H100-80GB)")
    gpu = lookup_gpu(str(name))
    if gpu is None:
        known = ", ".join(known_gpu_names()[:12])
        raise KvlintError(f"unknown GPU {name!r}; known names include {known}, ...")
    if gpu.out_of_scope:
        raise KvlintError(f"{gpu.display} is {gpu.kind_phrase}: kvlint sizes GPU memory only")
    return gpu


def _settled(args: argparse.Namespace, job: _Job, spec: ModelSpec, gpu: GpuSpec) -> Settled:
    """What the engine will run with: the file's deployment settled and revised with the
    command line's settings (and ``--engine``), or the command line's own request."""
    from kvlint.deployment import Sourced
    from kvlint.engines import home
    from kvlint.engines import revise
    from kvlint.engines import settle
    from kvlint.finding import Span
    from kvlint.settled import Request

    overrides = _overrides(args)
    if job.dep is None:
        # A model named on the command line: the request is the options given, each cited at
        # the command line (a fix or a finding quoting it has nowhere else to point).
        here = Span(SOLVER_PATH, 1, 1)
        stated: dict[str, Any] = {
            name: Sourced(value, here._replace(key=name), raw=str(value))
            for name, value in overrides.items()
        }
        from kvlint.engines import facts

        # vLLM unless the GPU cannot run it (Apple silicon): the first engine that runs there.
        runs = [name for name in ENGINES if gpu.vendor in facts(name).vendors] or ["vllm"]
        engine = args.engine or ("vllm" if "vllm" in runs else runs[0])
        return home(engine).resolve(Request(engine=engine, span=here, **stated), spec, gpu)
    settled = settle(job.dep, spec, gpu)
    if settled is None:
        raise KvlintError(f"{job.label}: kvlint does not size {job.dep.engine.value}")
    if not overrides and args.engine is None:
        return settled
    if args.engine is not None and args.engine != settled.engine and args.engine_version is None:
        # The release a file names is its own engine's: SGLang's 0.5.2 is no vLLM release.
        overrides["engine_version"] = None
    return revise(settled, engine=args.engine, **overrides)


def _known_cache_dtype(name: str, spec: ModelSpec) -> None:
    """KvlintError for a ``--kv-cache-dtype`` no engine spells (as ``kvlint size`` says it),
    before the solver sizes the cache with it."""
    from kvlint.arith.dtypes import UnknownCacheDtype
    from kvlint.arith.dtypes import cache_types

    try:
        cache_types(name, spec.dtype, None)
    except UnknownCacheDtype as exc:
        raise KvlintError(f"--kv-cache-dtype: {exc}") from None


def _plan(args: argparse.Namespace, job: _Job) -> Any:
    """Solve one deployment; KvlintError when its model, its GPU or the asked layout will not
    do."""
    from kvlint.arith.parallel import Layout
    from kvlint.arith.parallel import pp_problem
    from kvlint.arith.parallel import tp_problem
    from kvlint.solve.plan import solve

    if isinstance(job.spec, KvlintError):
        raise job.spec
    from kvlint.engines import facts

    gpu = _gpu(args, job)
    if args.kv_cache_dtype is not None:
        _known_cache_dtype(args.kv_cache_dtype, job.spec)
    settled = _settled(args, job, job.spec, gpu)
    layout = Layout(args.tp or 1, args.pp or 1) if (args.tp or args.pp) else None
    if layout is not None:
        rules = settled.facts.parallel
        spec = settled.model
        problem = tp_problem(spec, rules, layout.tp) or pp_problem(spec, rules, layout.pp)
        if problem:
            raise KvlintError(f"{job.label}: {settled.engine} refuses {layout.label}: {problem}")
    return solve(
        settled,
        label=job.label,
        claims=job.dep.claims if job.dep is not None else None,
        from_file=job.dep is not None,
        context=args.context or args.max_model_len,
        concurrency=args.concurrency,
        layout=layout,
        max_gpus=args.max_gpus,
        max_tp=args.max_tp,
        any_layout=args.any_layout,
        replicas=not args.no_replicas,
        # The engines that run on the GPU (vLLM, SGLang and TGI have no Metal backend).
        engines=tuple(name for name in ENGINES if gpu.vendor in facts(name).vendors),
    )


def run(args: argparse.Namespace) -> int:
    plans = []
    skipped: list[KvlintError] = []
    for job in _jobs(args):
        try:
            plans.append(_plan(args, job))
        except KvlintError as exc:
            skipped.append(exc)
    if not plans:
        raise skipped[0]
    for error in skipped:  # a file with several deployments: solve what can be solved
        print(f"kvlint: skipped {error}", file=sys.stderr)
    if args.plot and plans[0].chart is not None:
        from kvlint.solve.plot import render_svg
        from kvlint.writing import open_report

        # Never through a link in the tree, never over the deployment file read (kvlint.writing).
        checked = [Path(args.target)] if _is_deployment_file(args.target) else []
        handle = open_report(args.plot, inputs=[args.target], checked=checked, what="the chart")
        try:
            with handle:
                handle.write(render_svg(plans[0].chart))
        except OSError as exc:
            raise KvlintError(f"cannot write the chart: {exc.strerror}", path=args.plot) from None
    if args.format == "json":
        from kvlint.solve.render import plan_json

        payload = [plan_json(plan) for plan in plans]
        json.dump(payload[0] if len(payload) == 1 else payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console

    from kvlint.solve.render import render_plan

    console = Console(width=None if sys.stdout.isatty() else 120, highlight=False)
    for plan in plans:
        for renderable in render_plan(plan):
            console.print(renderable)
        console.print()
    return 0
