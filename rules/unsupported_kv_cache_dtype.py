"""KV202 unsupported-kv-cache-dtype: a cache dtype the engine version or the GPU cannot use."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.arith.dtypes import cache_dtype
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.estimate import Refusal
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.settled import EngineFacts
from kvlint.settled import Settled
from kvlint.sizing import Sizing
from kvlint.versions import parse_version
from kvlint.versions import version_label

from . import _numbers as n
from . import _stated

_OFF = ("off", "false", "0", "no", "disabled")


class UnsupportedKvCacheDtype(Rule):
    """## What it does
    Checks that the engine and the GPU support the KV-cache dtype. It reports a dtype the
    engine version does not list, an e4m3 `fp8` cache in vLLM on a GPU below compute
    capability 8.9, and a quantised V cache in llama.cpp (or Ollama) with flash attention
    turned off, or in Ollama before 0.30 left unset for a model it does not turn it on for
    itself (llama, mistral, qwen2 ...).

    ## Why is this bad?
    vLLM refuses an unknown `--kv-cache-dtype` at start-up; its Triton kernels cannot store
    e4m3 on Ampere ("type fp8e4nv not supported in this architecture"); llama.cpp refuses a
    quantised V cache without flash attention ("quantized V cache requires flash_attn to be
    enabled"); Ollama before 0.30 silently falls back to a 16-bit cache ("quantized kv cache
    requires flash attention"), and from 0.30 hands both to llama-server, which refuses
    them. The deployment either does
    not start or holds half the cache the plan counted on.

    ## Example
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-8b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-a100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-8B-Instruct, --kv-cache-dtype=fp8]
          resources: {limits: {nvidia.com/gpu: 1}}
    ```

    Use instead:
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-8b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-a100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-8B-Instruct, --kv-cache-dtype=auto]
          resources: {limits: {nvidia.com/gpu: 1}}
    ```

    ## Fix safety
    Changing the cache dtype or turning flash attention on changes what the engine runs, so
    every fix is unsafe.
    """

    code = "KV202"
    name = "unsupported-kv-cache-dtype"
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    needs_model = False

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        facts = sizing.facts
        if facts is None:
            return
        # The dtype as the file states it: checked with the model unknown too (nothing settled).
        for field in ("kv_cache_dtype", "kv_cache_dtype_v"):
            value = getattr(dep, field)
            if value is None or _stated.is_weight_format(str(value.value)):
                continue  # KV201 reports weight formats
            yield from self._listed(dep, sizing, facts, field, value)
        settled = sizing.settled
        if settled is None:
            return
        if facts.fp8_cache_needs_sm89:
            yield from self._fp8_on_old_gpu(settled, sizing)
        if facts.quantised_v_without_flash is not None:
            yield from self._v_without_flash(settled, sizing)
        if settled.cache_note is not None and settled.cache_types is None:
            yield from self._unsized(settled, sizing)
        if facts.quantised_v_without_flash is None:
            yield from self._refused(settled, sizing)

    def _refused(self, settled: Settled, sizing: Sizing) -> Iterator[Problem]:
        """A cache the engine takes but then fails on (MLX's quantised cache meeting a rotating
        one: "RotatingKVCache Quantization NYI"), as its accounting says."""
        engine, value = sizing.engine, settled.cache_dtype
        if engine is None or engine.refusal is not Refusal.SETTING or engine.error is None:
            return
        if value.default or settled.cache_types is None:
            return
        field = n.name(sizing, "kv_cache_dtype")
        message = f"{field} `{value.value}`: {settled.facts.display} fails: {engine.error}"
        numbers = (("setting", str(value.value)), ("engine", settled.facts.display))
        fix = n.fix(f"Remove {field}: keep the cache in the model dtype")
        yield Problem(value.span, message, fix, numbers)

    def _listed(
        self,
        dep: Deployment,
        sizing: Sizing,
        facts: EngineFacts,
        field: str,
        value: Sourced[Any],
    ) -> Iterator[Problem]:
        text = str(value.value).strip().lower()
        release = parse_version(str(dep.engine_version.value)) if dep.engine_version else None
        allowed = facts.accepted_cache_dtypes(release)
        if not allowed or text in allowed or text in facts.unlisted_cache_dtypes:
            return
        label = f"{facts.display} {version_label(release)}" if release else facts.display
        fallback = facts.default_cache_dtype if facts.default_cache_dtype in allowed else allowed[0]
        message = (
            f"{n.name(sizing, field)} `{value.value}` is not a cache dtype {label} accepts, so it "
            f"will refuse to start; valid: {', '.join(allowed)}"
        )
        numbers = (("setting", str(value.value)), ("engine", label), ("valid", ", ".join(allowed)))
        fix = n.fix(f"Set `{field}: {fallback}`", value, fallback)
        yield Problem(value.span, message, fix, numbers)

    def _fp8_on_old_gpu(self, settled: Settled, sizing: Sizing) -> Iterator[Problem]:
        value, gpu = settled.cache_dtype, sizing.gpu
        if value.default or str(value.value).lower() not in ("fp8", "fp8_e4m3"):
            return
        if gpu is None or gpu.vendor != "nvidia" or not gpu.compute_capability:
            return
        backend = settled.attention_backend
        if backend is not None and "TRITON" not in str(backend.value).upper():
            return  # FlashInfer converts fp8 in software on Ampere (vllm#24577)
        major, _, minor = gpu.compute_capability.partition(".")
        if (int(major), int(minor or 0)) >= (8, 9):
            return
        # vllm-project/vllm#26431: V1 on sm86 fails with "type fp8e4nv not supported in this
        # architecture"; the Triton KV writer (v1/attention/ops/triton_reshape_and_cache_flash.py)
        # asserts "an FP8 KV cache needs native fp8e4nv (SM89+)". e5m2 support on Ampere is
        # backend-dependent (vllm#50882, open), so the fix is a 16-bit cache.
        message = (
            f"`kv_cache_dtype` `{value.value}` is fp8 e4m3, which the {gpu.display} (compute "
            f"capability {gpu.compute_capability}) cannot store: "
            f"{settled.facts.fp8_cache_refusal}"
        )
        numbers = (("GPU", gpu.display), ("compute capability", gpu.compute_capability))
        yield Problem(
            value.span,
            message,
            n.fix("Set `kv_cache_dtype: auto` (Ampere has no native fp8)", value, "auto"),
            numbers,
        )

    def _v_without_flash(self, settled: Settled, sizing: Sizing) -> Iterator[Problem]:
        flash = settled.flash_attention
        if flash is None or str(flash.value).strip().lower() not in _OFF:
            return
        facts = settled.facts
        release = settled.version_numbers
        refused_from = facts.quantised_v_refused_from
        falls_back = facts.quantised_v_without_flash == "falls back" and not (
            refused_from is not None and release is not None and release >= refused_from
        )
        switch = n.name(sizing, "flash_attention")
        if facts.quantised_v_without_flash == "falls back":
            # One type for K and V (OLLAMA_KV_CACHE_TYPE).
            v_type: Sourced[Any] | None = settled.cache_dtype
            field, on = "kv_cache_dtype", "1"
        else:
            v_type, field, on = settled.cache_dtype_v, "kv_cache_dtype_v", "on"
        if falls_back:
            effect = (
                f"{facts.display} falls back to an f16 cache, twice the memory the setting meant"
            )
        else:
            effect = (
                f'{facts.display} refuses to create the context ("quantized V cache requires '
                'flash_attn to be enabled")'
            )
        if v_type is None or v_type.default or not _quantised(str(v_type.value)):
            return
        if flash.default:
            # Not set: the release's own default for this model is off.
            label = f"{facts.display} {version_label(release)}" if release else facts.display
            why = f"{switch} is not set, and {label} leaves it off for {settled.spec.model_type}"
        else:
            why = f"{switch} is `{flash.value}`"
        message = (
            f"{n.name(sizing, field)} `{v_type.value}` is a quantised V cache, which needs flash "
            f"attention, but {why}: {effect}"
        )
        title = f"Turn flash attention on ({switch} `{on}`)"
        numbers = (("V cache type", str(v_type.value)), ("flash attention", str(flash.value)))
        yield Problem(v_type.span, message, n.fix(title, flash, on), numbers)

    def _unsized(self, settled: Settled, sizing: Sizing) -> Iterator[Problem]:
        """A dtype the engine accepts whose storage kvlint has not read: say which checks did
        not run, rather than size it as something it is not."""
        value = settled.cache_dtype
        message = (
            f"{n.name(sizing, 'kv_cache_dtype')} `{value.value}`: {settled.cache_note}, so the "
            "checks of the cache's size did not run"
        )
        numbers = (("setting", str(value.value)), ("engine", settled.facts.display))
        yield Problem(value.span, message, None, numbers, Severity.WARNING)


def _quantised(name: str) -> bool:
    """A cache type of fewer than 16 bits a value (q8_0, q4_0, ...)."""
    try:
        return cache_dtype(name, "float16").quantised
    except ValueError:
        return False
