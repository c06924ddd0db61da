"""KV902 unknown-model: a model reference kvlint cannot resolve to its config.json facts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import NOT_CHECKED
from kvlint.finding import Problem
from kvlint.finding import Severity

from ._input_problem import InputProblemRule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing

# Carriers whose model path is read on the machine that runs the engine, as kvlint runs:
# `vllm serve --config` files and kvlint plans. Everything else describes a container.
_RUN_HERE = frozenset({"engine_yaml", "plan"})


class UnknownModel(InputProblemRule):
    """## What it does
    Reports a model reference kvlint cannot turn into the model's facts: not a local path, not
    in the built-in catalog, not in the local Hugging Face cache, and not fetched (offline, or
    the Hub did not answer). It also reports a model
    whose architecture kvlint does not size (a `model_type` no family module reads, such as
    DeepSeek-V4's compressed cache), saying what is missing, rather than read it as a generic
    decoder and print a wrong number.

    ## Why is this bad?
    Every capacity and context check needs the model's layers, heads and head size. Without them
    kvlint can only check the settings themselves; the message lists the checks that did not
    run for that deployment. It is a warning, not a failure of the run: the other files and
    deployments are checked as usual. The message says how to make the model known: a path to
    its `config.json`, a populated `HF_HOME`, or a catalog entry. A model path in a Kubernetes
    manifest, Helm values or a compose file is a path inside the container, so when it is not
    on this machine the finding is only info. A model file that exists but cannot be read is an
    error (exit code 2), as any unreadable input.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: acme/not-a-real-model-7b
    max-model-len: 8192
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192
    ```
    """

    code = "KV902"
    name = "unknown-model"
    severity = Severity.WARNING

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        for problem in super().check(dep, sizing):
            ref = str(dep.model.value) if dep.model is not None else ""
            if dep.carrier in _RUN_HERE or not problem.message.startswith("model path "):
                yield problem
                continue
            # A manifest's, chart's or compose file's model path is a path inside the
            # container (the vLLM chart copies the model from S3 into /data/ first): not on
            # this machine is no mistake in the file, only a fact kvlint lacks.
            _, tail, codes = problem.message.partition(NOT_CHECKED)
            yield Problem(
                problem.span,
                f"model path {ref!r} is inside the container, not on this machine (name a Hub "
                f"id or a catalog model to check the deployment against it){tail}{codes}",
                severity=Severity.INFO,
            )
