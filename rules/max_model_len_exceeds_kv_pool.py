"""KV302 max-model-len-exceeds-kv-pool: one sequence of max_model_len does not fit the pool."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class MaxModelLenExceedsKvPool(Rule):
    """## What it does
    Checks that one request of `max_model_len` tokens fits in the KV-cache memory. The memory
    is what the engine has left after weights and activations; the finding gives the largest
    `max_model_len` that fits.

    ## Why is this bad?
    vLLM checks this at start-up and refuses to run: "To serve at least one request with the
    model's max seq len (131072), (40.00 GiB KV cache is needed, which is larger than the
    available KV cache memory (28.50 GiB)". The pod crash-loops after downloading the weights,
    minutes into a rollout. When `max_model_len` is left out the model's full context is
    used, which is how a model upgrade with a longer context breaks a deployment that worked.

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
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=2,
                 --max-model-len=131072, --gpu-memory-utilization=0.95]
          resources: {limits: {nvidia.com/gpu: 2}}
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
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=2,
                 --max-model-len=16384, --gpu-memory-utilization=0.95]
          resources: {limits: {nvidia.com/gpu: 2}}
    ```

    ## Fix safety
    Lowering `max_model_len` shortens the longest request the server accepts, so the fix is
    unsafe.
    """

    code = "KV302"
    name = "max-model-len-exceeds-kv-pool"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine = sizing.engine
        if engine is None or engine.fits is not False:
            return
        available, needed = engine.available_kv_bytes, engine.needed_bytes_one_sequence
        if available is None or needed is None or available <= 0 or needed <= available:
            return  # no memory at all is KV303's finding
        length = engine.max_model_len
        largest = engine.estimated_max_model_len
        if largest is None:
            # llama.cpp pads n_ctx to 256 cells (GGML_PAD in src/llama-context.cpp).
            block = 256 if dep.engine.value == "llamacpp" else engine.block_size or 16
            largest = available * length // needed // block * block
        target = dep.max_model_len
        field = n.name(dep, "max_model_len")
        claim = dep.claims.context
        if not n.explicit(target) and claim is not None and claim.value == length:
            target, field = claim, "`context`"
        refusal = {
            "vllm": "vLLM will refuse to start",
            "llamacpp": "llama.cpp fails to allocate its KV buffer",
        }.get(dep.engine.value, f"{n.engine_name(dep)} cannot hold one full-length request")
        severity: Severity | None = None
        graphs = engine.cudagraph_bytes or 0
        if (
            dep.engine.value == "vllm"
            and dep.engine_version is None
            and dep.kv_cache_memory_bytes is None
            and graphs
            and needed <= available + graphs
        ):
            # No image names the release, so the newest was sized; only from 0.21 does vLLM
            # subtract its CUDA-graph estimate from the budget (VLLM_MEMORY_PROFILER_ESTIMATE_
            # CUDAGRAPHS, research/engines.md 1a): an older release starts. A default decided
            # it, so say so, at warning.
            refusal = (
                f"vLLM {engine.version} will refuse to start, charging {n.gib2(graphs)} of CUDA "
                "graphs to the budget (no image names the version; releases before 0.21 do not "
                "charge them and start)"
            )
            severity = Severity.WARNING
        estimate = (
            f"; the largest {field} that fits is {largest}"
            if largest > 0
            else "; not even one block fits"
        )
        unset = "" if n.explicit(target) else " (not set: the model's full context)"
        message = (
            f"{field} {length}{unset} needs {n.gib2(needed)} of KV cache for one request, "
            f"more than the {n.gib2(available)} available per GPU: {refusal}{estimate}"
        )
        numbers = (
            ("max_model_len", str(length)),
            ("needed per GPU, one request", n.gib2(needed)),
            ("available KV memory per GPU", n.gib2(available)),
            ("largest max_model_len that fits", str(largest)),
            ("memory fraction", f"{engine.memory_fraction}" if engine.memory_fraction else "?"),
        )
        span = target.span if target is not None else (dep.model or dep.engine).span
        fix = None
        if largest > 0:
            verb = "Lower" if n.explicit(target) else "Set"
            fix = n.fix(f"{verb} {field} to {largest}", target, str(largest))
        yield Problem(span, message, fix, numbers, severity)
