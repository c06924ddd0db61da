"""Levers side by side: cache dtype, weight quantisation, GPU type, memory fraction."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from kvlint.arith.dtypes import UnknownCacheDtype
from kvlint.arith.dtypes import cache_dtype
from kvlint.arith.parallel import Layout
from kvlint.engines import account
from kvlint.engines import revise
from kvlint.errors import KvlintError
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import Quantization
from kvlint.settled import Settled
from kvlint.solve.capacity import admitted_at
from kvlint.solve.fleet import DEFAULT_MAX_GPUS
from kvlint.solve.fleet import DEFAULT_MAX_TP
from kvlint.solve.fleet import GpuPlan
from kvlint.solve.fleet import min_gpus
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import placed
from kvlint.solve.variants import value

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


@dataclass(frozen=True)
class _Option:
    """One lever the solver may pull, and whether it is offered."""

    group: str
    label: str
    current: bool
    note: str  # why it is not offered, or a caveat when it is
    offered: bool
    apply: Callable[[Settled], Settled]


def _keep(settled: Settled) -> Settled:
    return settled


def _needs(name: str) -> str:
    """What a cache dtype asks of the GPU: "fp8" computes natively from compute capability 8.9
    (GpuSpec.supports_fp8) and is stored-only below it, "fp4" (the 4-bit float caches) needs
    Blackwell (10.0); ggml's integer blocks (q8_0, q4_0) run anywhere."""
    try:
        storage = cache_dtype(name, "bfloat16").name
    except UnknownCacheDtype:  # an engine's own spelling (MLX's kv_bits 8): integer blocks
        return ""
    if storage.startswith("fp8"):
        return "fp8"
    return "fp4" if "fp4" in storage else ""


def _cache_options(settled: Settled) -> list[_Option]:
    """The model dtype and the engine's 8-bit and 4-bit caches, as the engine spells them
    (EngineFacts: vLLM fp8 / nvfp4, SGLang fp8_e4m3 / nvfp4, TGI fp8_e4m3fn, llama.cpp q8_0 /
    q4_0), each with what the release and the GPU allow."""
    facts, gpu = settled.facts, settled.gpu
    names = [facts.default_cache_dtype, facts.cache_8bit]
    if facts.cache_4bit is not None:
        names.append(facts.cache_4bit)
    accepted = facts.accepted_cache_dtypes(settled.version_numbers)
    current = str(value(settled.request.kv_cache_dtype) or facts.default_cache_dtype)
    flash = value(settled.flash_attention)
    # Flash attention off only by the engine's default (Ollama before 0.30 for most models):
    # a quantised cache lever turns it on with it, as llama.cpp's sets -ctv with -ctk.
    flash_default = settled.flash_attention is not None and settled.flash_attention.default
    switch = facts.spelling("flash_attention")
    options: list[_Option] = []
    for name in names:
        note, offered, needs = "", True, _needs(name)
        with_flash = False
        if needs == "fp8" and gpu is not None and gpu.supports_fp8 is False:
            # Offered all the same: the cache is stored in fp8 and converted to 16 bit for the
            # attention kernels, so the memory halves without native fp8 (vLLM PR #24577: fp8
            # KV on A100 through FlashInfer and Triton, "the available concurrency doubles").
            note = f"stored, not computed, in fp8 on {gpu.key}"
        elif name != facts.default_cache_dtype and accepted and name not in accepted:
            release = ".".join(str(n) for n in (settled.version_numbers or ())[:2])
            note, offered = f"{facts.display} {release} has no {name} cache", False
        elif needs == "fp4" and (gpu is None or not _blackwell(gpu)):
            note, offered = "a 4-bit float cache needs a Blackwell GPU", False
        elif (
            facts.quantised_v_without_flash is not None
            and name != facts.default_cache_dtype
            and flash == "off"
        ):
            if flash_default:
                note, with_flash = f"with {switch} on", True
            else:
                note, offered = f"a quantised V cache needs flash attention ({switch})", False

        def apply(s: Settled, name: str = name, with_flash: bool = with_flash) -> Settled:
            # V the same as K too, where V's type is a setting of its own (llama.cpp -ctv).
            v_name = name if s.facts.v_cache_dtype_apart else None
            if with_flash:
                return revise(s, kv_cache_dtype=name, kv_cache_dtype_v=v_name, flash_attention="on")
            return revise(s, kv_cache_dtype=name, kv_cache_dtype_v=v_name)

        options.append(_Option("cache dtype", name, name == current, note, offered, apply))
    return options


def _blackwell(gpu: GpuSpec) -> bool:
    if gpu.vendor != "nvidia" or gpu.compute_capability is None:
        return False
    return int(gpu.compute_capability.split(".")[0]) >= 10


# Weight formats: the label, the quant_method, its bits. "fp8" is vLLM / SGLang / TGI online
# quantisation of a 16-bit checkpoint (--quantization fp8); "awq" means serving an AWQ
# checkpoint of the same model (4-bit weights, group scales).
_WEIGHTS = (("bf16", None, 16.0), ("fp8", "fp8", 8.0), ("awq", "awq", 4.0))


