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
    Checks that the engine's KV-cache pool is not far below what the memory holds. The pool
    the engine will allocate (in tokens) is compared with what the same memory holds at first
    principles, and a pool below half of it is reported, naming the cause (a
    hybrid model with the hybrid manager or sliding window disabled, a full-size SWA cache,
    an engine version that pads or ignores the window) and the setting that recovers it.

    ## Why is this bad?
    The engine's number is the admission limit, so it is the one to plan on; but when it is
    far below what the hardware holds, a flag or an engine version is leaving capacity on the
    table. Gemma-style models, whose local layers keep only a window, lose most of their pool
    when every layer is charged for every token: 720,000 tokens where 11 million fit.

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
    engines = frozenset({"vllm", "sglang", "tgi"})  # llama.cpp's pool is its `-c`, not memory
    fix_availability = FixAvailability.SOMETIMES
    Options = Options

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine, spec = sizing.engine, sizing.spec
        if engine is None or spec is None:
            return
        tokens, ideal = _admitted_tokens(engine), engine.first_principles_tokens
        opts = self.options
        assert isinstance(opts, Options)
        if not tokens or not ideal or tokens >= opts.ratio * ideal:
            return
        tp = n.settled(sizing).tensor_parallel_size.value
        if spec.attention_kind != "MLA" and tp > spec.num_key_value_heads:
            return  # replicated KV heads: KV304 reports that, with what it costs
        cause, target, fix = _pool_causes.find(dep, sizing)
        message = (
            f"{n.engine_name(sizing)}'s pool holds {n.count(tokens)} tokens where the same memory "
            f"holds {n.count(ideal)} at first principles ({n.ratio(ideal, tokens)} fewer): {cause}"
        )
        numbers = (
            ("engine pool tokens", n.count(tokens)),
            ("first-principles tokens", n.count(ideal)),
            ("available KV memory per GPU", n.gb(engine.available_kv_bytes or 0)),
            ("cause", cause),
        )
        yield Problem(target.span, message, fix, numbers)


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
