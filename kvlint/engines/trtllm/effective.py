"""TensorRT-LLM's settle step: what ``trtllm-serve`` (or Dynamo's TensorRT-LLM worker, or an
engine built by ``trtllm-build``) will run with for one deployment.

The only place kvlint reads TensorRT-LLM's settings off a Deployment: the typed fields its flag
table fills and the options without a field (``--backend``, ``kv_cache_config.max_tokens``,
``--fail_fast_on_attention_window_too_large``, ``--enable_attention_dp``, the build's flags).
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
from kvlint.engines.common import switch
from kvlint.engines.trtllm import defaults as D
from kvlint.engines.trtllm.facts import FACTS
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.versions import parse_version

# Options only trtllm-build takes: a container that runs it serves the engine it built, through
# the C++ runtime (the TensorRT backend), not the PyTorch backend.
_BUILD_ONLY = ("checkpoint-dir", "output-dir", "kv-cache-type", "gemm-plugin", "max-input-len")


@dataclass(frozen=True)
class TrtllmSettled(Settled):
    """TensorRT-LLM's Settled, with what only its accounting reads."""

    backend: str = D.BACKEND  # pytorch, or tensorrt for an engine built by trtllm-build
    max_tokens: int | None = None  # kv_cache_config.max_tokens: caps the pool
    fail_fast: bool = False  # --fail_fast_on_attention_window_too_large
    attention_dp: bool = False  # enable_attention_dp: every rank keeps all KV heads
    beam_width: int = D.MAX_BEAM_WIDTH


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of TensorRT-LLM: its typed fields, and the options it reads that have
    no field (read here and nowhere else)."""
    built = next((dep.settings[k] for k in _BUILD_ONLY if k in dep.settings), None)
    return Request.of(
        dep,
        **{
            "backend": dep.settings.get("backend"),
            "built-engine": built,
            "kv-cache-config.max-tokens": dep.settings.get("kv-cache-config.max-tokens"),
            "fail-fast": dep.settings.get("fail-fast-on-attention-window-too-large"),
            "enable-attention-dp": dep.settings.get("enable-attention-dp"),
            "max-beam-width": dep.settings.get("max-beam-width"),
            "max-input-len": dep.settings.get("max-input-len"),
        },
    )


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> TrtllmSettled:
    """What TensorRT-LLM will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def _backend(req: Request) -> str:
    written = plain(req.extra("backend"))
    if written is not None:
        return "tensorrt" if str(written) in ("tensorrt", "trt") else str(written)
    return "tensorrt" if req.extra("built-engine") is not None else D.BACKEND


def tokens_per_block(backend: str, release: tuple[int, ...] | None) -> int:
    """The block the pool is paged in when no file sets it: 32 in the PyTorch backend; an
    engine built by an older trtllm-build pages in 64 (``defaults``)."""
    if backend == "tensorrt" and release is not None and release < D.OLD_ENGINES_BEFORE:
        return D.TOKENS_PER_BLOCK_OLD_ENGINES
    return D.TOKENS_PER_BLOCK


def built_by_build_py(backend: str, release: tuple[int, ...] | None) -> bool:
    """An engine of the 0.5-0.7 releases, built by an examples/<model>/build.py script."""
    return backend == "tensorrt" and release is not None and release < D.BUILD_PY_BEFORE


