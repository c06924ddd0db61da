"""llama.cpp's settle step: what ``llama-server`` will run with for one deployment.

The only place kvlint reads llama-server's settings off a Deployment (short and long flags and
the ``LLAMA_ARG_*`` variables all land in the typed fields its flag table fills). The defaults
are the current build's (``common/common.h``, ``tools/server/server.cpp``): ``-c 0`` is the
model's training context, ``-np`` auto is 4 slots sharing one unified cache, ``-ctk`` f16.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.common import derived_max_model_len
from kvlint.engines.common import given
from kvlint.engines.common import stated_release
from kvlint.engines.common import storage
from kvlint.engines.common import switch
from kvlint.engines.llamacpp import defaults as D
from kvlint.engines.llamacpp.facts import FACTS
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Request
from kvlint.settled import Settled


@dataclass(frozen=True)
class LlamaCppSettled(Settled):
    """llama.cpp's Settled, with what only its accounting reads."""

    ctx_size: int | None = None  # -c as written (0 or unset: the model's)
    parallel: int | None = None  # -np as written (-1 or unset: auto)
    unified: bool | None = None  # -kvu; None: unified exactly when -np is auto
    swa_full: bool = False
    auto_fit: bool = True  # llama_params_fit (--fit) may lower an unset context
    layers_pinned: bool = False  # -ngl set: weights do not move to system memory


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of llama-server: its typed fields."""
    return Request.of(dep)


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> LlamaCppSettled:
    """What llama-server will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> LlamaCppSettled:
    """llama-server's defaults filled into ``req``, its overrides applied to ``model``."""
    spec = model
    here = req.span
    version = stated_release(req, FACTS.name)
    train = spec.max_position_embeddings or D.LLAMACPP_DEFAULT_CTX_OLD
    ctx = req.max_model_len
    ctx_size = ctx.value if ctx is not None and ctx.value else None
    parallel = req.max_num_seqs.value if req.max_num_seqs is not None else None
    auto = parallel is None or parallel < 0
    type_k = req.kv_cache_dtype
    type_v = req.kv_cache_dtype_v
    k_name = str(type_k.value) if type_k is not None else "f16"
    # -ctk and -ctv are set apart (common/arg.cpp): V stays f16 unless -ctv says otherwise.
    v_name = str(type_v.value) if type_v is not None else "f16"
    types, cache_note = storage(k_name, spec.dtype, v_name)
    derived = derived_max_model_len(spec)
    flash = req.flash_attention
    if flash is not None:
        flash = Sourced(str(flash.value).lower(), flash.span, flash.raw)
    return LlamaCppSettled(
        **given(FACTS, req, model, gpu, spec=spec, version=version, derived=derived, numbers=None),
        max_model_len=ctx if ctx is not None and ctx_size else Sourced(train, here, default=True),
        allow_long=None,
        max_num_seqs=req.max_num_seqs
        if not auto
        else Sourced(D.LLAMACPP_AUTO_PARALLEL, here, default=True),
        max_num_batched_tokens=None,
        memory_fraction=None,
        kv_cache_memory_bytes=None,
        cache_dtype=type_k or Sourced("f16", here, default=True),
        cache_dtype_v=type_v,
        cache_types=types,
        tensor_parallel_size=Sourced(1, here, default=True),
        pipeline_parallel_size=Sourced(1, here, default=True),
        data_parallel_size=Sourced(1, here, default=True),
        block_size=None,
        enforce_eager=None,
        flash_attention=flash,
        n_gpu_layers=req.n_gpu_layers,
        cache_note=cache_note,
        ctx_size=ctx_size,
        parallel=parallel,
        unified=req.kv_unified.value if req.kv_unified is not None else None,
        swa_full=switch(req.swa_full),
        auto_fit=D.llamacpp_auto_fit(str(req.engine_version.value) if req.engine_version else None),
        layers_pinned=req.n_gpu_layers is not None,
    )
