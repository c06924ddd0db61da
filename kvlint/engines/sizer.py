"""Sizing one deployment: the GPU looked up, the engine's settle step, first principles and the
engine's accounting, in that order (what the linter and ``kvlint size`` call)."""

from __future__ import annotations

from collections.abc import Callable

from kvlint.arith.kv import KvSize
from kvlint.arith.kv import kv_size
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import HOMES
from kvlint.engines import account as engine_account
from kvlint.engines import canonical
from kvlint.engines import home
from kvlint.engines import settle
from kvlint.estimate import EngineEstimate
from kvlint.estimate import across
from kvlint.estimate import across_versions
from kvlint.gpus import GpuSpec
from kvlint.gpus import gpu_variants
from kvlint.gpus import lookup_gpu
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.record_replace import replace
from kvlint.settled import EngineFacts
from kvlint.settled import Settled
from kvlint.sizing import Sizing
from kvlint.sizing import runtime_fact
from kvlint.sizing import runtime_values
from kvlint.units import GiB

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
    variants: tuple[GpuSpec, ...] = ()
    if dep.gpu is None:
        missing.append("GPU type")
    else:
        variants = gpu_variants(dep.gpu.value)
        gpu = variants[0] if variants else lookup_gpu(dep.gpu.value)
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
    if len(variants) > 1:
        engine = _across_gpus(dep, spec, variants, engine, account)
    elif settled.version_assumed and facts is not None and facts.version_lines:
        engine = _across_versions(dep, spec, gpu, facts, engine, account)
    for fact in engine.missing:
        if fact not in missing and not (fact == "GPU type" and gpu is None):
            missing.append(fact)
    return Sizing(effective, kv, gpu, engine, tuple(missing), settled, facts)


def _across_gpus(
    dep: Deployment,
    spec: ModelSpec,
    variants: tuple[GpuSpec, ...],
    first: EngineEstimate,
    account: Callable[[Settled], EngineEstimate],
) -> EngineEstimate:
    """A GPU name that does not pin the memory (``A100``): sized at every card it can mean."""
    readings = [(variants[0].key, first)]
    for gpu in variants[1:]:
        settled = settle(dep, spec, gpu)
        if settled is not None:
            readings.append((gpu.key, account(settled)))
    assert dep.gpu is not None
    names = " or ".join(f"{g.key} ({g.total_bytes / GiB:.2f} GiB)" for g in variants)
    why = f"the GPU `{dep.gpu.value}` may be {names}, figures at the first"
    return across(readings, why)


def _across_versions(
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    facts: EngineFacts,
    first: EngineEstimate,
    account: Callable[[Settled], EngineEstimate],
) -> EngineEstimate:
    """No engine version named: sized at the newest release of each line whose memory
    accounting differs, so a verdict that depends on the release says so (the figures and the
    band stay those of the release sized as)."""
    readings = [(first.version, first)]
    lines = facts.version_lines
    if facts.mla_full_kv_release and any(layer.kind is CacheKind.MLA for layer in spec.layers):
        lines = (*lines, facts.mla_full_kv_release)
    for version in lines:
        if version == first.version:
            continue
        pinned = replace(dep, engine_version=Sourced(version, dep.span, default=True))
        settled = settle(pinned, spec, gpu)
        if settled is not None:
            readings.append((version, account(settled)))
    return across_versions(readings, facts.display)


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
