"""KV305 engine-pool-below-first-principles: the engine's pool far below what the memory holds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field

from kvlint.deployment import Deployment
from kvlint.estimate import EngineEstimate
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n
from . import _pool_causes


@dataclass(frozen=True)
class Options:
    """KV305's options."""

    ratio: float = field(
        default=0.5,
        metadata={"gt": 0, "le": 1, "description": "report below this share of first principles"},
    )


class EnginePoolBelowFirstPrinciples(Rule):
    """## What it does
    Checks that the engine's KV-cache pool is not far below what the memory holds. Like with
    like: the requests of the deployment's own `max_model_len` the engine admits are compared
    with the requests of that length the same memory holds at first principles, each keeping
    its sliding windows and states. A pool below half of it is reported only when a cause
    kvlint can name accounts for the gap (the hybrid manager or sliding window disabled,
    chunked attention paged as full, the window reservation of the in-flight batch tokens, MLA
    latents copied on every tensor-parallel rank), with the ratio and the setting that
    recovers it.

    ## Why is this bad?
    The engine's number is the admission limit, so it is the one to plan on; but when it is
    far below what the hardware holds, a flag or an engine version is leaving capacity on the
    table. Gemma-style models, whose local layers keep only a window, lose most of their pool
    when every layer is charged for every token, or when each request reserves a window plus a
    whole batch of in-flight tokens in every windowed layer.

    ## Example
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: gemma-3}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args: [--model=google/gemma-3-27b-it, --max-model-len=32768,
                 --max-num-batched-tokens=1024, --disable-hybrid-kv-cache-manager]
          resources: {limits: {nvidia.com/gpu: 1}}
    ```

    Use instead:
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: gemma-3}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args: [--model=google/gemma-3-27b-it, --max-model-len=32768,
                 --max-num-batched-tokens=1024]
          resources: {limits: {nvidia.com/gpu: 1}}
    ```

    ## Fix safety
    Re-enabling the hybrid manager or the window changes the engine's allocator, so the fix
    is unsafe.

    ## Options
    - `ratio` (default 0.5): report pools below this share of the first-principles tokens.
    """

    code = "KV305"
    name = "engine-pool-below-first-principles"
    severity = Severity.WARNING
    # llama.cpp's pool is its `-c`, not memory; TensorRT-LLM pages sliding windows by window
    # (VSWA), so of the causes only its MLA copies on tensor-parallel ranks apply to it.
    engines = frozenset({"vllm", "sglang", "tgi", "trtllm"})
    fix_availability = FixAvailability.SOMETIMES
    Options = Options

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine, spec, kv = sizing.engine, sizing.spec, sizing.kv
        if engine is None or spec is None or kv is None or not engine.max_model_len:
            return
        tokens, pool = _admitted_tokens(engine), n.pool_bytes(sizing)
        length = engine.max_model_len
        per_sequence = kv.per_sequence_bytes(length)
        if not tokens or not pool or per_sequence <= 0:
            return
        # Like with like: what the same memory holds at first principles for requests of the
        # deployment's own max_model_len, each keeping its windows and states.
        ideal_sequences = pool / per_sequence
        ideal = round(ideal_sequences * length)
        opts = self.options
        assert isinstance(opts, Options)
        if tokens >= opts.ratio * ideal:
            return
        tp = n.settled(sizing).tensor_parallel_size.value
        if spec.attention_kind != "MLA" and tp > spec.num_key_value_heads:
            return  # replicated KV heads: KV304 reports that, with what it costs
        found = _pool_causes.find(dep, sizing)
        if found.explained is None or found.explained < opts.ratio * ideal:
            return  # no cause kvlint can name accounts for the gap: nothing to tell the user
        if tokens >= opts.ratio * found.explained:
            return  # the named cause costs less than the gap: it would not be the reason
        sequences = tokens / length
        message = (
            f"{n.engine_name(sizing)} admits {_seqs(sequences)} requests of {n.count(length)} "
            f"tokens ({n.count(tokens)} tokens) where the same {n.gib(pool)} holds "
            f"{_seqs(ideal_sequences)} at first principles ({n.gib(per_sequence)} each), "
            f"{n.ratio(ideal, tokens)} more: {found.text}"
        )
        numbers = [
            ("engine pool tokens", n.count(tokens)),
            ("engine requests of max_model_len", _seqs(sequences)),
            ("first-principles requests of max_model_len", _seqs(ideal_sequences)),
            ("first-principles tokens at max_model_len", n.count(ideal)),
            ("first principles per request", n.gib(per_sequence)),
            ("without the cause", f"{n.count(found.explained)} tokens"),
            ("pool", n.pool_text(sizing, pool)),
            ("cause", found.text),
        ]
        if engine.first_principles_tokens:
            # The seeds' figure: one sequence as long as the pool, growing layers only.
            numbers.append(
                (
                    "first principles, one unbounded sequence",
                    n.count(engine.first_principles_tokens),
                )
            )
        yield Problem(found.target.span, message, found.fix, tuple(numbers))


def _seqs(value: float) -> str:
    """'26.98', '209.65': requests to two decimals, as vLLM logs its maximum concurrency."""
    return f"{value:,.2f}"


def _admitted_tokens(engine: EngineEstimate) -> int | None:
    """What the pool holds as the engine admits it: its blocks over one full-length request's
    blocks, times ``max_model_len`` (the current vLLM's ``get_kv_cache_capacity``). vLLM 0.11
    and before log ``num_blocks // len(kv_cache_groups) x block_size`` instead, which charges a
    hybrid model's sliding groups for every token although they keep only the window: Gemma
    3 27B at 32K on 0.10 logs 46,016 tokens yet admits 6.28 full-length requests (205,807)."""
    blocks, per_request = engine.num_blocks, engine.blocks_per_request
    if blocks and per_request and engine.max_model_len:
        return blocks * engine.max_model_len // per_request
    return engine.kv_cache_tokens
