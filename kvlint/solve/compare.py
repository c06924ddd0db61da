"""One deployment under every engine kvlint models, against the first-principles pool."""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.arith.kv import kv_size
from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import pp_problem
from kvlint.arith.parallel import tp_problem
from kvlint.deployment import Deployment
from kvlint.engines import facts
from kvlint.errors import KvlintError
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.solve.capacity import admitted_at
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import default_estimator
from kvlint.solve.variants import value
from kvlint.solve.variants import vary

# (engine, version as a deployment would name it, label). None: the newest kvlint models.
ENGINES: tuple[tuple[str, str | None, str], ...] = (
    ("vllm", None, "vLLM (current)"),
    ("vllm", "0.11.0", "vLLM 0.11"),
    ("sglang", None, "SGLang"),
    ("tgi", None, "TGI"),
    ("llamacpp", None, "llama.cpp"),
)

# The same cache precision as each engine spells it. llama.cpp has no fp8: q8_0 is its 8-bit
# cache (34 bytes per 32 values, a little more than fp8).
_CACHE_SPELLING: dict[str, dict[str, str]] = {
    "8bit": {"vllm": "fp8", "sglang": "fp8_e4m3", "tgi": "fp8_e4m3fn", "llamacpp": "q8_0"},
    "4bit": {"vllm": "nvfp4", "sglang": "nvfp4", "llamacpp": "q4_0"},
}


def _cache_class(name: str | None) -> str | None:
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


def _engine_layout(engine: str, spec: ModelSpec, layout: Layout) -> tuple[Layout | None, str]:
    if engine == "llamacpp" and layout.tp > 1:
        # No tensor parallelism: the same GPUs split the layers (--split-mode layer).
        split = Layout(1, layout.gpus_per_replica)
        problem = pp_problem(spec, facts(engine).parallel, split.pp)
        return (None, problem) if problem else (split, "layers split over the same GPUs")
    rules = facts(engine).parallel
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
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    *,
    context: int,
    layout: Layout,
    estimator: Estimator | None = None,
) -> list[EngineRow]:
    """``dep`` as each engine would size it on ``layout`` at ``context``: engine settings that
    mean different things across engines (memory fraction, batch tokens, block size) fall back
    to each engine's default; the cache precision carries over in each engine's spelling."""
    estimate = estimator or default_estimator()
    precision = _cache_class(value(dep.kv_cache_dtype))
    rows: list[EngineRow] = []
    for engine, version, label in ENGINES:
        shape, note = _engine_layout(engine, spec, layout)
        if shape is None:
            rows.append(EngineRow(engine, version, label, None, None, None, None, note))
            continue
        engine_facts = facts(engine)
        cache = engine_facts.default_cache_dtype
        if precision is not None:
            spelled = _CACHE_SPELLING[precision].get(engine)
            if spelled is None:
                rows.append(
                    EngineRow(engine, version, label, shape, None, None, None, "no such cache")
                )
                continue
            cache = spelled
        same = engine == dep.engine.value
        variant = vary(
            dep,
            engine=engine,
            engine_version=version,
            kv_cache_dtype=cache,
            # The same precision for V too, where V's type is a setting of its own (-ctv).
            kv_cache_dtype_v=cache if engine_facts.v_cache_dtype_apart else None,
            tensor_parallel_size=shape.tp,
            pipeline_parallel_size=shape.pp,
            gpu_count=shape.gpus_per_replica,
            max_model_len=context,
        )
        if not same:
            variant = vary(
                variant,
                memory_fraction=None,
                max_num_batched_tokens=None,
                block_size=None,
                num_gpu_blocks_override=None,
            )
        try:
            seqs, est = admitted_at(variant, spec, gpu, context, estimate)
        except (KvlintError, ValueError) as exc:
            rows.append(EngineRow(engine, version, label, shape, None, None, None, str(exc)))
            continue
        if est.available_kv_bytes is None and est.missing:
            # The engine's accounting is not modelled (or lacks a fact): say which, not 0.
            why = "; ".join(est.missing)
            rows.append(EngineRow(engine, version, label, shape, None, None, None, f"no {why}"))
            continue
        pool = hardware_tokens(spec, gpu, est, cache, shape.gpus_per_replica)
        rows.append(EngineRow(engine, version, label, shape, est, seqs, pool, note))
    return rows
