"""KV903 unknown-gpu: a GPU name kvlint does not know, so its memory is unknown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import Problem
from kvlint.finding import Severity

from ._input_problem import InputProblemRule

if TYPE_CHECKING:
    from kvlint.deploy.model import Deployment
    from kvlint.sizing import Sizing


class UnknownGpu(InputProblemRule):
    """## What it does
    Reports a GPU name that matches no GPU in kvlint's catalog. The name may come from a flag, a
    `nvidia.com/gpu.product` node selector or a plan's `gpu`.

    ## Why is this bad?
    The capacity checks need the GPU's memory. With a name kvlint cannot place they cannot run,
    and a typo in a node selector also means the pod never schedules. The message lists the
    names kvlint knows.

    ## Example
    ```yaml
    # file: plan.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    engine: vllm
    gpu: H1000
    max_model_len: 8192
    ```

    Use instead:
    ```yaml
    # file: plan.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    engine: vllm
    gpu: H100-80GB
    max_model_len: 8192
    ```
    """

    code = "KV903"
    name = "unknown-gpu"
    severity = Severity.WARNING

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        found = list(super().check(dep, sizing))
        yield from found
        if found or dep.gpu is None:
            return
        from kvlint.arith.gpus import known_gpu_names
        from kvlint.arith.gpus import lookup_gpu

        if lookup_gpu(str(dep.gpu.value)) is None:
            names = ", ".join(known_gpu_names())
            message = f"unknown GPU `{dep.gpu.value}`; kvlint knows {names}"
            yield Problem(dep.gpu.span, message)
