"""KV102 stated-kv-mismatch: a stated KV figure that no correct computation gives."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field

from kvlint.arith.dtypes import cache_dtype
from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n
from . import _stated


@dataclass(frozen=True)
class Options:
    """KV102's options: how far a stated figure may be from the computed one."""

    tolerance: float = field(
        default=0.05, metadata={"gt": 0, "lt": 1, "description": "bytes figures: exact arithmetic"}
    )
    pool_tolerance: float = field(
        default=0.15, metadata={"gt": 0, "lt": 1, "description": "pool tokens: an estimate"}
    )


class StatedKvMismatch(Rule):
    """## What it does
    Checks stated KV-cache figures against the model's real cache. Every figure a plan states
    (bytes per token, bytes per sequence, pool tokens) is computed at the deployment's cache
    dtype, and a figure more than 5% off (15% for pool tokens, which depend on the engine's
    overheads) that no correct computation explains. Also reports a plan that assumed a cache
    dtype the settings do not configure.

    ## Why is this bad?
    A capacity plan is only as good as its per-token figure: every GPU count, concurrency
    target and context promise multiplies it. A figure copied from another model, a
    calculator that ignores sliding windows, or a cache precision nobody configured gives a
    plan that is wrong before anything is deployed.

    ## Example
    ```yaml
    kvlint: plan/v1
    engine: vllm
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu: L4
    settings:
      max-model-len: 8192
    claims:
      kv_per_token: 64 KiB
    ```

    Use instead:
    ```yaml
    kvlint: plan/v1
    engine: vllm
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu: L4
    settings:
      max-model-len: 8192
    claims:
      kv_per_token: 128 KiB
    ```

    ## Fix safety
    Replacing a stated bytes figure with the computed one is safe. A pool size is kvlint's
    estimate of the engine's accounting, so that replacement is unsafe, as is setting a cache
    dtype (it changes what the engine stores).

    ## Options
    - `tolerance` (default 0.05): how far a bytes figure may be from the computed one.
    - `pool_tolerance` (default 0.15): the same for pool tokens.
    """

    code = "KV102"
    name = "stated-kv-mismatch"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    Options = Options

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec, kv = sizing.spec, sizing.kv
        if spec is None or kv is None:
            return
        opts = self.options
        assert isinstance(opts, Options)
        yield from self._dtype_claim(dep, sizing)
        for v in _stated.verdicts(dep, sizing, opts.tolerance, opts.pool_tolerance):
            if v.kind is not _stated.Kind.MISMATCH:
                continue
            raw = v.stated.raw
            off = n.percent_off(v.stated.value, v.correct)
            if v.claim == "gpus_needed":
                cap = n.settled(sizing).max_num_seqs
                users = dep.claims.concurrency or (cap if n.explicit(cap) else None)
                # An engine with no memory fraction (llama.cpp, Ollama) plans with all of it.
                at_fraction = (
                    ""
                    if v.matched == v.correct
                    else f", and {v.correct} at the engine's memory fraction"
                )
                message = (
                    f"`gpus_needed` {v.stated.value} cannot hold {n.model_name(spec)} and "
                    f"{users.value if users else '?'} sequences of {v.context} tokens: even "
                    f"filled to the last byte that takes {v.matched} GPUs{at_fraction}"
                )
                fix = n.fix(f"Set `gpus_needed` to {v.correct}", v.stated, str(v.correct))
                numbers: tuple[tuple[str, str], ...] = (
                    ("stated", str(v.stated.value)),
                    ("at 100% of GPU memory", str(v.matched)),
                    ("at the memory fraction", str(v.correct)),
                )
                yield Problem(v.stated.span, message, fix, numbers)
                continue
            if v.claim == "kv_pool_tokens":
                message = (
                    f"`kv_pool_tokens` {n.count(v.stated.value)} matches no computation: "
                    f"{n.engine_name(sizing)}'s pool holds {n.count(v.correct)} tokens of "
                    f"{n.model_name(spec)} at {v.dtype} (the stated is {off})"
                )
                fix = n.safe_fix(  # correcting a stated figure changes no behaviour
                    f"Set `kv_pool_tokens` to {n.count(v.correct)}", v.stated, str(v.correct)
                )
            else:
                where = "per token" if v.claim == "kv_per_token" else f"at {v.context} tokens"
                message = (
                    f"`{v.claim}` {n.like(raw, v.stated.value)} matches no computation: "
                    f"{n.model_name(spec)} ({n.shape(spec)}) caches {n.like(raw, v.correct)} "
                    f"{where} at {v.dtype} (the stated is {off})"
                )
                fix = n.safe_fix(
                    f"Set `{v.claim}` to {n.like(raw, v.correct)}", v.stated, n.like(raw, v.correct)
                )
            numbers = (
                (
                    "stated",
                    n.like(raw, v.stated.value)
                    if v.claim != "kv_pool_tokens"
                    else n.count(v.stated.value),
                ),
                (
                    "computed",
                    n.like(raw, v.correct) if v.claim != "kv_pool_tokens" else n.count(v.correct),
                ),
                ("per token", n.gib(_stated.per_token(kv))),
                ("cache dtype", kv.types.label),
                ("layers", n.shape(spec)),
            )
            yield Problem(v.stated.span, message, fix, numbers)

    def _dtype_claim(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        """A plan that assumed a valid cache dtype its settings do not set (KV201 takes the
        cases where the weights' format was taken for the cache's)."""
        claim, spec, kv = dep.claims.kv_cache_dtype, sizing.spec, sizing.kv
        if claim is None or spec is None or kv is None:
            return
        if _stated.is_weight_format(str(claim.value)):
            return
        try:
            assumed = cache_dtype(str(claim.value), spec.dtype)
        except ValueError:
            return
        actual = kv.types.k
        if assumed.bits_per_value == actual.bits_per_value:
            return
        weights = _stated.weight_bits(dep, sizing)
        if assumed.quantised and not actual.quantised and weights is not None:
            return  # KV201: the plan's cache follows the quantised weights
        setting = n.cache_setting(sizing)
        right = _stated.per_token(kv)
        wrong = _stated.per_token(_stated.at(kv, assumed))
        message = (
            f"the plan assumes `kv_cache_dtype` `{claim.value}` but "
            f"{n.name(sizing, 'kv_cache_dtype')} is `{setting}` ({actual.name}): the cache is "
            f"{n.gib(right)} per token, not {n.gib(wrong)}"
        )
        target = n.settled(sizing).cache_dtype
        fix = n.fix(f"Set `kv_cache_dtype: {claim.value}`", target, str(claim.value))
        numbers = (
            ("assumed cache dtype", str(claim.value)),
            ("configured cache dtype", f"{setting} ({actual.name})"),
            ("per token, configured", n.gib(right)),
            ("per token, assumed", n.gib(wrong)),
        )
        yield Problem(claim.span, message, fix, numbers)
