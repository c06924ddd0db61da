"""KV904 schema-violation: a kvlint plan that does not follow the plan schema."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class SchemaViolation(InputProblemRule):
    """## What it does
    Checks a kvlint plan file against the plan's JSON Schema. Required keys, types and known
    keys are all checked.

    ## Why is this bad?
    A plan kvlint cannot read as intended is a plan whose figures nobody checks: a misspelt key
    is ignored, a number written as text is not compared. The run exits with code 2.

    ## Example
    ```yaml
    # file: plan.yaml
    kvlint: plan/v1
    engine: vllm
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu: H100-80GB
    gpus: one
    settings:
      max-model-len: 8192
    ```

    Use instead:
    ```yaml
    # file: plan.yaml
    kvlint: plan/v1
    engine: vllm
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu: H100-80GB
    gpus: 1
    settings:
      max-model-len: 8192
    ```
    """

    code = "KV904"
    name = "schema-violation"
    severity = Severity.ERROR