def _weight_options(settled: Settled) -> list[_Option]:
    spec, gpu = settled.model, settled.gpu
    current_method = value(settled.request.quantization) or (
        spec.quantization.method if spec.quantization else None
    )
    options: list[_Option] = []
    for label, method, bits in _WEIGHTS:
        note = settled.facts.fixed_weights or ""
        is_current = (current_method or None) == method or (
            method is None and current_method in (None, "none")
        )

        def apply(
            s: Settled,
            method: str | None = method,
            bits: float = bits,
            is_current: bool = is_current,
        ) -> Settled:
            if is_current:
                return s
            # The checkpoint size no longer applies: weights come from the parameter count at
            # the new width (kvlint.arith.weights), and the cache dtype stays what it was.
            quant = None if method is None else Quantization(method, weight_bits=bits)
            model = dataclasses.replace(s.model, quantization=quant, weight_bytes=None)
            return revise(s, model=model, quantization=method)

        offered = not note
        if offered and method == "fp8" and gpu is not None and gpu.supports_fp8 is False:
            # Served all the same: weight-only fp8 through the Marlin kernels (vLLM's
            # fp8_marlin path on Ampere), so the memory saving holds, the speed-up does not.
            note = f"weight-only on {gpu.key} (no native fp8)"
        options.append(_Option("weights", label, is_current, note, offered, apply))
    return options


def _gpu_options(
    gpu: GpuSpec | None, choices: tuple[str, ...], vendors: tuple[str, ...]
) -> list[_Option]:
    from kvlint.gpus import apple_configurations
    from kvlint.gpus import lookup_gpu

    seen: set[str] = set()
    options: list[_Option] = []
    names = ([gpu.key] if gpu is not None else []) + list(choices)
    if gpu is not None and gpu.vendor == "apple":
        # A Mac's other memory configurations of the same chip ("M3-Ultra-96GB" -> 256, 512).
        chip = gpu.key.rsplit("-", 1)[0]
        names += [f"{chip}-{gb}GB" for gb in apple_configurations().get(chip.lower(), ())]
    for name in names:
        found = lookup_gpu(name)
        if found is None or found.key in seen or found.vendor not in vendors:
            continue
        seen.add(found.key)

        def apply(s: Settled, found: GpuSpec = found) -> Settled:
            return revise(s, gpu=found)

        is_current = gpu is not None and found.key == gpu.key
        options.append(_Option("GPU", found.key, is_current, "", True, apply))
    return options


def _fraction_options(
    settled: Settled, current_fraction: float | None, fractions: tuple[float, ...]
) -> list[_Option]:
    unset = settled.memory_fraction is None and settled.kv_cache_memory_bytes is None
    # The pool is cells set up front (llama.cpp), or whatever memory is left (MLX).
    if settled.facts.pool_is_cells or unset:
        return [_Option("memory fraction", "-", False, f"{settled.engine} has none", False, _keep)]
    if settled.kv_cache_memory_bytes is not None:
        note = "kv_cache_memory_bytes is set, so the fraction is ignored"
        return [_Option("memory fraction", "-", False, note, False, _keep)]
    values = sorted({*fractions, *([current_fraction] if current_fraction else [])})
    options: list[_Option] = []
    for fraction in values:

        def apply(s: Settled, fraction: float = fraction) -> Settled:
            return revise(s, memory_fraction=fraction)

        is_current = current_fraction is not None and abs(fraction - current_fraction) < 1e-9
        options.append(_Option("memory fraction", f"{fraction:g}", is_current, "", True, apply))
    return options


def levers(
    settled: Settled,
    *,
    context: int,
    concurrency: int,
    layout: Layout,
    gpu_choices: tuple[str, ...] = DEFAULT_GPU_CHOICES,
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS,
    max_gpus: int = DEFAULT_MAX_GPUS,
    max_tp: int | None = DEFAULT_MAX_TP,
    any_layout: bool = False,
    estimator: Estimator = account,
) -> list[Lever]:
    """Each lever applied alone to ``settled``: the pool and admitted sequences on ``layout`` at
    ``context``, and the GPUs the target (``concurrency`` at ``context``) then needs. Options
    the engine or GPU does not support come back with ``offered=False`` and a note."""
    base = placed(settled, layout, max_model_len=context)
    current_fraction = estimator(base).memory_fraction
    options = [
        *_cache_options(base),
        *_weight_options(base),
        *_gpu_options(base.gpu, gpu_choices, settled.facts.vendors),
        *_fraction_options(base, current_fraction, fractions),
    ]
    rows: list[Lever] = []
    for option in options:
        if not option.offered:
            rows.append(Lever(option.group, option.label, option.current, False, option.note))
            continue
        try:
            variant = option.apply(base)
            seqs, est = admitted_at(variant, context, estimator)
        except (KvlintError, ValueError) as exc:  # a combination the accounting rejects
            rows.append(Lever(option.group, option.label, option.current, False, str(exc)))
            continue
        plan = min_gpus(
            variant,
            context=context,
            concurrency=concurrency,
            max_gpus=max_gpus,
            max_tp=max_tp,
            any_layout=any_layout,
            estimator=estimator,
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
