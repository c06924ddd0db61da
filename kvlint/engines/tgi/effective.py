"""TGI's settle step: what ``text-generation-launcher`` will run with for one deployment.

The only place kvlint reads TGI's settings off a Deployment: the typed fields its flag table
fills (flags and their env-var twins), ``--max-batch-total-tokens`` and the server's own
environment (``ATTENTION``, ``TGI_WIGGLE_ROOM``). Without ``--num-shard`` the launcher shards
over every GPU it sees (``launcher/src/main.rs``: ``num_shard`` defaults to the device count).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.common import computed_dtype
from kvlint.engines.common import derived_max_model_len
from kvlint.engines.common import given
from kvlint.engines.common import parallel_size
from kvlint.engines.common import plain
from kvlint.engines.common import stated_release
from kvlint.engines.common import storage
from kvlint.engines.tgi import defaults as D
from kvlint.engines.tgi.facts import FACTS
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Request
from kvlint.settled import Settled


@dataclass(frozen=True)
class TgiSettled(Settled):
    """TGI's Settled, with what only its accounting reads."""

    attention: str | None = None  # the ATTENTION backend (flashinfer by default on CUDA)
    wiggle_room: float = D.TGI_WIGGLE_ROOM
    max_batch_total_tokens: int | None = None  # deprecated for flash models: ignored


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of TGI: its typed fields, and the flags and environment variables
    it reads that have no field (read here and nowhere else)."""
    return Request.of(
        dep,
        **{
            "ATTENTION": dep.env.get("ATTENTION"),
            "TGI_WIGGLE_ROOM": dep.env.get("TGI_WIGGLE_ROOM"),
            "max-batch-total-tokens": dep.settings.get("max-batch-total-tokens"),
        },
    )


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> TgiSettled:
    """What TGI will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> TgiSettled:
    """TGI's defaults filled into ``req``, its overrides applied to ``model``."""
    spec = model
    here = req.span
    version = stated_release(req, FACTS.name)
    shards = req.tensor_parallel_size
    if shards is None and req.gpu_count is not None and req.gpu_count.value > 0:
        shards = Sourced(req.gpu_count.value, req.gpu_count.span, default=True)
    fraction = req.memory_fraction or Sourced(D.TGI_CUDA_MEMORY_FRACTION, here, default=True)
    positions = spec.max_position_embeddings or 4096
    derived = derived_max_model_len(spec)
    cache = req.kv_cache_dtype
    cache_dtype = (
        Sourced(str(cache.value).lower(), cache.span, cache.raw)
        if cache is not None
        else Sourced("auto", here, default=True)
    )
    # `auto` is the model dtype (never the weight quantisation), or the --dtype a file sets.
    types, cache_note = storage(cache_dtype.value, computed_dtype(req.dtype, spec))
    attention = req.extra("ATTENTION")
    wiggle = req.extra("TGI_WIGGLE_ROOM")
    user_batch = plain(req.extra("max-batch-total-tokens"))
    notes = [f"TGI {version.value}" + ("" if req.engine_version else " (newest known)")]
    return TgiSettled(
        **given(FACTS, req, model, gpu, spec=spec, version=version, derived=derived),
        max_model_len=req.max_model_len or Sourced(positions, here, default=True),
        allow_long=None,
        max_num_seqs=req.max_num_seqs,
        max_num_batched_tokens=req.max_num_batched_tokens,
        memory_fraction=fraction,
        kv_cache_memory_bytes=None,
        cache_dtype=cache_dtype,
        cache_dtype_v=None,
        cache_types=types,
        tensor_parallel_size=parallel_size(shards, here),
        pipeline_parallel_size=Sourced(1, here, default=True),
        data_parallel_size=Sourced(1, here, default=True),
        block_size=Sourced(
            D.tgi_block_size(attention.value if attention else None), here, default=True
        ),
        enforce_eager=None,
        hf_overrides=req.hf_overrides,
        cache_note=cache_note,
        notes=tuple(notes),
        attention=attention.value if attention else None,
        wiggle_room=float(wiggle.value) if wiggle is not None else D.TGI_WIGGLE_ROOM,
        max_batch_total_tokens=user_batch if isinstance(user_batch, int) else None,
    )
