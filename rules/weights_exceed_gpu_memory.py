"""KV303 weights-exceed-gpu-memory: the weights per GPU leave nothing for the KV cache."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.arith.parallel import tp_problem
from kvlint.deployment import Deployment
from kvlint.estimate import Refusal
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class WeightsExceedGpuMemory(Rule):
    """## What it does
    Checks that the weights per GPU fit in the engine's memory fraction. The weights each GPU
    holds, plus the engine's activation peak, must fit in the memory the engine may use
    (`gpu_memory_utilization`, `mem_fraction_static`, `cuda_memory_fraction`), with room left
    for the KV cache. Outside the 90% band of the prediction the finding is an error; inside it
    (the weights and overheads about fill the budget) a warning that the engine may refuse.

    ## Why is this bad?
    The weights are loaded before anything else: if they do not fit, the engine dies with
    CUDA out of memory while loading; if they fit but leave nothing over, vLLM refuses to
    start with "No available memory for the cache blocks". Either way the rollout fails on
    the GPU, after the download, instead of in review.

    ## Example
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-70b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --max-model-len=8192]
          resources: {limits: {nvidia.com/gpu: 1}}
    ```

    Use instead:
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-70b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=4,
                 --max-model-len=8192]
          resources: {limits: {nvidia.com/gpu: 4}}
    ```

    ## Fix safety
    Raising tensor parallelism needs more GPUs per replica, so the fix is unsafe.
    """

    code = "KV303"
    name = "weights-exceed-gpu-memory"
    severity = Severity.ERROR
    engines = frozenset({"vllm", "sglang", "tgi", "llamacpp", "trtllm", "mlx"})
    fix_availability = FixAvailability.SOMETIMES

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine, spec, gpu = sizing.engine, sizing.spec, sizing.gpu
        if engine is None or spec is None or gpu is None:
            return
        settled = n.settled(sizing)
        if settled.facts.offloads_layers:
            yield from self._offloaded(sizing)
            return
        at_risk = engine.refusal_at_risk
        if at_risk is Refusal.FREE_MEMORY:
            yield from self._free_memory(sizing)
            return
        if at_risk not in (Refusal.WEIGHTS, Refusal.NO_CACHE_MEMORY):
            return
        # Inside the band (it straddles the limit) the finding is a warning that says so.
        severity = Severity.WARNING if engine.borderline else None
        band = n.band(engine)
        weights, total = engine.weights_bytes, engine.gpu_total_bytes or gpu.total_bytes
        fraction, available = engine.memory_fraction, engine.available_kv_bytes
        if weights is None or fraction is None:
            return
        of_free = settled.facts.fraction_of_free
        budget = total if of_free else total * fraction
        alone = weights > budget
        tp = settled.tensor_parallel_size.value
        other = 0 if alone else max(0, round(budget) - weights - (available or 0))
        where = (
            f"{n.gib(weights)} per GPU ({n.model_name(spec)}, "
            f"{n.name(sizing, 'tensor_parallel_size')} {tp})"
        )
        limit = (
            f"the {gpu.display}'s {n.gib(budget)}"
            if of_free
            else f"{n.name(sizing, 'memory_fraction')} {fraction:g} of the {gpu.display} "
            f"({n.gib(budget)})"
        )
        if engine.borderline:
            doubt = engine.caveat or n.may_refuse(sizing)
            left = f"{n.gib2(available or 0)} predicted" if available is not None else "?"
            if engine.version_doubt is not None:
                left += f" at {settled.facts.display} {engine.version}"
            quoted = f" (90% band {band})" if band is not None else ""
            message = (
                f"the weights take {where} and activations and runtime about {n.gib(other)} "
                f"more, close to {limit}: the KV memory left is {left}{quoted}: {doubt}"
            )
        elif alone:
            message = f"the weights need {where}, more than {limit}: loading runs out of memory"
        else:
            message = (
                f"the weights take {where} and activations and runtime {n.gib(other)} more, "
                f"together over {limit}: "
                + (
                    f"no memory is left for the KV cache ({engine.error})"
                    if of_free
                    else 'no memory is left for the KV cache ("No available memory for the '
                    'cache blocks")'
                )
            )
        numbers: tuple[tuple[str, str], ...] = (
            ("weights per GPU", n.gib(weights)),
            ("activations and overheads", n.gib(other)),
            ("GPU memory", n.gib(total)),
            ("memory fraction", f"{fraction:g}"),
            ("budget", n.gib(budget)),
        )
        if band is not None:
            numbers += (("available KV memory, 90% band", band),)
        # The smallest tensor parallelism the model allows that leaves a tenth of the budget.
        total_weights = weights * tp
        wanted = next(
            (
                t
                for t in (1, 2, 4, 8, 16)
                if t > tp
                and tp_problem(spec, settled.facts.parallel, t) is None
                and total_weights / t + other < 0.9 * budget
            ),
            None,
        )
        target = settled.tensor_parallel_size
        if wanted is not None:
            fix = n.fix(
                f"Raise {n.name(sizing, 'tensor_parallel_size')} to {wanted}", target, str(wanted)
            )
        else:
            fix = n.fix("Use a quantised checkpoint or a GPU with more memory")
        fraction_set = settled.memory_fraction
        if n.explicit(target):
            span = target.span
        elif fraction_set is not None and n.explicit(fraction_set):
            span = fraction_set.span
        else:
            span = (dep.model or dep.engine).span
        yield Problem(span, message, fix, numbers, severity)

    def _free_memory(self, sizing: Sizing) -> Iterator[Problem]:
        """vLLM's start: the memory free after the CUDA context is below the fraction asked."""
        engine, settled, gpu = sizing.engine, n.settled(sizing), sizing.gpu
        assert engine is not None and gpu is not None
        fraction = settled.memory_fraction
        if fraction is None:
            return
        label = n.name(sizing, "memory_fraction")
        severity = None
        if engine.borderline:
            # the CUDA context's size decides it: a warning
            severity = Severity.WARNING
            message = (
                f"{label} {fraction.value:g} asks for "
                f"{n.gib2(gpu.total_bytes * fraction.value)} of the {gpu.display}, about what "
                f"is free once the CUDA context is up (0.45-0.60 GiB of it go to the CUDA "
                f"context on one GPU, 1.43-2.05 GiB with NCCL): "
                f"{engine.caveat or n.may_refuse(sizing)}"
            )
        else:
            message = (
                f"{label} {fraction.value:g} asks for "
                f"{n.gib2(gpu.total_bytes * fraction.value)} of the {gpu.display}, more than is "
                f"free once the CUDA context is up: "
                f'{settled.facts.display} refuses to start ("{engine.error}")'
            )
        numbers = (
            ("memory fraction", f"{fraction.value:g}"),
            ("GPU memory", n.gib2(gpu.total_bytes)),
        )
        title = f"Lower {label} below the share of the GPU free at start"
        yield Problem(fraction.span, message, n.fix(title), numbers, severity)

    def _offloaded(self, sizing: Sizing) -> Iterator[Problem]:
        """llama.cpp: every layer put on the GPU (`-ngl` at least the layer count) must fit."""
        engine, spec, gpu = sizing.engine, sizing.spec, sizing.gpu
        ngl = n.settled(sizing).n_gpu_layers
        assert engine is not None and spec is not None and gpu is not None
        if ngl is None or not n.explicit(ngl) or ngl.value < spec.num_layers:
            return
        weights, total = engine.weights_bytes, engine.gpu_total_bytes or gpu.total_bytes
        if weights is None or weights <= total:
            return
        cache = engine.kv_buffer_bytes or 0
        # Layers that fit with their share of the KV buffer, leaving a tenth for compute buffers.
        fits = max(0, int(spec.num_layers * 0.9 * total / (weights + cache)))
        message = (
            f"the weights need {n.gib(weights)} ({n.model_name(spec)}) and "
            f"{n.name(sizing, 'n_gpu_layers')} {ngl.value} puts every layer on the {gpu.display} "
            f"({n.gib(total)}): loading runs out of memory"
        )
        numbers = (("weights", n.gib(weights)), ("KV buffer", n.gib(cache)), ("GPU", n.gib(total)))
        title = f"Lower {n.name(sizing, 'n_gpu_layers')} to {fits} (the rest run on the CPU)"
        yield Problem(ngl.span, message, n.fix(title, ngl, str(fits)), numbers)
