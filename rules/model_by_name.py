"""KV908 model-by-name: a model kvlint knows only by its name, taken as a catalog model."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class ModelByName(InputProblemRule):
    """## What it does
    Says when a model was not read but recognised by its name: a mirror, a quantisation or a
    release of a built-in catalog model (`RedHatAI/...-FP8-dynamic`, `unsloth/...-bnb-4bit`,
    `mlx-community/...-4bit`, `...-GGUF:Q4_K_M`, an Ollama tag such as
    `llama3.1:8b-instruct-q4_K_M`), or a path inside the container that ends in a catalog
    model's name. The checks then use that model's architecture with the weights the name
    states, and the finding says which model that is.

    ## Why is this bad?
    It is not a mistake, which is why it is only an info finding. But the figures rest on the
    name: a repository named like a model it is not (a fine-tune that changed the context
    length, a mislabelled upload) would be checked as the model it claims to be. The name must
    be a catalog name followed only by suffixes kvlint knows (quantisation, `-Instruct`, `-it`,
    a dated release); anything else stays a KV902. To check the checkpoint itself, give its
    `config.json` (a path, a populated `HF_HOME`), or name the model it was quantised from with
    the quantisation vLLM applies to it, as below.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: unsloth/Qwen2.5-7B-Instruct-bnb-4bit
    max-model-len: 8192
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: Qwen/Qwen2.5-7B-Instruct
    quantization: bitsandbytes
    max-model-len: 8192
    ```
    """

    code = "KV908"
    name = "model-by-name"
    severity = Severity.INFO
