"""KV905 unrecognised-document: a YAML document that describes no deployment kvlint knows."""

from __future__ import annotations

from kvlint.finding import Severity

from ._input_problem import InputProblemRule


class UnrecognisedDocument(InputProblemRule):
    """## What it does
    Reports a document that describes no deployment kvlint can read, once. kvlint reads engine
    configs, Kubernetes workloads, Helm values, compose files and kvlint plans.

    ## Why is this bad?
    Silence would read as "checked and fine". When a file was meant to be checked, the finding
    says it was not; when it was not, exclude it with `per-file-ignores` or a
    `# kvlint: disable-file` comment. A document that looks like no deployment at all (a
    docs config, a dashboard) is reported at info, so a pre-commit hook over every YAML file
    does not fail on it; one that runs an LLM server kvlint cannot read (a known engine image
    with a launcher of its own) is a warning, since its settings go unchecked.

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
