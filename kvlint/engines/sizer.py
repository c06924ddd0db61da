"""Sizing one deployment: the GPU looked up, the engine's settle step, first principles and the
engine's accounting, in that order (what the linter and ``kvlint size`` call)."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.arith.kv import KvSize
from kvlint.arith.kv import kv_size
from kvlint.deployment import Deployment
from kvlint.engines import HOMES
from kvlint.engines import account as engine_account
from kvlint.engines import canonical
from kvlint.engines import home
from kvlint.engines import settle
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.gpus import lookup_gpu
from kvlint.model.spec import ModelSpec
from kvlint.settled import EngineFacts
from kvlint.settled import Settled
from kvlint.sizing import Sizing
from kvlint.sizing import runtime_fact
from kvlint.sizing import runtime_values

# Deployment fields whose run-time value leaves even first principles unknown.
_CACHE_DTYPE_FIELDS = frozenset({"kv_cache_dtype", "kv_cache_dtype_v", "dtype"})


def size(
    dep: Deployment,
    spec: ModelSpec | None,
    *,
    account: Callable[[Settled], EngineEstimate] = engine_account,
) -> Sizing:
    """Everything the rules need about ``dep``: the GPU looked up from ``dep.gpu``, what the
    engine will run with, first principles at that cache dtype (``auto`` = the model dtype)
    and the engine's own accounting (``account``: a run passes its cache). ``missing`` names
    what the files do not give."""
    facts = engine_facts(str(dep.engine.value))
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
        return Sizing(spec=None, kv=None, gpu=gpu, engine=None, missing=tuple(missing), facts=facts)
    settled = settle(dep, spec, gpu)
    effective = settled.spec if settled is not None else spec
    runtime = runtime_values(dep)
    if runtime:
        # A length, a concurrency or a memory fraction filled in at run time: the engine's
        # defaults would stand in for it and every verdict on them would be about a value the
        # deployment does not use. Say what is unknown instead (KV907).
        missing.extend(runtime_fact(name, value) for name, value in runtime.items())
        kv = None if runtime.keys() & _CACHE_DTYPE_FIELDS else first_principles(settled, effective)
        return Sizing(effective, kv, gpu, None, tuple(missing), settled, facts)
    kv = first_principles(settled, effective)
    if settled is None:
        return Sizing(effective, kv, gpu, None, tuple(missing), None, facts)
    engine = account(settled)
    for fact in engine.missing:
        if fact not in missing and not (fact == "GPU type" and gpu is None):
            missing.append(fact)
    return Sizing(effective, kv, gpu, engine, tuple(missing), settled, facts)


def engine_facts(name: str) -> EngineFacts | None:
    """The engine's facts (its package and facts module only), None for one kvlint does not
    read."""
    key = canonical(name)
    return home(key).FACTS if key in HOMES else None


def first_principles(settled: Settled | None, spec: ModelSpec) -> KvSize:
    """The seeds' arithmetic at the cache dtype the engine stores: the model dtype when the
    dtype is unknown to every engine or its layout is (KV5xx / KV202 report those)."""
    if settled is None or settled.cache_types is None:
        return kv_size(spec)
    return KvSize(spec, settled.cache_types)
