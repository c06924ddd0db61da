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
    scaling the config or the deployment actually sets. llama.cpp's `-c` is the cells of
    every slot together: each of `-np` slots is judged on its share (`-c / -np`, or all of
    `-c` with a unified cache), as llama-server allocates it.

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
        label = n.name(sizing, "max_model_len")
        head = f"{label} {length} is greater than the derived maximum {derived} ({origin})"
        limit = derived
        engine = sizing.engine
        if settled.facts.context_spans_slots and engine is not None and engine.max_model_len:
            # llama.cpp's -c is every slot's cells: each of -np slots gets its share (all of it
            # with a unified cache), and a request is judged against that share.
            slot = engine.max_model_len
            if slot <= derived:
                return
            if slot < length:
                slots = round(length / slot)
                head = (
                    f"{label} {length} gives each of {slots} slots {n.count(slot)} tokens, more "
                    f"than the derived maximum {derived} ({origin})"
                )
                limit = derived * slots
        elif length <= derived:
            return
        switch = settled.facts.long_context_switch
        allowed = settled.allow_long is not None and bool(settled.allow_long.value)
        if switch is not None and not allowed:
            message = f"{head}: {settled.facts.display} will refuse to start unless {switch}=1"
            severity = None
        elif switch is not None:
            message = f"{head}: {switch} lets it start, but RoPE positions past {derived} give NaN"
            severity = Severity.WARNING
        elif settled.facts.context_spans_slots:
            # Cells past the cap are wasted where each slot owns its own (split, or one slot);
            # a unified pool lends them to the other slots.
            seqs = settled.max_num_seqs
            shared = limit == derived and seqs is not None and int(seqs.value) > 1
            waste = "" if shared else ", so the cells past it are allocated for nothing"
            message = (
                f'{head}: llama-server caps each slot at {derived} ("the slot context exceeds '
                f'the training context of the model - capping"; older builds run past the '
                f"trained positions){waste}"
            )
            severity = Severity.WARNING
        else:
            message = f"{head}: positions past {derived} were never trained and degrade output"
            severity = Severity.WARNING
        numbers = (
            ("max_model_len", str(length)),
            ("derived maximum", str(derived)),
            ("from", origin),
        )
        per_slot = f" ({derived} per slot)" if limit != derived else ""
        fix = n.fix(f"Lower {label} to {limit}{per_slot}", value, str(limit))
        yield Problem(value.span, message, fix, numbers, severity)
