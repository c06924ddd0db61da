"""KV901 unreadable-file: a file kvlint cannot parse (syntax, encoding, binary, placeholders)."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class UnreadableFile(InputProblemRule):
    """## What it does
    Reports a file that cannot be read as YAML or JSON. The causes: a syntax error, an encoding
    that is not UTF-8, binary content, merge-conflict markers, an unfilled template placeholder,
    TAB indentation.

    ## Why is this bad?
    The tools that consume the file (kubectl, Helm, the engine's `--config`) fail on it too, and
    kvlint cannot check a deployment it cannot read. The run exits with code 2.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: [8192
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192
    ```
    """

    code = "KV901"
    name = "unreadable-file"
    severity = Severity.ERROR
