"""Sizing: everything the rules see about one deployment, computed once before they run."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from kvlint.arith.kv import KvSize
from kvlint.arith.kv import kv_size
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec


@dataclass(frozen=True)
class Sizing:
    """First principles (``kv``) and the engine's own accounting (``engine``), always both when
    the facts allow. ``missing`` names facts the files do not give, for the info finding."""

    spec: ModelSpec | None
    kv: KvSize | None  # at the deployment's cache dtype
    gpu: GpuSpec | None
    engine: EngineEstimate | None
    missing: tuple[str, ...] = ()
    # The engine's values for settings the files leave unset, keyed by Deployment field, each a
    # Sourced(default=True) at the deployment's span: what a message cites as "the default".
    defaults: dict[str, Sourced[Any]] = field(default_factory=dict)


def size(dep: Deployment, spec: ModelSpec | None) -> Sizing:
    """Everything the rules need about ``dep``: the GPU looked up from ``dep.gpu``, first
    principles at the deployment's cache dtype (``auto`` = the model dtype), and the engine's
    own accounting with its defaults filled in. ``missing`` names what the files do not give."""
    # Imported here: the engine modules are only needed once a deployment is sized.
    from kvlint.engines import estimate
    from kvlint.gpus import lookup_gpu

    missing: list[str] = []
    gpu: GpuSpec | None = None
    if dep.gpu is None:
        missing.append("GPU type")
    else:
        gpu = lookup_gpu(dep.gpu.value)
        if gpu is None:
            missing.append(f"GPU memory (unknown GPU {dep.gpu.value!r})")
        elif gpu.out_of_scope:
            missing.append(f"GPU memory ({gpu.display} is {gpu.kind_phrase}: out of scope)")
            gpu = None
    if spec is None:
        missing.append("model config")
        return Sizing(spec=None, kv=None, gpu=gpu, engine=None, missing=tuple(missing))
    runtime = runtime_values(dep)
    if runtime:
        # A length, a concurrency or a memory fraction filled in at run time: the engine's
        # defaults would stand in for it and every verdict on them would be about a value the
        # deployment does not use. Say what is unknown instead (KV907).
        missing.extend(runtime_fact(name, value) for name, value in runtime.items())
        kv = None if runtime.keys() & _CACHE_DTYPE_FIELDS else _first_principles(dep, spec)
        return Sizing(spec=spec, kv=kv, gpu=gpu, engine=None, missing=tuple(missing))
    kv = _first_principles(dep, spec)
    engine = estimate(dep, spec, gpu)
    for fact in engine.missing:
        if fact not in missing and not (fact == "GPU type" and gpu is None):
            missing.append(fact)
    defaults: dict[str, Sourced[Any]] = {
        name: Sourced(value, dep.span, default=True) for name, value in engine.defaults
    }
    return Sizing(
        spec=spec, kv=kv, gpu=gpu, engine=engine, missing=tuple(missing), defaults=defaults
    )


def runtime_values(dep: Deployment) -> dict[str, Sourced[str]]:
    """The settings the arithmetic needs whose value is filled in at deploy or run time."""
    return {name: value for name, value in dep.runtime.items() if name not in _NOT_SIZED}


def runtime_fact(name: str, value: Sourced[str]) -> str:
    """How a run-time value is listed among the missing facts."""
    return f"value of `{name}` (`{value.value}` is filled in at deploy or run time)"


# Deployment fields a run-time value leaves the arithmetic unaffected by.
_NOT_SIZED = frozenset({"served_model_name", "engine_version"})
_CACHE_DTYPE_FIELDS = frozenset({"kv_cache_dtype", "kv_cache_dtype_v", "dtype"})


def _first_principles(dep: Deployment, spec: ModelSpec) -> KvSize | None:
    cache_dtype = dep.kv_cache_dtype.value if dep.kv_cache_dtype is not None else "auto"
    v_dtype = dep.kv_cache_dtype_v.value if dep.kv_cache_dtype_v is not None else None
    try:
        return kv_size(spec, _first_principles_dtype(cache_dtype), v_dtype)
    except ValueError:
        return kv_size(spec)  # an unknown spelling: KV5xx reports it; size at the model dtype


def _first_principles_dtype(name: str) -> str:
    key = name.strip().lower()
    if key.startswith("fp8") or key.endswith("_per_token_head"):
        return "fp8"
    if key.startswith("nvfp4"):
        return "nvfp4"
    return key
