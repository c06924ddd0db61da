"""Helpers every engine module shares: reading a Deployment's values and the model's lengths."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from typing import Literal
from typing import TypedDict

from kvlint.arith.dtypes import UnknownCacheDtype
from kvlint.arith.dtypes import UnsizedCacheDtype
from kvlint.arith.dtypes import cache_types
from kvlint.deployment import Sourced
from kvlint.engines.versions import NEWEST
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.finding import Span
from kvlint.gpus import GpuSpec
from kvlint.model.overrides import length_origin
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import EngineFacts
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.storage import CacheTypes
from kvlint.versions import parse_version


def switch(sourced: Sourced[Any] | None) -> bool:
    """An on/off setting as engines read it (true / on / 1 / yes), False when unset."""
    if sourced is None:
        return False
    if isinstance(sourced.value, bool):
        return sourced.value
    return str(sourced.value).strip().lower() in ("1", "true", "on", "yes", "enabled")


def parallel_size(sourced: Sourced[int] | None, here: Span) -> Sourced[int]:
    """A tensor / pipeline / data parallel size as the engine runs it: 1 when unset."""
    if sourced is not None and sourced.value > 0:
        return sourced
    return Sourced(1, sourced.span if sourced is not None else here, default=True)


def setting(settings: dict[str, Sourced[object]], *names: str) -> object | None:
    """The first of ``names`` present in the engine-spelled settings (dashes or underscores)."""
    for name in names:
        for key in (name, name.replace("_", "-"), name.replace("-", "_")):
            if key in settings:
                return settings[key].value
    return None


def head_dims(layer: LayerSpec) -> tuple[int, int]:
    """(K, V) head dims as the engines store them. A K = V layer (Gemma 4's global attention,
    ``attention_k_eq_v``) shares a projection, not a cache: every engine's attention keeps a V
    tensor of the K width beside K (vLLM's ``AttentionSpec.head_size_v`` defaults to
    ``head_size``)."""
    if layer.kind is CacheKind.FULL_KV_SHARED:
        return layer.head_dim_k, layer.head_dim_k
    return layer.head_dim_k, layer.head_dim_v


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# rope types whose factor does not extend max_position_embeddings (engines.md 1g).
_UNSCALED_ROPE = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")


def derived_max_model_len(spec: ModelSpec, version: tuple[int, ...] | None = None) -> int:
    """vLLM's derived maximum length (``_get_and_verify_max_len``): the config's length scaled
    by the RoPE factor, except for the rope types that already include it. In 0.11 a YaRN factor
    multiplies ``original_max_position_embeddings``; from the current line on YaRN is left as is.
    2048 when the config states no length."""
    derived = spec.max_position_embeddings or 2048
    rope = spec.rope_scaling
    if rope is None or "gemma3" in spec.model_type:
        return derived
    old = version is not None and version < (0, 21)
    if old and rope.rope_type == "yarn":
        base = rope.original_max_position_embeddings or derived
        return int(base * (rope.factor or 1.0))
    if rope.rope_type in _UNSCALED_ROPE or not rope.factor:
        return derived
    return int(derived * rope.factor)


def storage(
    name: str, model_dtype: str, v_name: str | None = None
) -> tuple[CacheTypes | None, str | None]:
    """The cache's storage for a dtype as the engine spells it, and a note when kvlint cannot
    size it. A dtype no engine uses gives (None, None): the engine refuses it at start."""
    try:
        return cache_types(name, model_dtype, v_name), None
    except UnsizedCacheDtype as exc:
        return None, str(exc)
    except UnknownCacheDtype:
        return None, None


def computed_dtype(dtype: Sourced[str] | None, spec: ModelSpec) -> str:
    """The dtype the model runs in: ``--dtype`` when a file sets one, else the config's."""
    if dtype is None or str(dtype.value).strip().lower() == "auto":
        return spec.dtype
    return str(dtype.value)


def without_storage(settled: Settled, base: EngineEstimate) -> EngineEstimate:
    """The estimate when the cache dtype has no storage kvlint knows: the engine refuses a
    dtype no engine uses (KV202 reports it); one whose layout kvlint has not read is a fact
    the files leave unknown, and nothing is sized."""
    name = settled.cache_dtype.value
    if settled.cache_note is not None:
        return replace(base, missing=(f"cache storage of `{name}` (not known to kvlint)",))
    message = f"`{name}` is not a cache dtype {settled.facts.display} accepts"
    return replace(base, fits=False, error=message, refusal=Refusal.SETTING)


class Given(TypedDict):
    """The Settled fields every engine fills in the same way: which engine, what the files
    asked, the model, the GPU, the release and the longest context the config allows. Each
    settle step passes them with ``**given(...)`` and adds what it decides itself, so a field
    every accounting reads (``reserved_memory``) cannot be left out of one engine."""

    engine: str
    facts: EngineFacts
    span: Span
    request: Request
    model: ModelSpec
    version: Sourced[str]
    version_numbers: tuple[int, ...] | None
    version_assumed: bool
    spec: ModelSpec
    gpu: GpuSpec | None
    gpu_count: Sourced[int] | None
    derived_max_model_len: int
    length_origin: str
    quantization: Sourced[str] | None
    dtype: Sourced[str] | None
    reserved_memory: Sourced[int] | None


def stated_release(req: Request, engine: str) -> Sourced[str]:
    """The release a file names, else the newest kvlint knows (a default at the deployment)."""
    return req.engine_version or Sourced(NEWEST[engine], req.span, default=True)


def given(
    facts: EngineFacts,
    req: Request,
    model: ModelSpec,
    gpu: GpuSpec | None,
    *,
    spec: ModelSpec,
    version: Sourced[str],
    derived: int,
    numbers: tuple[int, ...] | Literal["parsed"] | None = "parsed",
    assumed: bool | None = None,
) -> Given:
    """The shared fields of ``facts``'s Settled for ``req``. ``numbers`` is the release as the
    engine compares it (``"parsed"``: ``version`` parsed; ``None`` where releases are build ids);
    ``assumed``, that no file names a release the engine's tables read (default: none named)."""
    release = parse_version(str(version.value)) if numbers == "parsed" else numbers
    return Given(
        engine=facts.name,
        facts=facts,
        span=req.span,
        request=req,
        model=model,
        version=version,
        version_numbers=release,
        version_assumed=req.engine_version is None if assumed is None else assumed,
        spec=spec,
        gpu=gpu,
        gpu_count=req.gpu_count,
        derived_max_model_len=derived,
        length_origin=length_origin(spec, derived),
        quantization=req.quantization,
        dtype=req.dtype,
        reserved_memory=req.reserved_memory,
    )


def plain(sourced: Sourced[Any] | None) -> Any:
    """A setting's value, None when unset."""
    return None if sourced is None else sourced.value


def reserved_bytes(settled: Settled) -> int:
    """Bytes of the GPU other residents hold (``reserved_memory``), 0 when none is stated."""
    reserved = settled.reserved_memory
    return max(0, reserved.value) if reserved is not None else 0


def reserved_note(settled: Settled, how: str) -> str | None:
    """What the accounting did with ``reserved_memory``, for its notes and messages."""
    reserved = reserved_bytes(settled)
    if not reserved:
        return None
    return f"reserved_memory {reserved / 2**30:.2f} GiB held by other residents: {how}"
