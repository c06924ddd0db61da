"""KV905 unrecognised-document: a YAML document that describes no deployment kvlint knows."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class UnrecognisedDocument(InputProblemRule):
    """## What it does
    Reports a document that describes no deployment kvlint can read, once. kvlint reads engine
    configs, Kubernetes workloads, Helm values, compose files and kvlint plans, and searches any
    other custom resource (AIBrix, llm-d, llmaz, OME, Seldon, Argo, ...) for the containers in
    it that run an engine.

    ## Why is this bad?
    Silence would read as "checked and fine". When a file was meant to be checked, the finding
    says it was not; when it was not, exclude it with `per-file-ignores` or a
    `# kvlint: disable-file` comment. A document that looks like no deployment at all (a
    docs config, a dashboard) is reported at info, so a pre-commit hook over every YAML file
    does not fail on it. A container that runs an LLM server kvlint cannot read is a warning
    naming the container, since its settings go unchecked: another serving stack (NVIDIA NIM,
    TensorRT-LLM, LMDeploy, ...), an engine's image started by a launcher of its own, or an
    engine's flags handed to an image kvlint does not know (name the program in `command`).

    ## Example
    ```yaml
    # file: notes.yaml
    owner: platform-team
    oncall: "#llm-serving"
    ```

    Use instead:
    ```yaml
    # file: notes.yaml
    # kvlint: disable-file=KV905 not a deployment
    owner: platform-team
    oncall: "#llm-serving"
    ```
    """

    code = "KV905"
    name = "unrecognised-document"
    severity = Severity.INFO
