"""KV402 context-beyond-max-positions: a context past the positions the model was trained for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.settled import Settled
from kvlint.sizing import Sizing

from . import _numbers as n


class ContextBeyondMaxPositions(Rule):
    """## What it does
    Checks the context against the positions the model supports. `max_model_len` and a plan's
    claimed context are compared with the longest context the model's config supports:
    `max_position_embeddings` (the smallest of vLLM's length keys), extended only by a RoPE
    scaling the config or the deployment actually sets.

    ## Why is this bad?
    vLLM refuses to start: "User-specified max_model_len (131072) is greater than the derived
    max_model_len (max_position_embeddings=32768 ...)". With `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`
    it starts, and RoPE positions past the trained range give NaN or garbage. A plan that
    promises 128k on a 32k model without YaRN in its config promises what no engine serves.

    ## Example
    ```yaml
    model: Qwen/Qwen2.5-7B-Instruct
    max-model-len: 131072
    ```

    Use instead:
    ```yaml
    model: Qwen/Qwen2.5-7B-Instruct
    max-model-len: 32768
    ```

    ## Fix safety
    Lowering the context changes what the server accepts, so the fix is unsafe.
    """

    code = "KV402"
    name = "context-beyond-max-positions"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec = sizing.spec
        if spec is None:
            return
        settled = n.settled(sizing)
        # The model as the engine runs it: the deployment's RoPE and length overrides applied.
        derived, origin = settled.derived_max_model_len, settled.length_origin
        if n.explicit(settled.max_model_len):
            yield from self._length(sizing, settled, settled.max_model_len, derived, origin)
        claim = dep.claims.context
        if claim is not None and claim.value > derived:
            message = (
                f"`context` {claim.value} is beyond the {derived} positions "
                f"{n.model_name(spec)} supports ({origin}), and no RoPE scaling in the config "
                f"or the settings extends it"
            )
            numbers = (("claimed context", str(claim.value)), ("derived maximum", str(derived)))
            yield Problem(
                claim.span,
                message,
                n.fix(f"Lower `context` to {derived}", claim, str(derived)),
                numbers,
            )

    def _length(
        self,
        sizing: Sizing,
        settled: Settled,
        value: Sourced[Any],
        derived: int,
        origin: str,
    ) -> Iterator[Problem]:
        length = int(value.value)
        if length <= derived:
            return
        label = n.name(sizing, "max_model_len")
        switch = settled.facts.long_context_switch
        allowed = settled.allow_long is not None and bool(settled.allow_long.value)
        head = f"{label} {length} is greater than the derived maximum {derived} ({origin})"
        if switch is not None and not allowed:
            message = f"{head}: {settled.facts.display} will refuse to start unless {switch}=1"
            severity = None
        elif switch is not None:
            message = f"{head}: {switch} lets it start, but RoPE positions past {derived} give NaN"
            severity = Severity.WARNING
        else:
            message = f"{head}: positions past {derived} were never trained and degrade output"
            severity = Severity.WARNING
        numbers = (
            ("max_model_len", str(length)),
            ("derived maximum", str(derived)),
            ("from", origin),
        )
        fix = n.fix(f"Lower {label} to {derived}", value, str(derived))
        yield Problem(value.span, message, fix, numbers, severity)
