"""KV907 missing-fact: a fact the files do not give (no GPU named), so some checks cannot run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import Problem
from kvlint.finding import Severity

from ._input_problem import InputProblemRule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class MissingFact(InputProblemRule):
    """## What it does
    Says which facts the files do not give, and so which checks could not run. It is reported
    once per deployment; the missing fact is most often the GPU type. A setting whose value is
    filled in at deploy or run time (`--max-model-len $(MAX_LEN)`, `{{ .Values.maxModelLen }}`)
    is reported at the value: kvlint does not check the engine's default in its place.

    ## Why is this bad?
    It is not a mistake in the file, which is why it is only an info finding: it never fails a
    run. But a clean report on a deployment whose capacity was never checked would mislead, so
    kvlint says what it would need instead of guessing or staying silent. Name the GPU in the
    file (a node selector, a plan's `gpu`), in the kvlint config (`gpu = "H100-80GB"`) or with
    `--gpu`.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192
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

    code = "KV907"
    name = "missing-fact"
    severity = Severity.INFO

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        from kvlint.sizing import runtime_fact
        from kvlint.sizing import runtime_values

        found = list(super().check(dep, sizing))
        yield from found
        missing = list(sizing.missing)
        for name, value in runtime_values(dep).items():
            fact = runtime_fact(name, value)
            if fact in missing:
                # Said at the value itself: `--max-model-len $(MAX_LEN)`.
                missing.remove(fact)
                yield Problem(
                    value.span,
                    f"`{name}` is `{value.value}`, filled in at deploy or run time: the checks "
                    "that need its value did not run",
                )
        if any(p.code == "KV902" for p in dep.problems):
            # The unknown model has its own error; do not say it again as a missing fact.
            missing = [m for m in missing if "model" not in m.lower()]
        if dep.gpu is not None:
            # A GPU is named but kvlint cannot place it: KV903 says so, with the known names.
            # An accelerator it knows but does not size (a TPU) has no KV903: say it here.
            missing = [m for m in missing if "gpu" not in m.lower() or "out of scope" in m]
        if found or not missing:
            return
        scope = next((m for m in missing if "out of scope" in m), None)
        if scope is not None:
            # "GPU memory (Google TPU v6e (Trillium) is a TPU: out of scope)"
            what = scope.partition("(")[2].rpartition(":")[0] or scope
            message = (
                f"{what}, which kvlint does not size: the checks that need GPU memory did not run"
            )
            yield Problem(dep.span, message)
            return
        facts = ", the ".join(missing)
        message = f"the files do not give the {facts}: the checks that need it did not run"
        if any("gpu" in m.lower() for m in missing):
            message += " (name the GPU with `--gpu` or `gpu` in the kvlint config)"
        yield Problem(dep.span, message)
