"""MLX's settle step: what ``mlx_lm.server`` will run with for one deployment.

The only place kvlint reads mlx-lm's settings off a Deployment. The server has no context
limit of its own (a session grows until the model's positions or the memory end): the length
sized is the one a file or the solver asks for, else the model's. It decodes up to
``--decode-concurrency`` sessions at once (32) with no memory check, keeps up to
``--prompt-cache-size`` finished sessions' caches (10) unless ``--prompt-cache-bytes`` bounds
them, and wires the GPU's recommended working set, which ``iogpu.wired_limit_mb`` raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.common import derived_max_model_len
from kvlint.engines.common import given
from kvlint.engines.common import stated_release
from kvlint.engines.common import storage
from kvlint.engines.mlx import defaults as D
from kvlint.engines.mlx.facts import FACTS
from kvlint.engines.mlx.spelling import SYSCTL
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.storage import CacheDtype
from kvlint.storage import CacheTypes

# The settings kvlint reads that have no Deployment field, as mlx-lm spells them.
_EXTRAS = (
    "prompt-concurrency",
    "prefill-step-size",
    "prompt-cache-size",
    "prompt-cache-bytes",
    "max-kv-size",
    "kv-group-size",
    "quantized-kv-start",
    SYSCTL,
)


@dataclass(frozen=True)
class MlxSettled(Settled):
    """MLX's Settled, with what only its accounting reads."""

    prompt_concurrency: int = D.PROMPT_CONCURRENCY
    prefill_step_size: int = D.PREFILL_STEP_SIZE
    prompt_cache_size: int = D.PROMPT_CACHE_SIZE
    prompt_cache_bytes: Sourced[int] | None = None
    max_kv_size: Sourced[int] | None = None
    kv_bits: int | None = None  # None: the cache stays in the model dtype
    kv_group_size: int = D.KV_GROUP_SIZE
    quantized_kv_start: int = D.QUANTIZED_KV_START
    wired_limit: Sourced[int] | None = None  # iogpu.wired_limit_mb, in bytes, when stated


def quantised_dtype(bits: int, group_size: int, scale_bytes: int = 2) -> CacheDtype:
    """``QuantizedKVCache``: ``bits``-bit values packed in uint32, and a scale and a bias in the
    model dtype for every ``group_size`` values (``mx.quantize``, affine mode)."""
    return CacheDtype(
        f"{bits}-bit (group {group_size})",
        block_values=group_size,
        block_bytes=group_size * bits // 8 + 2 * scale_bytes,
        quantised=True,
    )


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of mlx-lm: its typed fields and the settings that have none. The server
    has no context limit, so a plan's ``context`` claim is the session length sized (marked a
    default: no file sets a limit the engine enforces)."""
    request = Request.of(dep, **{name: dep.settings.get(name) for name in _EXTRAS})
    claim = dep.claims.context
    if request.max_model_len is None and claim is not None and claim.value > 0:
        length = Sourced(claim.value, claim.span, claim.raw, default=True)
        request = replace(request, max_model_len=length)
    return request


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> MlxSettled:
    """What mlx_lm.server will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def _int(req: Request, name: str, default: int) -> int:
    value = req.extra(name)
    return int(value.value) if value is not None and isinstance(value.value, int) else default


def _sourced_int(req: Request, name: str) -> Sourced[int] | None:
    value: Sourced[Any] | None = req.extra(name)
    return value if value is not None and isinstance(value.value, int) else None


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> MlxSettled:
    """mlx-lm's defaults filled into ``req``."""
    spec = model
    here = req.span
    version = stated_release(req, FACTS.name)
    derived = derived_max_model_len(spec)
    length = req.max_model_len
    if length is None or length.value <= 0:
        length = Sourced(derived, here, default=True)
    concurrency = req.max_num_seqs or Sourced(D.DECODE_CONCURRENCY, here, default=True)
    asked = req.kv_cache_dtype
    kv_bits: int | None = None
    if asked is not None and str(asked.value).strip().lower() not in ("auto", ""):
        text = str(asked.value).strip().lower().removesuffix("bit").removesuffix("-")
        kv_bits = int(text) if text.isdigit() else None
    cache_dtype = asked or Sourced(FACTS.default_cache_dtype, here, default=True)
    types, cache_note = storage("auto", spec.dtype)
    group = _int(req, "kv-group-size", D.KV_GROUP_SIZE)
    if kv_bits is not None and types is not None:
        quantised = quantised_dtype(kv_bits, group)
        types = CacheTypes(k=quantised, v=quantised, state=types.state)
    elif asked is not None and str(asked.value).strip().lower() != "auto":
        types, cache_note = None, None  # a spelling mlx-lm has no cache for: KV202
    wired_mb = _sourced_int(req, SYSCTL)
    wired = None
    if wired_mb is not None and wired_mb.value > 0:  # 0 is macOS's "the default"
        wired = Sourced(wired_mb.value * D.WIRED_LIMIT_UNIT, wired_mb.span, wired_mb.raw)
    one = Sourced(1, here, default=True)
    return MlxSettled(
        **given(FACTS, req, model, gpu, spec=spec, version=version, derived=derived),
        max_model_len=length,
        allow_long=None,
        max_num_seqs=concurrency,
        max_num_batched_tokens=None,
        memory_fraction=None,
        kv_cache_memory_bytes=None,
        cache_dtype=cache_dtype,
        cache_dtype_v=None,
        cache_types=types,
        tensor_parallel_size=one,
        pipeline_parallel_size=one,
        data_parallel_size=one,
        block_size=None,
        enforce_eager=None,
        cache_note=cache_note,
        prompt_concurrency=_int(req, "prompt-concurrency", D.PROMPT_CONCURRENCY),
        prefill_step_size=_int(req, "prefill-step-size", D.PREFILL_STEP_SIZE),
        prompt_cache_size=_int(req, "prompt-cache-size", D.PROMPT_CACHE_SIZE),
        prompt_cache_bytes=_sourced_int(req, "prompt-cache-bytes"),
        max_kv_size=_sourced_int(req, "max-kv-size"),
        kv_bits=kv_bits,
        kv_group_size=group,
        quantized_kv_start=_int(req, "quantized-kv-start", D.QUANTIZED_KV_START),
        wired_limit=wired,
    )
