"""KV903 unknown-gpu: a GPU name kvlint does not know, so its memory is unknown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import Problem
from kvlint.finding import Severity

from ._input_problem import InputProblemRule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class UnknownGpu(InputProblemRule):
    """## What it does
    Reports a GPU name that matches no GPU in kvlint's catalog. The name may come from a flag, a
    `nvidia.com/gpu.product` node selector or a plan's `gpu`.

    ## Why is this bad?
    The capacity checks need the GPU's memory. With a name kvlint cannot place they cannot run,
    and a typo in a node selector also means the pod never schedules. The message names the
    closest known names; `kvlint explain KV903 --file FILE` lists them all.

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
          nodeSelector:
            nvidia.com/gpu.product: NVIDIA-H1000
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
              resources:
                limits:
                  nvidia.com/gpu: 1
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
          nodeSelector:
            nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.11.0
              args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
              resources:
                limits:
                  nvidia.com/gpu: 1
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
        from kvlint.gpus import known_gpu_names
        from kvlint.gpus import lookup_gpu

        name = str(dep.gpu.value)
        if lookup_gpu(name) is None:
            import difflib  # only for an unknown GPU: off the start-up path

            known = known_gpu_names()
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
            hint = ", ".join(f"`{c}`" for c in close) if close else ", ".join(known[:3])
            message = f"unknown GPU `{name}`; known names include {hint} ({len(known)} known)"
            yield Problem(dep.gpu.span, message, numbers=(("known GPUs", ", ".join(known)),))
