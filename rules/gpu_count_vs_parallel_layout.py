"""KV306 gpu-count-vs-parallel-layout: the GPUs a workload requests against TP x PP x DP."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import NamedTuple

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Fix
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.settled import EngineFacts
from kvlint.sizing import Sizing

from . import _numbers as n

_FIELDS = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")
# A variable standing for several arguments (`${H2OGPT_VLLM_ARGS}`, `$EXTRA_OPTS`).
_ARGS_VARIABLE = re.compile(
    r"^\$[({]?[A-Za-z0-9_]*(ARGS|OPTS|OPTIONS|FLAGS|PARAMS|EXTRA)[A-Za-z0-9_]*[)}]?$"
)
# Deployment fields whose value, filled in at run time, decides the layout or the GPU count.
_RUNTIME = frozenset(
    {
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "data_parallel_size_local",
        "nnodes",
        "gpu_count",
    }
)


class Layout(NamedTuple):
    """The parallel sizes one engine runs with, as the files set them or the engine defaults."""

    tp: Sourced[int] | None
    pp: Sourced[int] | None
    dp: Sourced[int] | None  # the DP ranks that take GPUs of their own (None: 1, or inside TP)


def _layout(dep: Deployment, sizing: Sizing) -> Layout:
    """The engine's parallel sizes as it settles them (defaults marked ``default=True``); the
    Deployment's own when no model could be settled on (the check needs none)."""
    settled = sizing.settled
    tp: Sourced[int] | None
    pp: Sourced[int] | None
    dp: Sourced[int] | None
    if settled is not None:
        tp, pp, dp = (
            settled.tensor_parallel_size,
            settled.pipeline_parallel_size,
            settled.data_parallel_size,
        )
    else:
        tp, pp, dp = dep.tensor_parallel_size, dep.pipeline_parallel_size, dep.data_parallel_size
    attention = dep.enable_dp_attention
    if attention is not None and attention.value:
        dp = None  # SGLang's DP attention runs its DP ranks inside the TP group's GPUs
    return Layout(tp, pp, dp)


def _names(facts: EngineFacts) -> tuple[str, str, str]:
    """The engine's own names of its parallel sizes ("" for a split it does not make)."""
    tensor, pipeline, data = _FIELDS
    return (
        facts.spelling(tensor),
        facts.spelling(pipeline) if facts.parallel.pipeline else "",
        facts.spelling(data) if facts.parallel.data else "",
    )