def checkpoint_cache_dtype(model: ModelSpec) -> str | None:
    """The cache dtype a ModelOpt checkpoint declares (``kv_cache_quant_algo``), else None."""
    quant = model.quantization
    if quant is None or quant.method != "modelopt":
        return None
    return quant.kv_cache_dtype


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> TrtllmSettled:
    """TensorRT-LLM's defaults filled into ``req``."""
    here = req.span
    version = stated_release(req, FACTS.name)
    release = parse_version(str(version.value))
    backend = _backend(req)
    notes = [f"TensorRT-LLM {version.value}" + ("" if req.engine_version else " (newest known)")]
    notes.append(f"{backend} backend")
    # max_seq_len "deduced from the model config" when unset (serve.py --max_seq_len help).
    derived = derived_max_model_len(model)
    context = req.max_model_len
    if not (context and context.value):
        context = Sourced(derived, here, default=True)
        notes.append(f"default max_seq_len {context.value:,} (the model's)")
    batch = req.max_num_seqs or Sourced(D.MAX_BATCH_SIZE, here, default=True)
    beams = plain(req.extra("max-beam-width"))
    beam_width = beams if isinstance(beams, int) and beams > 0 else D.MAX_BEAM_WIDTH
    build_py = built_by_build_py(backend, release)
    tokens = req.max_num_batched_tokens
    if tokens is None and build_py:
        written = plain(req.extra("max-input-len"))
        input_len = written if isinstance(written, int) else D.BUILD_PY_MAX_INPUT_LEN
        profile = max(input_len * batch.value, beam_width * batch.value)
        tokens = Sourced(profile, here, default=True)
        notes.append(
            f"engine profiled for max_batch_size x max_input_len = {profile:,} tokens "
            "(build.py before 0.8, max_num_tokens unset)"
        )
    tokens = tokens or Sourced(D.MAX_NUM_TOKENS, here, default=True)
    fraction = req.memory_fraction
    if fraction is None:
        share = D.OLD_RUNTIME_FREE_GPU_MEMORY_FRACTION if build_py else D.FREE_GPU_MEMORY_FRACTION
        fraction = Sourced(share, here, default=True)
        notes.append(f"default free_gpu_memory_fraction {share:g}")
    cache = req.kv_cache_dtype
    cache_dtype = (
        Sourced(str(cache.value).lower(), cache.span, cache.raw)
        if cache is not None
        else Sourced("auto", here, default=True)
    )
    # `auto` is the model dtype (never the weight quantisation), unless the checkpoint declares
    # its cache's quantisation: kv_cache_config.dtype `auto` leaves a ModelOpt checkpoint's
    # kv_cache_quant_algo in force, `fp8`/`nvfp4` override it (the LLM API's
    # sync_quant_config_with_kv_cache_config_dtype; NVIDIA/TensorRT-LLM#16240). nvidia/Qwen3-8B-FP8
    # under 1.2.0rc2 with no dtype set reports kv_cache_dtype FP8 and pools 72 KiB a token.
    stored = cache_dtype.value
    declared = checkpoint_cache_dtype(model)
    if stored == "auto" and declared is not None:
        stored = declared
        notes.append(f"kv_cache_config.dtype auto: the checkpoint's {declared} cache")
    types, cache_note = storage(stored, computed_dtype(req.dtype, model))
    block = req.block_size or Sourced(tokens_per_block(backend, release), here, default=True)
    max_tokens = plain(req.extra("kv-cache-config.max-tokens"))
    return TrtllmSettled(
        **given(
            FACTS, req, model, gpu, spec=model, version=version, derived=derived, numbers=release
        ),
        max_model_len=context,
        allow_long=None,
        max_num_seqs=batch,
        max_num_batched_tokens=tokens,
        memory_fraction=fraction,
        kv_cache_memory_bytes=req.kv_cache_memory_bytes,
        cache_dtype=cache_dtype,
        cache_dtype_v=None,
        cache_types=types,
        tensor_parallel_size=parallel_size(req.tensor_parallel_size, here),
        pipeline_parallel_size=parallel_size(req.pipeline_parallel_size, here),
        data_parallel_size=parallel_size(req.data_parallel_size, here),
        block_size=block,
        enforce_eager=req.enforce_eager,
        cache_note=cache_note,
        notes=tuple(notes),
        backend=backend,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        fail_fast=switch(req.extra("fail-fast")),
        attention_dp=switch(req.extra("enable-attention-dp")),
        beam_width=beam_width,
    )
