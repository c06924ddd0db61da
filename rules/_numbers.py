"""Message helpers shared by the KV1xx-KV4xx rules: sizes, setting names, edits, in one place."""

from __future__ import annotations

import re
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Fix
from kvlint.model.spec import ModelSpec
from kvlint.units import format_binary
from kvlint.units import format_decimal

# How each engine spells the normalised Deployment fields (the names its users will search for).
_NAMES: dict[str, dict[str, str]] = {
    "max_num_seqs": {
        "sglang": "max_running_requests",
        "llamacpp": "parallel",
        "tgi": "max_concurrent_requests",
        "ollama": "OLLAMA_NUM_PARALLEL",
    },
    "max_model_len": {
        "sglang": "context_length",
        "llamacpp": "ctx_size",
        "tgi": "max_total_tokens",
        "ollama": "OLLAMA_CONTEXT_LENGTH",
    },
    "memory_fraction": {
        "vllm": "gpu_memory_utilization",
        "sglang": "mem_fraction_static",
        "tgi": "cuda_memory_fraction",
    },
    "tensor_parallel_size": {"sglang": "tp_size", "tgi": "num_shard"},
    "kv_cache_dtype": {"llamacpp": "cache_type_k", "ollama": "OLLAMA_KV_CACHE_TYPE"},
    "kv_cache_dtype_v": {"llamacpp": "cache_type_v"},
    "flash_attention": {"llamacpp": "flash_attn", "ollama": "OLLAMA_FLASH_ATTENTION"},
    "n_gpu_layers": {"llamacpp": "n_gpu_layers"},
}

ENGINE_NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "llamacpp": "llama.cpp",
    "tgi": "TGI",
    "ollama": "Ollama",
}


def _scaled(n: float, base: int) -> float:
    value = abs(float(n))
    while value >= base:
        value /= base
    return value


def gb(n: float) -> str:
    """Decimal units, as capacity messages quote them: '1.07 GB', '41.2 GB', '274.9 GB'."""
    return format_decimal(n, 2 if _scaled(n, 1000) < 10 else 1)


def gib(n: float) -> str:
    """Binary units, same precision: '320 KiB', '2.5 MiB', '28.5 GiB'."""
    return format_binary(n, 2 if _scaled(n, 1024) < 10 else 1)


def gib2(n: float) -> str:
    """GiB with two decimals, exactly as vLLM's ``format_gib`` prints memory in its errors."""
    return f"{n / 1024**3:.2f} GiB"


def like(raw: str | None, n: float) -> str:
    """``n`` bytes written in the unit system of ``raw`` (the figure as the user wrote it)."""
    text = raw or ""
    if "ib" in text.lower():
        return gib(n)
    if re.search(r"[kKMGT][bB]?\s*$", text):
        return gb(n)
    return str(round(n))


def count(n: int) -> str:
    return f"{n:,}"


def ratio(a: float, b: float) -> str:
    """'8x', '1.5x': how many times ``a`` is ``b``."""
    r = a / b
    return f"{r:.0f}x" if abs(r - round(r)) < 0.05 else f"{r:.1f}x"


def name(dep: Deployment, field: str) -> str:
    """The setting's name as the deployment's engine spells it, in backticks."""
    spelled = _NAMES.get(field, {}).get(dep.engine.value, field)
    return f"`{spelled}`"


def engine_name(dep: Deployment) -> str:
    return ENGINE_NAMES.get(dep.engine.value, dep.engine.value)


def model_name(spec: ModelSpec) -> str:
    """The model as a message names it: the repository name without its organisation."""
    return spec.name.rsplit("/", 1)[-1]


def explicit(value: Sourced[Any] | None) -> bool:
    """True when a file states the value (not an engine default filled in by kvlint)."""
    return value is not None and not value.default


def fix(title: str, target: Sourced[Any] | None = None, replacement: str | None = None) -> Fix:
    """A behaviour-changing fix; with one edit when the value to change is written in a file."""
    edits: tuple[Edit, ...] = ()
    if target is not None and replacement is not None and explicit(target):
        edits = (Edit(target.span, replacement),)
    return Fix(title, edits, Applicability.UNSAFE)


def safe_fix(title: str, target: Sourced[Any], replacement: str) -> Fix:
    """A fix that corrects a stated figure and changes nothing the deployment does."""
    return Fix(title, (Edit(target.span, replacement),), Applicability.SAFE)


def model_gpus(dep: Deployment) -> int:
    """GPUs that hold one copy of the model: tensor x pipeline parallel."""
    tp = dep.tensor_parallel_size.value if dep.tensor_parallel_size else 1
    pp = dep.pipeline_parallel_size.value if dep.pipeline_parallel_size else 1
    return max(1, tp) * max(1, pp)


def truthy(value: Sourced[Any] | None) -> bool | None:
    """A switch as engines read it: true / on / 1 / yes; None when not set."""
    if value is None:
        return None
    if isinstance(value.value, bool):
        return value.value
    return str(value.value).strip().lower() in ("1", "true", "on", "yes", "enabled")


def shape(spec: ModelSpec) -> str:
    """The layers behind a per-token figure: '80 layers x 8 KV heads x head_dim 128'."""
    growing = [layer for layer in spec.layers if layer.kind.grows]
    if len(growing) == len(spec.layers) and len({(g.kv_heads, g.head_dim_k) for g in growing}) == 1:
        first = growing[0]
        return f"{len(growing)} layers x {first.kv_heads} KV heads x head_dim {first.head_dim_k}"
    bounded = [layer for layer in spec.layers if layer.kind.bounded]
    if not growing and bounded:
        return f"{len(bounded)} layers, each windowed at {max(b.window or 0 for b in bounded)}"
    return f"{len(growing)} of {len(spec.layers)} layers growing with context"


def percent_off(stated: float, correct: float) -> str:
    """'25% more' / '20% less' / '3.1x the computed': the stated figure against the correct one."""
    if correct <= 0:
        return "not zero"
    diff = (stated - correct) / correct
    if diff >= 1:
        return f"{ratio(stated, correct)} the computed"
    return f"{abs(diff):.0%} {'more' if diff > 0 else 'less'}"


# Each engine's own spelling of an 8-bit cache: what a fix sets.
CACHE_8BIT = {
    "vllm": "fp8",
    "sglang": "fp8_e4m3",
    "llamacpp": "q8_0",
    "tgi": "fp8_e4m3fn",
    "ollama": "q8_0",
}


def version(dep: Deployment) -> tuple[int, ...] | None:
    """The engine version a file states (``v0.11.0``, an image tag), as numbers."""
    if dep.engine_version is None:
        return None
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", str(dep.engine_version.value))
    return tuple(int(g) for g in found.groups() if g is not None) if found else None


def valid_tp(spec: ModelSpec, tp: int) -> bool:
    """vLLM's checks: heads divisible by TP, and KV heads by TP or TP by KV heads (the model
    code asserts ``total_num_kv_heads % tp == 0`` or ``tp % total_num_kv_heads == 0``)."""
    kv = spec.num_key_value_heads
    if kv < 1:
        return spec.num_attention_heads % tp == 0
    return spec.num_attention_heads % tp == 0 and (kv % tp == 0 if kv >= tp else tp % kv == 0)


def cache_setting(dep: Deployment) -> str:
    """The cache dtype as the deployment sets it, or the engine's default spelling."""
    if dep.kv_cache_dtype is not None:
        return str(dep.kv_cache_dtype.value)
    return "f16" if dep.engine.value in ("llamacpp", "ollama") else "auto"
