"""Levers side by side: cache dtype, weight quantisation, GPU type, memory fraction."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from kvlint.arith.parallel import Layout
from kvlint.deployment import Deployment
from kvlint.errors import KvlintError
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.model.spec import Quantization
from kvlint.solve.capacity import admitted_at
from kvlint.solve.fleet import DEFAULT_MAX_GPUS
from kvlint.solve.fleet import DEFAULT_MAX_TP
from kvlint.solve.fleet import GpuPlan
from kvlint.solve.fleet import min_gpus
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import default_estimator
from kvlint.solve.variants import value
from kvlint.solve.variants import vary

# GPUs offered in the GPU-type rows when the caller names none: the common serving parts,
# smallest first. Names the catalog does not know are skipped.
DEFAULT_GPU_CHOICES = ("L40S", "A100-80GB", "H100-80GB", "H200", "B200")
DEFAULT_FRACTIONS = (0.85, 0.9, 0.95)


@dataclass(frozen=True)
class Lever:
    """One setting changed, and what it does to the target. ``offered`` is False when the
    engine or GPU does not support it (``note`` says why); the numbers are then None."""

    group: str  # "cache dtype", "weights", "GPU", "memory fraction"
    label: str  # as the user would write it: "fp8", "awq", "H200", "0.95"
    current: bool  # the deployment's own setting
    offered: bool
    note: str = ""
    layout: Layout | None = None  # the replica the pool and admitted columns are for
    estimate: EngineEstimate | None = None
    admitted: int | None = None  # sequences at the target context on ``layout``
    plan: GpuPlan | None = None  # GPUs needed for the target concurrency

    @property
    def available_kv_bytes(self) -> int | None:
        return None if self.estimate is None else self.estimate.available_kv_bytes

    @property
    def kv_cache_tokens(self) -> int | None:
        return None if self.estimate is None else self.estimate.kv_cache_tokens


_Variant = tuple[Deployment, ModelSpec, "GpuSpec | None"]


@dataclass(frozen=True)
class _Option:
    group: str
    label: str
    current: bool
    note: str  # why it is not offered, or a caveat when it is
    offered: bool
    apply: Callable[[Deployment, ModelSpec, GpuSpec | None], _Variant]


def _keep(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> _Variant:
    return dep, spec, gpu


# Cache dtypes per engine, as each spells them (vllm/config/cache.py CacheDType; SGLang
# --kv-cache-dtype choices; TGI --kv-cache-dtype; llama.cpp -ctk/-ctv kv_cache_types), with what
# each needs: "fp8" computes natively from compute capability 8.9 (GpuSpec.supports_fp8) and is
# stored-only below it; the 4-bit float caches need Blackwell (10.0).
_CACHE_DTYPES: dict[str, tuple[tuple[str, str], ...]] = {
    "vllm": (("auto", ""), ("fp8", "fp8"), ("nvfp4", "fp4")),
    "sglang": (("auto", ""), ("fp8_e4m3", "fp8"), ("nvfp4", "fp4")),
    "tgi": (("auto", ""), ("fp8_e4m3fn", "fp8")),
    "llamacpp": (("f16", ""), ("q8_0", ""), ("q4_0", "")),
    "ollama": (("f16", ""), ("q8_0", ""), ("q4_0", "")),
}


def _cache_options(dep: Deployment, gpu: GpuSpec | None) -> list[_Option]:
    engine = dep.engine.value
    version = value(dep.engine_version)
    current = str(value(dep.kv_cache_dtype) or _CACHE_DTYPES.get(engine, (("auto", ""),))[0][0])
    options: list[_Option] = []
    for name, needs in _CACHE_DTYPES.get(engine, ()):
        note, offered = "", True
        if needs == "fp8" and gpu is not None and gpu.supports_fp8 is False:
            # Offered all the same: the cache is stored in fp8 and converted to 16 bit for the
            # attention kernels, so the memory halves without native fp8 (vLLM PR #24577: fp8
            # KV on A100 through FlashInfer and Triton, "the available concurrency doubles").
            note = f"stored, not computed, in fp8 on {gpu.key}"
        elif needs == "fp4" and engine == "vllm" and version and str(version).startswith("0.11"):
            note, offered = "vLLM 0.11 has no nvfp4 cache", False
        elif needs == "fp4" and (gpu is None or not _blackwell(gpu)):
            note, offered = "a 4-bit float cache needs a Blackwell GPU", False
        elif engine in ("llamacpp", "ollama") and name != "f16" and _fa_off(dep):
            note, offered = "a quantised V cache needs flash attention (-fa)", False

        def apply(d: Deployment, s: ModelSpec, g: GpuSpec | None, name: str = name) -> _Variant:
            return vary(d, kv_cache_dtype=name, kv_cache_dtype_v=None), s, g

        options.append(_Option("cache dtype", name, name == current, note, offered, apply))
    return options


def _fa_off(dep: Deployment) -> bool:
    return str(value(dep.flash_attention)).lower() == "off"


def _blackwell(gpu: GpuSpec) -> bool:
    if gpu.vendor != "nvidia" or gpu.compute_capability is None:
        return False
    return int(gpu.compute_capability.split(".")[0]) >= 10


# Weight formats: the label, the quant_method, its bits. "fp8" is vLLM / SGLang / TGI online
# quantisation of a 16-bit checkpoint (--quantization fp8); "awq" means serving an AWQ
# checkpoint of the same model (4-bit weights, group scales).
_WEIGHTS = (("bf16", None, 16.0), ("fp8", "fp8", 8.0), ("awq", "awq", 4.0))


def _weight_options(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> list[_Option]:
    engine = dep.engine.value
    current_method = value(dep.quantization) or (
        spec.quantization.method if spec.quantization else None
    )
    options: list[_Option] = []
    for label, method, bits in _WEIGHTS:
        note = ""
        if engine in ("llamacpp", "ollama"):
            note = "llama.cpp loads GGUF quantisations (Q8_0, Q4_K_M), not these"
        is_current = (current_method or None) == method or (
            method is None and current_method in (None, "none")
        )

        def apply(
            d: Deployment,
            s: ModelSpec,
            g: GpuSpec | None,
            method: str | None = method,
            bits: float = bits,
            is_current: bool = is_current,
        ) -> _Variant:
            if is_current:
                return d, s, g
            # The checkpoint size no longer applies: weights come from the parameter count at
            # the new width (kvlint.arith.weights), and the cache dtype stays what it was.
            quant = None if method is None else Quantization(method, weight_bits=bits)
            new_spec = dataclasses.replace(s, quantization=quant, weight_bytes=None)
            return vary(d, quantization=method), new_spec, g

        offered = not note
        if offered and method == "fp8" and gpu is not None and gpu.supports_fp8 is False:
            # Served all the same: weight-only fp8 through the Marlin kernels (vLLM's
            # fp8_marlin path on Ampere), so the memory saving holds, the speed-up does not.
            note = f"weight-only on {gpu.key} (no native fp8)"
        options.append(_Option("weights", label, is_current, note, offered, apply))
    return options


def _gpu_options(gpu: GpuSpec | None, choices: tuple[str, ...]) -> list[_Option]:
    from kvlint.gpus import lookup_gpu

    seen: set[str] = set()
    options: list[_Option] = []
    names = ([gpu.key] if gpu is not None else []) + list(choices)
    for name in names:
        found = lookup_gpu(name)
        if found is None or found.key in seen:
            continue
        seen.add(found.key)

        def apply(
            d: Deployment, s: ModelSpec, g: GpuSpec | None, found: GpuSpec = found
        ) -> _Variant:
            return vary(d, gpu=found.key), s, found

        is_current = gpu is not None and found.key == gpu.key
        options.append(_Option("GPU", found.key, is_current, "", True, apply))
    return options


def _fraction_options(
    dep: Deployment, current_fraction: float | None, fractions: tuple[float, ...]
) -> list[_Option]:
    engine = dep.engine.value
    if engine in ("llamacpp", "ollama"):
        return [_Option("memory fraction", "-", False, f"{engine} has none", False, _keep)]
    if dep.kv_cache_memory_bytes is not None:
        note = "kv_cache_memory_bytes is set, so the fraction is ignored"
        return [_Option("memory fraction", "-", False, note, False, _keep)]
    values = sorted({*fractions, *([current_fraction] if current_fraction else [])})
    options: list[_Option] = []
    for fraction in values:

        def apply(
            d: Deployment, s: ModelSpec, g: GpuSpec | None, fraction: float = fraction
        ) -> _Variant:
            return vary(d, memory_fraction=fraction), s, g

        is_current = current_fraction is not None and abs(fraction - current_fraction) < 1e-9
        options.append(_Option("memory fraction", f"{fraction:g}", is_current, "", True, apply))
    return options


def levers(
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    *,
    context: int,
    concurrency: int,
    layout: Layout,
    gpu_choices: tuple[str, ...] = DEFAULT_GPU_CHOICES,
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS,
    max_gpus: int = DEFAULT_MAX_GPUS,
    max_tp: int | None = DEFAULT_MAX_TP,
    any_layout: bool = False,
    estimator: Estimator | None = None,
) -> list[Lever]:
    """Each lever applied alone to ``dep``: the pool and admitted sequences on ``layout`` at
    ``context``, and the GPUs the target (``concurrency`` at ``context``) then needs. Options
    the engine or GPU does not support come back with ``offered=False`` and a note."""
    estimate = estimator or default_estimator()
    base = vary(
        dep,
        tensor_parallel_size=layout.tp,
        pipeline_parallel_size=layout.pp,
        gpu_count=layout.gpus_per_replica,
        max_model_len=context,
    )
    current_fraction = estimate(base, spec, gpu).memory_fraction
    options = [
        *_cache_options(base, gpu),
        *_weight_options(base, spec, gpu),
        *_gpu_options(gpu, gpu_choices),
        *_fraction_options(base, current_fraction, fractions),
    ]
    rows: list[Lever] = []
    for option in options:
        if not option.offered:
            rows.append(Lever(option.group, option.label, option.current, False, option.note))
            continue
        d, s, g = option.apply(base, spec, gpu)
        try:
            seqs, est = admitted_at(d, s, g, context, estimate)
        except (KvlintError, ValueError) as exc:  # a combination the accounting rejects
            rows.append(Lever(option.group, option.label, option.current, False, str(exc)))
            continue
        plan = min_gpus(
            d,
            s,
            g,
            context=context,
            concurrency=concurrency,
            max_gpus=max_gpus,
            max_tp=max_tp,
            any_layout=any_layout,
            estimator=estimate,
        )
        rows.append(
            Lever(
                option.group,
                option.label,
                option.current,
                True,
                option.note,
                layout,
                est,
                seqs,
                plan,
            )
        )
    return rows
