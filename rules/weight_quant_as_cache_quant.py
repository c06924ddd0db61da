"""KV201 weight-quant-as-cache-quant: a plan or setting that has the cache follow the weights."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing
from kvlint.versions import version_label

from . import _numbers as n
from . import _stated


class WeightQuantAsCacheQuant(Rule):
    """## What it does
    Checks for a cache assumed to shrink with the weights. It reports a plan whose cache figures
    assume the cache is stored at the weights' precision (AWQ, GPTQ, INT4, FP8 weights, GGUF
    Q4_K_M ...) while the cache is left at `auto` / `f16`, and a weight-quantisation name
    given as a cache dtype in any engine's spelling (`--kv-cache-dtype awq`, SGLang's
    `--kv-cache-dtype gptq`, llama.cpp's `--cache-type-k q4_K_M`,
    `OLLAMA_KV_CACHE_TYPE=q4_K_M`), where the engine refuses it or, as Ollama before 0.30
    does, ignores it. A plan that names a quantised checkpoint only by its id (`-AWQ`,
    `-GPTQ-Int4`, `-FP8`) is judged by the weights that id resolves to.

    ## Why is this bad?
    Weight quantisation and cache quantisation are separate settings. INT4 weights divide the
    weights by four and leave the cache where it was: every serving engine keeps keys and
    values in the model's 16-bit dtype unless a KV-cache flag (`--kv-cache-dtype fp8`,
    `--cache-type-k q8_0`) says otherwise. A plan that assumed a 4-bit cache understates it
    4x, and the deployment runs out of cache under load.

    ## Example
    ```yaml
    kvlint: plan/v1
    engine: vllm
    model: hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4
    gpu: H100-80GB
    gpus: 2
    settings:
      tensor-parallel-size: 2
      max-model-len: 32768
    claims:
      kv_cache_dtype: int4
    ```

    Use instead:
    ```yaml
    kvlint: plan/v1
    engine: vllm
    model: hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4
    gpu: H100-80GB
    gpus: 2
    settings:
      tensor-parallel-size: 2
      max-model-len: 32768
      kv-cache-dtype: fp8
    claims:
      kv_cache_dtype: fp8
    ```

    ## Fix safety
    Setting a quantised cache dtype changes what the engine stores (and its accuracy), so
    that fix is unsafe; correcting a stated bytes figure to the 16-bit cache is safe.
    """

    code = "KV201"
    name = "weight-quant-as-cache-quant"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    # A weight format given as the cache dtype is reported even when the model is unknown.
    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        yield from self._settings(dep, sizing)
        spec, kv = sizing.spec, sizing.kv
        if spec is None or kv is None:
            return
        weights = _stated.weight_bits(dep, sizing)
        label = f" ({_stated.weight_label(weights)})" if weights else ""
        setting = n.cache_setting(sizing)
        eight = n.cache_8bit(sizing)
        claim = dep.claims.kv_cache_dtype
        assumed = _stated.claimed_dtype(dep, spec)
        if claim is not None and assumed is not None and not kv.types.k.quantised:
            text = str(claim.value)
            if _stated.is_weight_format(text) or (assumed.quantised and weights is not None):
                right = _stated.per_token(kv)
                wrong = _stated.per_token(_stated.at(kv, assumed))
                field = n.name(sizing, "kv_cache_dtype")
                # "the weights' precision" only when it is (int4 over FP8 weights is a weight
                # format, but not theirs).
                theirs = weights is not None and weights[0] == assumed.bits_per_value
                what = (
                    f"the weights' precision{label}"
                    if theirs
                    else f"a weight quantisation (the weights are {label.strip(' ()')})"
                    if weights is not None
                    else "a weight quantisation"
                )
                message = (
                    f"the plan assumes `kv_cache_dtype` `{text}`, {what}, but {field} is "
                    f"`{setting}`: the cache stays "
                    f"{kv.types.k.name}, {n.gib(right)} per token, not {n.gib(wrong)} "
                    f"({n.ratio(right, wrong)})"
                )
                numbers = (
                    ("assumed cache dtype", text),
                    ("weights", label.strip(" ()") or "16-bit"),
                    ("configured cache dtype", f"{setting} ({kv.types.k.name})"),
                    ("per token, configured", n.gib(right)),
                    ("per token, assumed", n.gib(wrong)),
                )
                target = n.settled(sizing).cache_dtype
                fix = n.fix(f"Set `kv_cache_dtype: {eight}`", target, eight)
                yield Problem(claim.span, message, fix, numbers)
        for v in _stated.verdicts(dep, sizing):
            if v.kind is not _stated.Kind.WEIGHT_QUANT:
                continue
            raw = v.stated.raw
            where = "per token" if v.claim == "kv_per_token" else f"at {v.context} tokens"
            message = (
                f"`{v.claim}` {n.like(raw, v.stated.value)} is the cache at the weights' "
                f"precision{label}; with {n.name(sizing, 'kv_cache_dtype')} `{setting}` the cache "
                f"is {kv.types.k.name}: {n.like(raw, v.correct)} {where} "
                f"({n.ratio(v.correct, v.stated.value)})"
            )
            figures: tuple[tuple[str, str], ...] = (
                ("stated", n.like(raw, v.stated.value)),
                ("at the configured cache dtype", n.like(raw, v.correct)),
                ("configured cache dtype", f"{setting} ({kv.types.k.name})"),
            )
            fix = n.safe_fix(
                f"Set `{v.claim}` to {n.like(raw, v.correct)}", v.stated, n.like(raw, v.correct)
            )
            yield Problem(v.stated.span, message, fix, figures)

    def _settings(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        """A weight format written where the engine reads a cache dtype, which it does not take
        as one (the reader kept it out of the field: this runs when the model is unknown too)."""
        facts = sizing.facts
        eight = n.cache_8bit(sizing)
        for field, value in dep.weight_format_cache.items():
            spelled = n.name(sizing, field)
            engine = n.engine_name(sizing)
            release = n.release(sizing, dep)
            ignored = facts is not None and facts.unlisted_cache_dtype_ignored_before
            if ignored and (release is None or release < ignored):
                stated = release is not None and dep.engine_version is not None
                label = f"{engine} {version_label(release)}" if stated and release else engine
                effect = f"{label} ignores it"
                default = facts.default_cache_dtype if facts is not None else "auto"
            else:
                effect = f"{engine} refuses it"
                default = None
            message = (
                f"{spelled} `{value.value}` is the weights' quantisation, not a cache dtype: "
                f"{effect}; the cache stays 16-bit unless {spelled} names a cache dtype such as "
                f"`{eight}`"
            )
            numbers = (
                ("setting", f"{value.value}"),
                ("engine", engine),
                ("an 8-bit cache", eight),
            ) + ((("the cache it keeps", default),) if default else ())
            yield Problem(
                value.span, message, n.fix(f"Set `{field}: {eight}`", value, eight), numbers
            )
