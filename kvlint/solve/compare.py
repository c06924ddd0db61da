"""One deployment under every engine kvlint models, against the first-principles pool."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kvlint.arith.kv import kv_size
from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import pp_problem
from kvlint.arith.parallel import tp_problem
from kvlint.engines import account
from kvlint.engines import facts
from kvlint.engines import revise
from kvlint.errors import KvlintError
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import EngineFacts
from kvlint.settled import Settled
from kvlint.solve.capacity import admitted_at
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import value


def _cache_class(name: str | None) -> str | None:
    """The precision class of a cache dtype ("8bit", "4bit"), None for the model dtype."""
    if name is None:
        return None
    key = name.lower()
    if key in ("auto", "f16", "bf16", "float16", "bfloat16", "fp16", "half"):
        return None
    if "fp8" in key or key in ("q8_0", "int8"):
        return "8bit"
    if "4" in key:
        return "4bit"
    return None


@dataclass(frozen=True)
class EngineRow:
    """One engine's accounting of the deployment. ``hardware_tokens`` is the first-principles
    pool of the same GPUs: every GPU's total memory less its share of the weights, divided by
    the first-principles bytes per token; ``share`` is the engine's tokens over it."""

    engine: str
    version: str | None
    label: str
    layout: Layout | None
    estimate: EngineEstimate | None
    admitted: int | None
    hardware_tokens: int | None
    note: str = ""

    @property
    def share(self) -> float | None:
        est = self.estimate
        if est is None or est.kv_cache_tokens is None or not self.hardware_tokens:
            return None
        return est.kv_cache_tokens / self.hardware_tokens


def _spelled(engine: EngineFacts, precision: str | None) -> str | None:
    """The engine's spelling of a cache of ``precision`` (None: the model dtype), None when
    it has no such cache. llama.cpp has no fp8: q8_0 is its 8-bit cache (34 bytes per 32
    values, a little more than fp8)."""
    if precision is None:
        return engine.default_cache_dtype
    return engine.cache_8bit if precision == "8bit" else engine.cache_4bit


def _engine_layout(
    engine: EngineFacts, spec: ModelSpec, layout: Layout
) -> tuple[Layout | None, str]:
    rules = engine.parallel
    if not rules.tensor and layout.tp > 1:
        # No tensor parallelism: the same GPUs split the layers (llama.cpp --split-mode layer).
        split = Layout(1, layout.gpus_per_replica)
        problem = pp_problem(spec, rules, split.pp)
        return (None, problem) if problem else (split, "layers split over the same GPUs")
    problem = tp_problem(spec, rules, layout.tp) or pp_problem(spec, rules, layout.pp)
    return (None, problem) if problem else (layout, "")


def hardware_tokens(
    spec: ModelSpec, gpu: GpuSpec | None, est: EngineEstimate, cache_dtype: str, gpus: int
) -> int | None:
    """The first-principles pool: what ``gpus`` whole GPUs hold beside the weights, in tokens
    at the model's true bytes per token (the seeds' "pool after weights" figure)."""
    if gpu is None or est.weights_bytes is None:
        return None
    try:
        per_token = kv_size(spec, cache_dtype).per_token_bytes
    except ValueError:
        return None
    free = gpus * (gpu.total_bytes - est.weights_bytes)
    if per_token <= 0 or free <= 0:
        return 0
    return free // per_token


def engines_compare(
    settled: Settled,
    *,
    context: int,
    layout: Layout,
    engines: Sequence[str],
    estimator: Estimator = account,
) -> list[EngineRow]:
    """``settled`` as each of ``engines`` would size it on ``layout`` at ``context``, at the
    releases each engine's facts name (``compared_releases``): engine settings that mean
    different things across engines (memory fraction, batch tokens, block size) fall back to
    each engine's default; the cache precision carries over in each engine's spelling."""
    precision = _cache_class(value(settled.request.kv_cache_dtype))
    rows: list[EngineRow] = []
    for name in engines:
        engine = facts(name)
        for version, label in engine.compared_releases or ((None, engine.display),):
            rows.append(
                _engine_row(settled, engine, version, label, precision, context, layout, estimator)
            )
    return rows


def _engine_row(
    settled: Settled,
    engine: EngineFacts,
    version: str | None,
    label: str,
    precision: str | None,
    context: int,
    layout: Layout,
    estimator: Estimator,
) -> EngineRow:
    spec, gpu, name = settled.model, settled.gpu, engine.name
    shape, note = _engine_layout(engine, spec, layout)
    if shape is None:
        return EngineRow(name, version, label, None, None, None, None, note)
    cache = _spelled(engine, precision)
    if cache is None:
        return EngineRow(name, version, label, shape, None, None, None, "no such cache")
    # Settings whose meaning is the engine's own do not carry over to another engine.
    own = {} if name == settled.engine else dict.fromkeys(_ENGINE_OWN)
    try:
        variant = revise(
            settled,
            engine=name,
            engine_version=version,
            kv_cache_dtype=cache,
            # The same precision for V too, where V's type is a setting of its own (-ctv).
            kv_cache_dtype_v=cache if engine.v_cache_dtype_apart else None,
            tensor_parallel_size=shape.tp,
            pipeline_parallel_size=shape.pp,
            gpu_count=shape.gpus_per_replica,
            max_model_len=context,
            **own,
        )
        seqs, est = admitted_at(variant, context, estimator)
    except (KvlintError, ValueError) as exc:
        return EngineRow(name, version, label, shape, None, None, None, str(exc))
    if est.available_kv_bytes is None and est.missing:
        # The engine's accounting is not modelled (or lacks a fact): say which, not 0.
        why = "; ".join(est.missing)
        return EngineRow(name, version, label, shape, None, None, None, f"no {why}")
    pool = hardware_tokens(spec, gpu, est, cache, shape.gpus_per_replica)
    return EngineRow(name, version, label, shape, est, seqs, pool, note)


# Request fields each engine reads its own way: another engine takes its own default.
_ENGINE_OWN = ("memory_fraction", "max_num_batched_tokens", "block_size", "num_gpu_blocks_override")
