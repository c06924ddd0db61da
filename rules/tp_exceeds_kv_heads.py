"""KV304 tp-exceeds-kv-heads: tensor parallelism that replicates KV heads or splits them."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.arith.kv import layer_token_bytes
from kvlint.arith.parallel import tp_problem
from kvlint.deployment import Deployment
from kvlint.estimate import Refusal
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class TpExceedsKvHeads(Rule):
    """## What it does
    Checks tensor parallelism against the model's head counts. Above the KV head count the KV
    heads are replicated, so the cache per GPU stops shrinking (the message gives what that
    costs); a size that does not divide the head counts stops the engine from starting.

    ## Why is this bad?
    vLLM gives each GPU `max(1, kv_heads // tp)` KV heads: with 8 KV heads at TP 16 every head
    is stored twice, and doubling the GPUs adds no room for context. A TP that does not divide
    the heads is refused at start-up ("Total number of attention heads (64) must be divisible
    by tensor parallel size (6).").

    ## Example
    ```yaml
    model: meta-llama/Llama-3.1-70B-Instruct
    tensor-parallel-size: 6
    max-model-len: 8192
    ```

    Use instead:
    ```yaml
    model: meta-llama/Llama-3.1-70B-Instruct
    tensor-parallel-size: 4
    max-model-len: 8192
    ```

    ## Fix safety
    Changing tensor parallelism changes how many GPUs hold the model, so the fix is unsafe.
    """

    code = "KV304"
    name = "tp-exceeds-kv-heads"
    severity = Severity.WARNING
    engines = frozenset({"vllm", "sglang", "tgi", "trtllm"})
    fix_availability = FixAvailability.ALWAYS

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec, kv = sizing.spec, sizing.kv
        value = n.settled(sizing).tensor_parallel_size
        rules = n.settled(sizing).facts.parallel
        # A size the engine refuses is reported even when it is the engine's own default (TGI
        # shards over the pod's GPUs); replication only when a file chose the size.
        refused = sizing.engine is not None and sizing.engine.refusal is Refusal.LAYOUT
        if spec is None or kv is None or not (n.explicit(value) or refused):
            return
        tp, heads, kv_heads = int(value.value), spec.num_attention_heads, spec.num_key_value_heads
        if tp <= 1 or spec.attention_kind == "MLA" or kv_heads < 1:
            return
        label, model = n.name(sizing, "tensor_parallel_size"), n.model_name(spec)
        rules_text = n.settled(sizing).facts.tp_heads_refusal
        problem = tp_problem(spec, rules, tp)
        if problem is not None:
            best = max(t for t in range(1, tp) if tp_problem(spec, rules, t) is None)
            if heads % tp:
                what = f"does not divide the {heads} attention heads of {model}"
                said = rules_text.format(heads=heads, tp=tp)
                quote = f' ("{said}")' if said else ""
            elif "KV heads" in problem:
                what, quote = f"does not divide the {kv_heads} KV heads of {model}", ""
            else:
                what, quote = f"is refused for {model} ({problem})", ""
            message = f"{label} {tp} {what}: {n.engine_name(sizing)} will refuse to start{quote}"
            numbers: tuple[tuple[str, str], ...] = (
                ("tensor parallel size", str(tp)),
                ("attention heads", str(heads)),
                ("KV heads", str(kv_heads)),
            )
            fix = n.fix(f"Set {label} to {best}", value, str(best))
            yield Problem(value.span, message, fix, numbers, Severity.ERROR)
            return
        if tp <= kv_heads or len(spec.layers) == 0 or not n.explicit(value):
            return
        length = sizing.engine.max_model_len if sizing.engine else None
        length = length or n.settled(sizing).max_model_len.value
        caching = [layer for layer in spec.layers if layer.kind.grows or layer.kind.bounded]
        if not length or length < 0 or not caching:
            return
        # vLLM gives each GPU max(1, kv_heads // tp) heads (ModelConfig.get_num_kv_heads).
        share = [layer_token_bytes(x, kv.types, kv_heads=max(1, x.kv_heads // tp)) for x in caching]
        per_gpu = sum(share)
        seen = [min(length, x.window or length) if x.kind.bounded else length for x in caching]
        stored = tp * sum(b * t for b, t in zip(share, seen, strict=True))
        ideal = sum(layer_token_bytes(x, kv.types) * t for x, t in zip(caching, seen, strict=True))
        message = (
            f"{label} {tp} is above the {kv_heads} KV heads of {model}: each KV head is stored "
            f"on {tp // kv_heads} GPUs, so the cache per GPU stops shrinking at "
            f"{n.gib(per_gpu)} per token; a {n.count(length)}-token sequence takes "
            f"{n.gib(stored)} over the {tp} GPUs instead of {n.gib(ideal)} "
            f"({n.gib(stored - ideal)} more)"
        )
        numbers = (
            ("tensor parallel size", str(tp)),
            ("KV heads", str(kv_heads)),
            ("copies of each KV head", str(tp // kv_heads)),
            ("cache per GPU per token", n.gib(per_gpu)),
            ("one sequence, stored", n.gib(stored)),
            ("one sequence, without replication", n.gib(ideal)),
        )
        title = f"Lower {label} to {kv_heads} and use pipeline or data parallelism for the rest"
        yield Problem(value.span, message, n.fix(title, value, str(kv_heads)), numbers)
