"""KV906 unused-suppression: a ``# kvlint: disable`` comment or annotation that hides nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import Rule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class UnusedSuppression(Rule):
    """## What it does
    Reports a suppression that suppresses no finding. That is a `# kvlint: disable=...` comment,
    a `# kvlint: disable-file` comment or a `kvlint.dev/ignore` annotation that hides nothing,
    or one that names a code or name no rule has.

    ## Why is this bad?
    A suppression outlives the problem it hid: after the setting is fixed, the stale comment
    would silently hide the next real finding on that line. A misspelt code never suppressed
    anything. Codes of rules that are not selected in this run are not reported.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192  # kvlint: disable=KV302 fits since the upgrade
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192
    ```
    """

    code = "KV906"
    name = "unused-suppression"
    severity = Severity.WARNING
    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        # The linter finds unused suppressions after every other rule has run (it needs their
        # findings); this class gives the finding its code, name, severity and documentation.
        return iter(())
