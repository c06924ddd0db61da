"""KV902 unknown-model: a model reference kvlint cannot resolve to its config.json facts."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class UnknownModel(InputProblemRule):
    """## What it does
    Reports a model reference that resolves to no `config.json`. It is not a local path, not in
    the built-in catalog, not in the local Hugging Face cache (and, with `--offline`, not
    fetched).

    ## Why is this bad?
    Every capacity and context check needs the model's layers, heads and head size. Without them
    kvlint can only check the settings themselves, so the rules that need the model are skipped
    for that deployment and the run exits with code 2. The message says how to make the model
    known: a path to its `config.json`, a populated `HF_HOME`, or a catalog entry.

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
    severity = Severity.ERROR