class GpuCountVsParallelLayout(Rule):
    """## What it does
    Checks the GPUs a workload requests against its engine's parallel layout. The layout is
    tensor x pipeline x data parallel for vLLM and SGLang, tensor x pipeline for TensorRT-LLM
    (its attention data parallelism runs inside the tensor-parallel ranks), the shard count
    for TGI. Fewer GPUs
    than it needs and the engine fails to start; more, and the extra GPUs are paid for and idle.
    A LeaderWorkerSet group's or a Ray cluster's GPUs count together; with `--nnodes` (or
    vLLM's `--data-parallel-size-local`) each pod holds its share.

    ## Why is this bad?
    vLLM starts `tensor_parallel_size x pipeline_parallel_size` workers per data-parallel rank,
    one per GPU: with 8 of them on a 4-GPU pod it stops with "please ensure that world_size (8)
    is less than than max local gpu count (4)", after the image is pulled and the pod
    scheduled. The other way round is silent: a pod that reserves 8 GPUs and leaves
    `tensor_parallel_size` at its default of 1 serves from one GPU while the scheduler keeps
    seven others from every other workload. llama.cpp and Ollama spread over every GPU they see
    and TGI shards over all of them unless `--num-shard` says otherwise, so only a stated size
    is checked for them.

    ## Example
    ```yaml
    # file: deploy.yaml
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: llm
    spec:
      template:
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192"]
              resources:
                limits:
                  nvidia.com/gpu: 4
    ```

    Use instead:
    ```yaml
    # file: deploy.yaml
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: llm
    spec:
      template:
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192",
                     "--tensor-parallel-size", "4"]
              resources:
                limits:
                  nvidia.com/gpu: 4
    ```

    ## Fix safety
    The fix changes how many GPUs the workload reserves, so it is unsafe.
    """

    code = "KV306"
    name = "gpu-count-vs-parallel-layout"
    severity = Severity.WARNING
    engines = frozenset({"vllm", "sglang", "tgi", "trtllm"})
    fix_availability = FixAvailability.ALWAYS
    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        facts = sizing.facts
        if facts is None:
            return
        layout = _layout(dep, sizing)
        chooses = facts.parallel.shards_over_visible_gpus or dep.layout_picked_by is not None
        if chooses and (layout.tp is None or layout.tp.default):
            # TGI shards over every GPU it sees unless --num-shard says otherwise; a NIM's
            # launcher picks a profile for the GPUs it finds unless NIM_TENSOR_PARALLEL_SIZE does.
            return
        if _RUNTIME.intersection(dep.runtime) or any("out of scope" in m for m in sizing.missing):
            return  # a size filled in at run time, or an accelerator whose cores TP counts
        if any(_ARGS_VARIABLE.search(value.value) for value in dep.runtime.values()):
            return  # `${VLLM_ARGS}` where arguments go: the layout may be in it
        available, where = _available(dep)
        if available is None or available.value < 1:
            return  # no GPUs named (a CPU build, a count left to the operator)
        ray = dep.distributed_executor_backend is not None and (
            dep.distributed_executor_backend.value == "ray"
        )
        if dep.group_gpus is None and (ray or dep.joins_ray_cluster):
            return  # the engine's workers come from a Ray cluster kvlint does not see
        sizes = [(name, value) for name, value in zip(_names(facts), layout, strict=True) if name]
        product = math.prod(value.value if value else 1 for _, value in sizes)
        nodes = dep.nnodes.value if dep.nnodes is not None and dep.group_gpus is None else 1
        local = dep.data_parallel_size_local
        if dep.data_parallel_rank is not None and local is None:
            # `--data-parallel-rank`: this server is one DP rank of its own (an external load
            # balancer spreads requests over the ranks), on tensor x pipeline GPUs.
            local = Sourced(1, dep.data_parallel_rank.span, dep.data_parallel_rank.raw)
        if local is not None and dep.group_gpus is None:
            # Multi-node DP: this pod runs its own DP ranks, each tensor x pipeline GPUs.
            dp_total = layout.dp.value if layout.dp else 1
            needed = product // max(1, dp_total) * local.value
            what = f"{_terms(sizes[:2])} x `data_parallel_size_local` {local.value}"
        else:
            needed = math.ceil(product / max(1, nodes))
            what = _terms(sizes) + (f", over {nodes} nodes," if nodes > 1 else "")
        if needed == available.value:
            return
        title = n.engine_name(sizing)
        # The edit goes where the pod's GPU count is written; a group's total (LWS `size`
        # times the pods' GPUs) has no one value to change.
        raw = (available.raw or "").strip("'\"")
        editable = available is dep.gpu_count and not available.default and raw.isdigit()
        edits = (Edit(available.span, str(needed)),) if editable else ()
        fix = Fix(f"Request {needed} GPUs", edits, Applicability.UNSAFE)
        numbers = (
            ("GPUs requested", str(available.value)),
            ("GPUs the layout needs", str(needed)),
            *((name, str(value.value if value else 1)) for name, value in sizes),
        )
        if needed > available.value:
            quote = ""
            single = dep.group_gpus is None and nodes == 1 and local is None
            refusal = facts.world_size_refusal
            if refusal is not None and single and product == needed:
                dp = layout.dp.value if layout.dp else 1
                if dp == 1:
                    quote = f' ("{refusal.format(needed=needed, available=available.value)}")'
            message = (
                f"{what} needs {needed} GPUs, but {where.format(n=available.value)}: {title} "
                f"will fail to start{quote}"
            )
            yield Problem(available.span, message, fix, numbers, Severity.ERROR)
            return
        idle = available.value - needed
        message = (
            f"{where.format(n=available.value)} GPUs, but {what} needs {needed}: "
            f"{idle} GPU{'s are' if idle > 1 else ' is'} left idle"
        )
        yield Problem(available.span, message, fix, numbers)


def _terms(sizes: list[tuple[str, Sourced[int] | None]]) -> str:
    """The sizes the files set (``tensor_parallel_size` 2 x `pipeline_parallel_size` 2``), or
    the default layout when they set none."""
    stated = [(name, value) for name, value in sizes if value is not None and not value.default]
    if not stated:
        return f"the default layout (`{sizes[0][0]}` 1)"
    return " x ".join(f"`{name}` {value.value}" for name, value in stated if value is not None)


def _available(dep: Deployment) -> tuple[Sourced[int] | None, str]:
    """The GPUs the engine can use, and how to say where they come from: its group's
    (LeaderWorkerSet, Ray cluster), its pod's, or fewer when ``CUDA_VISIBLE_DEVICES`` lists
    fewer."""
    count = dep.group_gpus or dep.gpu_count
    where = "the group requests {n}" if dep.group_gpus is not None else "the pod requests {n}"
    visible = dep.visible_gpus
    fewer = count is not None and visible is not None and visible.value < count.value
    if fewer and visible is not None and dep.group_gpus is None:
        return visible, f"`{dep.visible_gpus_from}` makes {{n}} visible"
    return count, where
