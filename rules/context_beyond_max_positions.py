"""KV402 context-beyond-max-positions: a context past the positions the model was trained for."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.common import derived_max_model_len
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.model.spec import ModelSpec
from kvlint.model.spec import RopeScaling
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n

# The environment variable that lets each engine start past the derived length anyway.
_ALLOW = {
    "vllm": "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "sglang": "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN",
}


def _rope(value: Any) -> RopeScaling | None:
    """A ``--rope-scaling`` / ``hf_overrides.rope_scaling`` mapping as the config would hold it."""
    if not isinstance(value, dict):
        return None
    kind = value.get("rope_type", value.get("type", "default"))
    factor = value.get("factor")
    original = value.get("original_max_position_embeddings")
    return RopeScaling(
        str(kind),
        float(factor) if isinstance(factor, (int, float)) else None,
        original if isinstance(original, int) else None,
    )


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
        spec, scaled_by = self._effective(dep, spec)
        derived = derived_max_model_len(
            spec, n.version(dep) if dep.engine.value == "vllm" else None
        )
        key = spec.max_length_key or "max_position_embeddings"
        base = spec.max_position_embeddings or 2048
        origin = f"{key}={base}"
        if scaled_by:
            # llama3 / yarn / longrope factors are already in the length (vLLM's
            # _get_and_verify_max_len leaves them out); linear / dynamic ones multiply it.
            origin += f" x {scaled_by}" if derived != base else f", which {scaled_by} leaves as is"
        if n.explicit(dep.max_model_len) and dep.max_model_len is not None:
            yield from self._length(dep, spec, dep.max_model_len, derived, origin)
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

    def _effective(self, dep: Deployment, spec: ModelSpec) -> tuple[ModelSpec, str]:
        """The spec with the deployment's own RoPE and length overrides applied."""
        overrides = dep.hf_overrides.value if dep.hf_overrides else {}
        overrides = overrides if isinstance(overrides, dict) else {}
        rope = _rope(dep.rope_scaling.value) if dep.rope_scaling else None
        rope = rope or _rope(overrides.get("rope_scaling"))
        length = overrides.get("max_position_embeddings")
        if isinstance(length, int):
            spec = dataclasses.replace(spec, max_position_embeddings=length)
        if rope is not None:
            spec = dataclasses.replace(spec, rope_scaling=rope)
        scale = spec.rope_scaling
        label = (
            f"the `{scale.rope_type}` RoPE factor {scale.factor:g}"
            if scale and scale.factor
            else ""
        )
        return spec, label

    def _length(
        self, dep: Deployment, spec: ModelSpec, value: Sourced[Any], derived: int, origin: str
    ) -> Iterator[Problem]:
        length = int(value.value)
        if length <= derived:
            return
        label, engine = n.name(dep, "max_model_len"), dep.engine.value
        env = _ALLOW.get(engine)
        allowed = env is not None and (
            n.truthy(dep.env.get(env))
            or (engine == "vllm" and n.truthy(dep.allow_long_max_model_len))
        )
        head = f"{label} {length} is greater than the derived maximum {derived} ({origin})"
        if env is not None and not allowed:
            message = f"{head}: {n.engine_name(dep)} will refuse to start unless {env}=1"
            severity = None
        elif env is not None:
            message = f"{head}: {env} lets it start, but RoPE positions past {derived} give NaN"
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
