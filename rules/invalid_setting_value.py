"""KV502 invalid-setting-value: a setting whose value has the wrong type or is out of range."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class InvalidSettingValue(InputProblemRule):
    """## What it does
    Checks that each setting's value has the type and range the engine accepts. A number
    goes where a number goes, one of the engine's choices where it lists them, a value where a
    flag takes one (llama.cpp's `-fa` needs on, off or auto from build b6327), and a word
    such as `flash-attn: off` is quoted where YAML would otherwise read a boolean.

    ## Why is this bad?
    `max-model-len: lots` or `gpu-memory-utilization: 1.5` stops the engine at start-up, and
    kvlint cannot compute the cache for a setting it cannot read, so the capacity checks that
    depend on it are skipped.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: lots
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 32k
    ```
    """

    code = "KV502"
    name = "invalid-setting-value"
    severity = Severity.ERROR
