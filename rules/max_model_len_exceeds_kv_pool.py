"""KV302 max-model-len-exceeds-kv-pool: one sequence of max_model_len does not fit the pool."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.estimate import Refusal
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class MaxModelLenExceedsKvPool(Rule):
    """## What it does
    Checks that one request of `max_model_len` tokens fits in the KV-cache memory. The memory
    is what the engine has left after weights and activations; the finding gives the largest
    `max_model_len` that fits. The memory is a prediction with a 90% band (from real start-up
    logs): outside the band the finding is an error, inside it a warning that the engine may
    refuse, with both numbers.

    ## Why is this bad?
    vLLM checks this at start-up and refuses to run: "To serve at least one request with the
    model's max seq len (131072), (40.00 GiB KV cache is needed, which is larger than the
    available KV cache memory (28.50 GiB)". The pod crash-loops after downloading the weights,
    minutes into a rollout. When `max_model_len` is left out the model's full context is
    used, which is how a model upgrade with a longer context breaks a deployment that worked.

    ## Example
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-70b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=2,
                 --max-model-len=131072, --gpu-memory-utilization=0.95]
          resources: {limits: {nvidia.com/gpu: 2}}
    ```

    Two H100s leave about 5 GiB a GPU after the 70B weights: 2,896 tokens at the band's low end.
    Four hold the full context.

    Use instead:
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-70b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=4,
                 --max-model-len=131072, --gpu-memory-utilization=0.95]
          resources: {limits: {nvidia.com/gpu: 4}}
    ```

    ## Fix safety
    Lowering `max_model_len` shortens the longest request the server accepts, so the fix is
    unsafe.
    """

    code = "KV302"
    name = "max-model-len-exceeds-kv-pool"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine = sizing.engine
        if engine is not None and engine.shortened_max_model_len is not None:
            yield from self._shortened(dep, sizing, engine.shortened_max_model_len)
            return
        if engine is None:
            return
        at_risk = engine.refusal_at_risk
        if at_risk not in (Refusal.ONE_REQUEST, Refusal.CACHE_ALLOCATION):
            return
        borderline = engine.borderline
        settled = n.settled(sizing)
        available, needed = engine.available_kv_bytes, engine.needed_bytes_one_sequence
        if available is None or needed is None or available <= 0:
            return  # no memory at all is KV303's finding
        # A cache allocated up front for every slot (llama.cpp's -c over -np slots): one slot
        # may fit where all of them do not.
        every_slot = engine.refusal is Refusal.CACHE_ALLOCATION and needed <= available
        cache = (engine.kv_buffer_bytes or needed) if every_slot else needed
        length = engine.max_model_len
        # the figure the fix lowers: the whole context over every slot, else one request's
        total = engine.kv_cache_tokens if every_slot and engine.kv_cache_tokens else length
        block = settled.facts.length_granularity or engine.block_size or 16
        largest = engine.estimated_max_model_len
        if largest is None:
            largest = available * total // cache // block * block if cache else 0
        written = settled.max_model_len
        target: Sourced[Any] | None = written if n.explicit(written) else None
        field = n.name(sizing, "max_model_len")
        claim = dep.claims.context
        if not n.explicit(target) and claim is not None and claim.value == length:
            target, field = claim, "`context`"
        refusal = settled.facts.one_request_refusal
        severity: Severity | None = None
        band = n.band(engine)
        doubt = engine.version_doubt
        if doubt is not None:
            # No file names the version and the release lines' verdicts differ: say which,
            # once, at warning (the figures and the band are the first line's).
            refusal, severity = doubt, Severity.WARNING
        elif engine.caveat is not None:
            # A default decided it (a GPU name that does not pin the memory): say so, at
            # warning.
            refusal, severity = engine.caveat, Severity.WARNING
        elif borderline:
            # The band straddles the limit: an error only outside it.
            refusal, severity = n.may_refuse(sizing), Severity.WARNING
        low_end = None
        if band is not None and engine.available_kv_bytes_low is not None and not every_slot:
            # the largest length that fits at the low end of this release line's band
            low_end = engine.available_kv_bytes_low * length // needed // block * block
        fits_where = "fits"
        if low_end is not None and low_end < largest:
            if low_end > 0:
                largest, fits_where = low_end, "fits the band's low end"
            else:
                fits_where = "fits the prediction (none fits the band's low end)"
        if largest >= total:
            largest = 0  # the figures' line fits across its band: no shorter length to offer
            estimate = ""
        elif largest > 0:
            estimate = f"; the largest {field} that {fits_where} is {largest}"
        else:
            estimate = "; not even one block fits"
        unset = "" if n.explicit(target) else " (not set: the model's full context)"
        at = f" at {settled.facts.display} {engine.version}" if doubt is not None else ""
        quoted = f" (90% band {band})" if band is not None else ""
        if every_slot:
            total = engine.kv_cache_tokens or length
            message = (
                f"{field} {total}{unset} holds {round(total / length)} slots of {length} tokens "
                f"and needs {n.gib2(cache)} of KV cache, more than the {n.gib2(available)} left "
                f"beside the weights: {refusal}{estimate}"
            )
        elif needed > available:
            message = (
                f"{field} {length}{unset} needs {n.gib2(needed)} of KV cache for one request, "
                f"more than the {n.gib2(available)}{' predicted' if band else ''} available per "
                f"GPU{at}{quoted}: "
                f"{refusal}{estimate}"
            )
        else:
            message = (
                f"{field} {length}{unset} needs {n.gib2(needed)} of KV cache for one request; "
                f"{n.gib2(available)} is predicted available per GPU{at}{quoted}: "
                f"{refusal}{estimate}"
            )
        if every_slot:
            numbers: tuple[tuple[str, str], ...] = (
                ("context, every slot", str(engine.kv_cache_tokens or length)),
                ("context of one slot", str(length)),
                ("KV cache, every slot", n.gib2(cache)),
                ("memory beside the weights", n.gib2(available)),
                ("largest context that fits", str(largest)),
            )
        else:
            numbers = (
                ("max_model_len", str(length)),
                ("needed per GPU, one request", n.gib2(needed)),
                ("available KV memory per GPU", n.gib2(available)),
                ("largest max_model_len that fits", str(largest)),
                ("memory fraction", f"{engine.memory_fraction}" if engine.memory_fraction else "?"),
            )
            if band is not None:
                numbers += (("available KV memory, 90% band", band),)
        span = target.span if target is not None else (dep.model or dep.engine).span
        fix = None
        if largest > 0:
            verb = "Lower" if n.explicit(target) else "Set"
            fix = n.fix(f"{verb} {field} to {largest}", target, str(largest))
        elif doubt is not None:
            fix = n.fix(f"Name the {settled.facts.display} version the deployment runs")
        yield Problem(span, message, fix, numbers, severity)

    def _shortened(self, dep: Deployment, sizing: Sizing, shortened: int) -> Iterator[Problem]:
        """The engine starts, but with a shorter max_model_len than the files ask for (a
        warning: longer requests are refused at request time, not the deployment)."""
        engine = sizing.engine
        assert engine is not None
        settled = n.settled(sizing)
        available, needed = engine.available_kv_bytes, engine.needed_bytes_one_sequence
        if available is None or needed is None:
            return
        written = settled.max_model_len
        target: Sourced[Any] | None = written if n.explicit(written) else None
        field = n.name(sizing, "max_model_len")
        unset = "" if n.explicit(target) else " (not set: the model's full context)"
        message = (
            f"{field} {engine.max_model_len}{unset} needs {n.gib2(needed)} of KV cache for one "
            f"request, more than the {n.gib2(available)} pool per GPU: "
            f"{settled.facts.display} starts with it lowered to {shortened} and refuses longer "
            "requests"
        )
        numbers = (
            ("max_model_len", str(engine.max_model_len)),
            ("needed per GPU, one request", n.gib2(needed)),
            ("KV pool per GPU", n.gib2(available)),
            ("the engine's max_model_len", str(shortened)),
        )
        span = target.span if target is not None else (dep.model or dep.engine).span
        verb = "Lower" if n.explicit(target) else "Set"
        fix = n.fix(f"{verb} {field} to {shortened}", target, str(shortened))
        yield Problem(span, message, fix, numbers, Severity.WARNING)
