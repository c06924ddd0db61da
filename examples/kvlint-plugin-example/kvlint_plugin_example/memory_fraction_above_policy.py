"""ACME001 memory-fraction-above-policy: an engine memory fraction above the team's limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pydantic

from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import Rule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class PolicyOptions(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    limit: float = pydantic.Field(default=0.9, gt=0, le=1)


class MemoryFractionAbovePolicy(Rule):
    """## What it does
    Checks that the engine's memory fraction (`gpu-memory-utilization`, `mem-fraction-static`)
    stays within the team's limit.

    ## Why is this bad?
    Acme's GPUs also run a metrics sidecar that needs about 8% of the memory; above the limit the
    engine and the sidecar fight for it and the pod is killed under load.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu-memory-utilization: 0.97
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu-memory-utilization: 0.9
    ```

    ## Options
    - `limit` (default 0.9): the largest memory fraction allowed.
    """

    code = "ACME001"
    name = "memory-fraction-above-policy"
    severity = Severity.WARNING
    engines = frozenset({"vllm", "sglang"})
    Options = PolicyOptions
    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        limit = getattr(self.options, "limit", 0.9)
        fraction = dep.memory_fraction
        if fraction is not None and fraction.value > limit:
            yield Problem(
                fraction.span,
                f"memory fraction {fraction.value} is above Acme's limit of {limit}",
                numbers=(("memory fraction", str(fraction.value)), ("limit", str(limit))),
            )
