"""KV503 served-model-not-claimed: a container serving another model than its resource claims."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.deployment import Deployment
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Fix
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

_SCHEMES = ("hf://", "huggingface://", "ollama://")


def _identity(model: str) -> str | None:
    """A Hub id or an Ollama tag as compared: no scheme, no trailing slash, case-blind.
    None for a path or a run-time value, which name no model this rule can compare."""
    text = model.strip()
    for scheme in _SCHEMES:
        if text.startswith(scheme):
            text = text[len(scheme) :]
    text = text.rstrip("/")
    if not text or text.startswith(("/", ".", "~", "$", "{")) or "://" in text:
        return None
    return text.lower()


class ServedModelNotClaimed(Rule):
    """## What it does
    Checks the model a container serves against the model its resource claims. The claims read
    are an llmaz `Playground` or `Service` and the `OpenModel` it claims, an OME
    `InferenceService` and its `BaseModel`, and an llm-d `ModelService`'s `modelArtifacts.uri`,
    in one file.

    ## Why is this bad?
    The resource is what the operator, its router and its autoscaler act on: the model name
    clients ask for, the GPUs of its inference flavor, the weights it downloads and mounts.
    A container that loads another model (`--model` left from an earlier version of the
    manifest) serves it under the claimed name, on GPUs sized for the other one, and kvlint's
    capacity checks are about the container's model while the plan was made for the claim's.

    ## Example
    ```yaml
    # file: playground.yaml
    apiVersion: llmaz.io/v1alpha1
    kind: OpenModel
    metadata:
      name: qwen
    spec:
      source:
        modelHub:
          modelID: Qwen/Qwen2.5-7B-Instruct
    ---
    apiVersion: inference.llmaz.io/v1alpha1
    kind: Playground
    metadata:
      name: qwen
    spec:
      modelClaim:
        modelName: qwen
      backendRuntimeConfig:
        backendName: vllm
        args: ["--model", "Qwen/Qwen2.5-72B-Instruct"]
    ```

    Use instead:
    ```yaml
    # file: playground.yaml
    apiVersion: llmaz.io/v1alpha1
    kind: OpenModel
    metadata:
      name: qwen
    spec:
      source:
        modelHub:
          modelID: Qwen/Qwen2.5-7B-Instruct
    ---
    apiVersion: inference.llmaz.io/v1alpha1
    kind: Playground
    metadata:
      name: qwen
    spec:
      modelClaim:
        modelName: qwen
      backendRuntimeConfig:
        backendName: vllm
    ```

    ## Fix safety
    The fix changes which model the container loads, so it is unsafe.
    """

    code = "KV503"
    name = "served-model-not-claimed"
    severity = Severity.WARNING
    fix_availability = FixAvailability.ALWAYS
    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        claimed, served = dep.claimed_model, dep.model
        if claimed is None or served is None or served is claimed:
            return
        want, have = _identity(claimed.value), _identity(served.value)
        if want is None or have is None or want == have:
            return
        message = (
            f"the container serves `{served.value}`, but {dep.claimed_by} claims "
            f"`{claimed.value}`: clients, routing and the GPUs planned for that model get "
            f"`{served.value}`"
        )
        fix = Fix(
            f"Serve `{claimed.value}`",
            (Edit(served.span, claimed.value),) if not served.default else (),
            Applicability.UNSAFE,
        )
        numbers = (("served", served.value), ("claimed", claimed.value))
        yield Problem(served.span, message, fix, numbers)
