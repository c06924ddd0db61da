"""KV202 unsupported-kv-cache-dtype: a cache dtype the engine version or the GPU cannot use."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _engine_dtypes
from . import _numbers as n
from . import _stated

_OFF = ("off", "false", "0", "no", "disabled")


class UnsupportedKvCacheDtype(Rule):
    """## What it does
    Checks that the engine and the GPU support the KV-cache dtype. It reports a dtype the
    engine version does not list, an e4m3 `fp8` cache in vLLM on a GPU below compute
    capability 8.9, and a quantised V cache in llama.cpp (or Ollama) with flash attention
    turned off.

    ## Why is this bad?
    vLLM refuses an unknown `--kv-cache-dtype` at start-up; its Triton kernels cannot store
    e4m3 on Ampere ("type fp8e4nv not supported in this architecture"); llama.cpp refuses a
    quantised V cache without flash attention ("quantized V cache requires flash_attn to be
    enabled") and Ollama silently falls back to a 16-bit cache. The deployment either does
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
        engine = dep.engine.value
        for field in ("kv_cache_dtype", "kv_cache_dtype_v"):
            value = getattr(dep, field)
            if value is None or _stated.is_weight_format(str(value.value)):
                continue  # KV201 reports weight formats
            yield from self._listed(dep, field, value)
        if engine == "vllm":
            yield from self._fp8_on_old_gpu(dep, sizing)
        if engine in ("llamacpp", "ollama"):
            yield from self._v_without_flash(dep)

    def _listed(self, dep: Deployment, field: str, value: Sourced[Any]) -> Iterator[Problem]:
        engine, text = dep.engine.value, str(value.value).strip().lower()
        if engine == "vllm":
            release = n.version(dep)
            old = release is not None and release < (0, 12)
            allowed = (
                _engine_dtypes.VLLM_011
                if old and text != "float16"
                else _engine_dtypes.VLLM_CURRENT
            )
            label = f"vLLM {'.'.join(map(str, release))}" if release else "vLLM"
        elif engine in _engine_dtypes.ALLOWED:
            allowed, label = _engine_dtypes.ALLOWED[engine], n.engine_name(dep)
        else:
            return
        if text in allowed:
            return
        fallback = "auto" if "auto" in allowed else allowed[0]
        message = (
            f"{n.name(dep, field)} `{value.value}` is not a cache dtype {label} accepts, so it "
            f"will refuse to start; valid: {', '.join(allowed)}"
        )
        numbers = (("setting", str(value.value)), ("engine", label), ("valid", ", ".join(allowed)))
        fix = n.fix(f"Set `{field}: {fallback}`", value, fallback)
        yield Problem(value.span, message, fix, numbers)

    def _fp8_on_old_gpu(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        value, gpu = dep.kv_cache_dtype, sizing.gpu
        if value is None or str(value.value).lower() not in ("fp8", "fp8_e4m3"):
            return
        if gpu is None or gpu.vendor != "nvidia" or not gpu.compute_capability:
            return
        backend = dep.env.get("VLLM_ATTENTION_BACKEND") or dep.settings.get("attention-backend")
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
            f"capability {gpu.compute_capability}) cannot store: vLLM's kernels need 8.9 or "
            f'newer and fail with "type fp8e4nv not supported in this architecture"'
        )
        numbers = (("GPU", gpu.display), ("compute capability", gpu.compute_capability))
        yield Problem(
            value.span,
            message,
            n.fix("Set `kv_cache_dtype: auto` (Ampere has no native fp8)", value, "auto"),
            numbers,
        )

    def _v_without_flash(self, dep: Deployment) -> Iterator[Problem]:
        flash = dep.flash_attention or dep.settings.get("flash-attn")
        if flash is None or str(flash.value).strip().lower() not in _OFF:
            return
        if dep.engine.value == "ollama":
            v_type = dep.kv_cache_dtype
            effect = "Ollama falls back to an f16 cache, twice the memory the setting meant"
        else:
            v_type = dep.kv_cache_dtype_v or dep.settings.get("cache-type-v")
            effect = (
                'llama.cpp refuses to create the context ("quantized V cache requires '
                'flash_attn to be enabled")'
            )
        if (
            v_type is None
            or str(v_type.value).strip().lower() not in _engine_dtypes.QUANTISED_TYPES
        ):
            return
        field = "kv_cache_dtype" if dep.engine.value == "ollama" else "kv_cache_dtype_v"
        message = (
            f"{n.name(dep, field)} `{v_type.value}` is a quantised V cache, which needs flash "
            f"attention, but {n.name(dep, 'flash_attention')} is `{flash.value}`: {effect}"
        )
        on = "1" if dep.engine.value == "ollama" else "on"
        title = f"Turn flash attention on ({n.name(dep, 'flash_attention')} `{on}`)"
        numbers = (("V cache type", str(v_type.value)), ("flash attention", str(flash.value)))
        yield Problem(v_type.span, message, n.fix(title, flash, on), numbers)
