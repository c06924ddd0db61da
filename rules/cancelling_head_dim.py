"""KV101 cancelling-head-dim: a KV figure computed with ``head_dim = d_model / kv_heads``."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n
from . import _stated


class CancellingHeadDim(Rule):
    """## What it does
    Checks for KV-cache figures computed with the cancelling `head_dim`. A stated figure (bytes
    per token, bytes per sequence, pool tokens, GPU count) equal to the cancelled formula
    `2 x layers x d_model x bytes` instead of the grouped-query one is reported, and so is a
    `head_dim` override equal to `hidden_size / num_key_value_heads`.

    ## Why is this bad?
    Head dimension is `d_model / attention heads`. Written as `d_model / kv_heads`, the KV
    head count sits in numerator and denominator of `2 x layers x kv_heads x head_dim x bytes`
    and cancels: what is left is the multi-head figure, with no grouped-query saving. On a
    70B with 64 query heads and 8 KV heads it is 2.5 MiB per token instead of 320 KiB, 8x too
    big (64x on a multi-query model), and a plan built on it buys GPUs the workload never
    needs.

    ## Example
    ```yaml
    kvlint: plan/v1
    engine: vllm
    model: meta-llama/Llama-3.1-70B-Instruct
    gpu: H100-80GB
    gpus: 4
    settings:
      tensor-parallel-size: 4
      max-model-len: 32768
    claims:
      kv_per_token: 2.5 MiB
    ```

    Use instead:
    ```yaml
    kvlint: plan/v1
    engine: vllm
    model: meta-llama/Llama-3.1-70B-Instruct
    gpu: H100-80GB
    gpus: 4
    settings:
      tensor-parallel-size: 4
      max-model-len: 32768
    claims:
      kv_per_token: 320 KiB
    ```

    ## Fix safety
    Replacing a stated bytes or token figure with the computed one is safe: it corrects the
    plan and changes nothing the engine does. A GPU count is an unsafe fix (it changes what
    gets bought), and removing a `head_dim` override has no automatic edit.
    """

    code = "KV101"
    name = "cancelling-head-dim"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec, kv = sizing.spec, sizing.kv
        if spec is None or kv is None:
            return
        heads = f"{spec.num_attention_heads} query heads / {spec.num_key_value_heads} KV heads"
        formula = (
            f"2 x {spec.num_layers} layers x {spec.hidden_size} hidden x "
            f"{kv.types.k.bits_per_value / 8:g} bytes"
        )
        for v in _stated.verdicts(dep, sizing):
            if v.kind is not _stated.Kind.CANCELLED:
                continue
            raw = v.stated.raw
            times = n.ratio(kv.cancelled_per_token_bytes, _stated.token_bytes(kv))
            if v.claim == "gpus_needed":
                message = (
                    f"`gpus_needed` {v.stated.value} sizes the cache with the cancelled formula "
                    f"({n.gib(kv.cancelled_per_token_bytes)} per token); at "
                    f"{n.gib(_stated.per_token(kv))} per token {v.correct} GPUs hold it, "
                    f"{times} less cache ({heads})"
                )
                fix = n.fix(f"Set `gpus_needed` to {v.correct}", v.stated, str(v.correct))
            elif v.claim == "kv_pool_tokens":
                message = (
                    f"`kv_pool_tokens` {n.count(v.stated.value)} is the pool at the cancelled "
                    f"formula's {n.gib(kv.cancelled_per_token_bytes)} per token; at "
                    f"{n.gib(_stated.per_token(kv))} it holds {n.count(v.correct)}, {times} more "
                    f"({heads})"
                )
                fix = n.safe_fix(
                    f"Set `kv_pool_tokens` to {n.count(v.correct)}", v.stated, str(v.correct)
                )
            else:
                where = "per token" if v.claim == "kv_per_token" else f"at {v.context} tokens"
                message = (
                    f"`{v.claim}` {n.like(raw, v.stated.value)} is the cancelled formula "
                    f"{formula} (head_dim taken as d_model / KV heads); {n.model_name(spec)} "
                    f"caches {n.like(raw, v.correct)} {where}, {times} less ({heads})"
                )
                fix = n.safe_fix(
                    f"Set `{v.claim}` to {n.like(raw, v.correct)}", v.stated, n.like(raw, v.correct)
                )
            numbers = (
                ("stated", n.like(raw, v.stated.value) if v.claim.startswith("kv_per") else ""),
                ("cancelled formula per token", n.gib(kv.cancelled_per_token_bytes)),
                ("GQA formula per token", n.gib(_stated.token_bytes(kv))),
                ("query heads / KV heads", heads),
                ("cache dtype", kv.types.label),
            )
            yield Problem(v.stated.span, message, fix, tuple(x for x in numbers if x[1]))
        yield from self._override(dep, sizing)

    def _override(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec = sizing.spec
        overrides = n.settled(sizing).hf_overrides
        if spec is None or overrides is None or not isinstance(overrides.value, dict):
            return
        head_dim = overrides.value.get("head_dim")
        kv_heads = spec.num_key_value_heads
        if not isinstance(head_dim, int) or kv_heads in (0, spec.num_attention_heads):
            return
        if head_dim != spec.hidden_size // kv_heads or head_dim == spec.head_dim:
            return
        message = (
            f"`hf_overrides` sets `head_dim` {head_dim} = hidden_size {spec.hidden_size} / "
            f"{kv_heads} KV heads, the cancelling error; {n.model_name(spec)}'s head_dim is "
            f"{spec.head_dim}, so the cache would be sized "
            f"{n.ratio(head_dim, spec.head_dim)} too big "
            f"({spec.num_attention_heads} query heads / {kv_heads} KV heads)"
        )
        numbers = (
            ("override head_dim", str(head_dim)),
            ("model head_dim", str(spec.head_dim)),
            ("hidden_size", str(spec.hidden_size)),
            ("KV heads", str(kv_heads)),
        )
        yield Problem(
            overrides.span, message, n.fix("Remove `head_dim` from `hf_overrides`"), numbers
        )
