"""KV501 unknown-engine-flag: a flag or config key the engine does not know; it refuses to start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kvlint.finding import Problem
from kvlint.finding import Severity

from ._input_problem import InputProblemRule

if TYPE_CHECKING:
    from kvlint.deployment import Deployment
    from kvlint.sizing import Sizing


class UnknownEngineFlag(InputProblemRule):
    """## What it does
    Checks that every flag and config key is one the serving engine knows.

    ## Why is this bad?
    vLLM and SGLang parse their arguments strictly: a misspelt flag such as `--max-num-seq`
    stops the server at start-up with `unrecognized arguments`, after the pod was scheduled and
    the image pulled. In a config file the same typo is worse for engines that ignore unknown
    keys: the setting silently keeps its default.

    ## Example
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192
    max-num-seq: 64
    ```

    Use instead:
    ```yaml
    # file: vllm.yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: 8192
    max-num-seqs: 64
    ```
    """

    code = "KV501"
    name = "unknown-engine-flag"
    severity = Severity.ERROR

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        seen: set[tuple[int, int]] = set()
        for problem in super().check(dep, sizing):
            seen.add((problem.span.line, problem.span.column))
            yield problem
        # Flags the loader kept aside without an InputProblem of their own.
        for flag in dep.unknown_flags:
            if (flag.span.line, flag.span.column) not in seen:
                engine = sizing.facts.name if sizing.facts is not None else dep.engine.value
                yield Problem(flag.span, f"`{flag.value}` is not a {engine} flag")
