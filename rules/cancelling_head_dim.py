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
    `head_dim` equal to `hidden_size / num_key_value_heads` wherever it is written: an
    `hf_overrides` object (`{"head_dim": 1024}`, vLLM's dotted `--hf-overrides.head_dim=1024`,
    a multimodal model's `{"text_config": {"head_dim": 336}}`), or a hand-written config.json
    whose query heads x head_dim is not its hidden_size, in a shape no published checkpoint
    has (the model is then read at `hidden_size / num_attention_heads`). A figure per
    sequence is compared per sequence: on a model with sliding-window or state layers that
    ratio is larger than the per-token one.

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
            # The ratio the user can check against their own figure: per token for a per-token
            # claim, per sequence for one at a context (on a hybrid model the sliding and state
            # layers do not grow, so 43.7 GB against 3.12 GB is 14x, not the per-token 2.6x).
            times = n.ratio(kv.cancelled_per_token_bytes, _stated.token_bytes(kv))
            if v.claim == "kv_per_sequence" and v.correct:
                times = n.ratio(v.stated.value, v.correct)
            elif v.claim == "kv_pool_tokens" and v.stated.value:
                times = n.ratio(v.correct, v.stated.value)
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
        yield from self._config(dep, sizing)

    def _config(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        """A config.json that wrote the cancelling head_dim itself (a calculator's): the model
        was read back at hidden_size / query heads, and the config is what to correct."""
        spec, kv = sizing.spec, sizing.kv
        written = spec.config_head_dim if spec is not None else None
        if spec is None or kv is None or written is None:
            return
        right = _stated.token_bytes(kv)
        wrong = kv.cancelled_per_token_bytes
        message = (
            f"the model config {spec.source} sets `head_dim` {written} = hidden_size "
            f"{spec.hidden_size} / {spec.num_key_value_heads} KV heads, the cancelling error "
            f"({spec.num_attention_heads} query heads x {written} = "
            f"{spec.num_attention_heads * written:,}, not {spec.hidden_size}): at head_dim "
            f"{spec.head_dim} the cache is {n.gib(right)} per token, not {n.gib(wrong)} "
            f"({n.ratio(wrong, right)})"
        )
        numbers = (
            ("config head_dim", str(written)),
            ("hidden_size / query heads", str(spec.head_dim)),
            ("GQA formula per token", n.gib(right)),
            ("cancelled formula per token", n.gib(wrong)),
        )
        fix = n.fix(f"Set `head_dim` to {spec.head_dim} in the model config")
        yield Problem((dep.model or dep.engine).span, message, fix, numbers)

    def _override(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec = sizing.spec
        overrides = n.settled(sizing).hf_overrides
        if spec is None or overrides is None or not isinstance(overrides.value, dict):
            return
        kv_heads = spec.num_key_value_heads
        if kv_heads in (0, spec.num_attention_heads):
            return
        for path, head_dim in _head_dims(overrides.value):
            if head_dim != spec.hidden_size // kv_heads or head_dim == spec.head_dim:
                continue
            field = n.name(sizing, "hf_overrides")
            message = (
                f"{field} sets `{path}` {head_dim} = hidden_size {spec.hidden_size} / "
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
            yield Problem(overrides.span, message, n.fix(f"Remove `{path}` from {field}"), numbers)


# The sub-configs a multimodal config nests its language model in (Gemma 3's text_config):
# an override reaches the text model's head_dim through them.
_TEXT_CONFIGS = ("text_config", "language_config", "llm_config", "thinker_config")


def _head_dims(overrides: dict[str, object]) -> Iterator[tuple[str, int]]:
    """Each `head_dim` an `hf_overrides` object sets for the language model, with its path."""
    value = overrides.get("head_dim")
    if isinstance(value, int) and not isinstance(value, bool):
        yield "head_dim", value
    for key in _TEXT_CONFIGS:
        nested = overrides.get(key)
        if isinstance(nested, dict):
            for path, found in _head_dims(nested):
                yield f"{key}.{path}", found
