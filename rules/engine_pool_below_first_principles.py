"""KV305 engine-pool-below-first-principles: the engine's pool far below what the memory holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pydantic

from kvlint.deploy.model import Deployment
from kvlint.deploy.model import Sourced
from kvlint.finding import Fix
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class Options(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    ratio: float = pydantic.Field(0.5, gt=0, le=1)  # report below this share of first principles


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
    metadata:
      name: gemma-3
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args:
            - --model=google/gemma-3-27b-it
            - --max-model-len=32768
            - --max-num-batched-tokens=1024
            - --disable-hybrid-kv-cache-manager
          resources:
            limits:
              nvidia.com/gpu: 1
    ```

    Use instead:
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata:
      name: gemma-3
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-h100-80gb
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args:
            - --model=google/gemma-3-27b-it
            - --max-model-len=32768
            - --max-num-batched-tokens=1024
          resources:
            limits:
              nvidia.com/gpu: 1
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
    fix_availability = FixAvailability.SOMETIMES
    Options = Options

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine, spec = sizing.engine, sizing.spec
        if engine is None or spec is None:
            return
        tokens, ideal = engine.kv_cache_tokens, engine.first_principles_tokens
        opts = self.options
        assert isinstance(opts, Options)
        if not tokens or not ideal or tokens >= opts.ratio * ideal:
            return
        tp = dep.tensor_parallel_size.value if dep.tensor_parallel_size else 1
        if spec.attention_kind != "MLA" and tp > spec.num_key_value_heads:
            return  # replicated KV heads: KV304 reports that, with what it costs
        cause, target, fix = self._cause(dep, sizing)
        message = (
            f"{n.engine_name(dep)}'s pool holds {n.count(tokens)} tokens where the same memory "
            f"holds {n.count(ideal)} at first principles ({n.ratio(ideal, tokens)} fewer): {cause}"
        )
        numbers = (
            ("engine pool tokens", n.count(tokens)),
            ("first-principles tokens", n.count(ideal)),
            ("available KV memory per GPU", n.gb(engine.available_kv_bytes or 0)),
            ("cause", cause),
        )
        yield Problem(target.span, message, fix, numbers)

    def _cause(self, dep: Deployment, sizing: Sizing) -> tuple[str, Sourced[Any], Fix | None]:
        spec = sizing.spec
        assert spec is not None
        local = sum(1 for layer in spec.layers if layer.kind.bounded)
        layers = f"the {local} sliding-window layers"
        switches: list[tuple[Sourced[Any] | None, str, str, str]] = [
            (
                dep.disable_hybrid_kv_cache_manager,
                "disable_hybrid_kv_cache_manager",
                f"the hybrid KV cache manager is disabled, so {layers} get blocks for every token",
                "false",
            ),
            (
                dep.disable_sliding_window,
                "disable_sliding_window",
                f"the sliding window is disabled, so {layers} keep every token",
                "false",
            ),
            (dep.swa_full, "swa_full", f"`--swa-full` sizes {layers} for the full context", ""),
            (
                dep.settings.get("disable-hybrid-swa-memory"),
                "disable_hybrid_swa_memory",
                f"the hybrid SWA pool is disabled, so {layers} get a full-size pool",
                "",
            ),
        ]
        for switch, key, cause, off in switches:
            if local and n.truthy(switch) and switch is not None:
                title = f"Set `{key}: false`" if off else f"Remove `{key}`"
                # A bare flag (`--disable-hybrid-kv-cache-manager`) has no value to edit.
                bare = switch.raw is None or str(switch.raw).startswith("-")
                edit = None if bare or not off else off
                return f"{cause} (`{key}`)", switch, n.fix(title, switch, edit)
        notes = sizing.engine.notes if sizing.engine else ()
        release = n.version(dep)
        if local and dep.engine.value == "vllm" and release is not None and release < (0, 21):
            cause = (
                f"vLLM {'.'.join(map(str, release))} groups {layers} with padding layers and "
                f"charges them past the window"
            )
            target = dep.engine_version or dep.engine
            return cause, target, n.fix("Upgrade vLLM to a release with the current allocator")
        batched = self._batched(dep, sizing)
        window = max((layer.window or 0 for layer in spec.layers if layer.kind.bounded), default=0)
        if local and dep.engine.value == "vllm" and batched is not None and batched > window:
            # vllm/v1/kv_cache_interface.py SlidingWindowSpec: each request reserves
            # cdiv(window - 1 + max_in_flight_tokens, block) + 1 blocks in every local layer.
            cause = (
                f"vLLM reserves each request's window ({window}) plus the in-flight tokens of "
                f"`max_num_batched_tokens` {batched} in each of {layers}"
            )
            batched_value = dep.max_num_batched_tokens
            title = f"Lower `max_num_batched_tokens` toward the {window}-token window"
            if batched_value is not None and n.explicit(batched_value):
                return cause, batched_value, n.fix(title)
            return cause, dep.model or dep.engine, n.fix(title)
        cause = notes[0] if notes else "the engine's own accounting (block rounding, grouping)"
        return cause, dep.model or dep.engine, None

    def _batched(self, dep: Deployment, sizing: Sizing) -> int | None:
        """``max_num_batched_tokens`` as the file sets it, else vLLM's default for the GPU."""
        if dep.max_num_batched_tokens is not None:
            return int(dep.max_num_batched_tokens.value)
        from kvlint.arith.engines.defaults import vllm_batch_defaults
        from kvlint.arith.engines.defaults import vllm_version

        release, _ = vllm_version(str(dep.engine_version.value) if dep.engine_version else None)
        return vllm_batch_defaults(release, sizing.gpu)[1]
