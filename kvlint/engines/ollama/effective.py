"""Ollama's settle step: what ``ollama serve`` will run with for one deployment.

The only place kvlint reads Ollama's settings off a Deployment: its ``OLLAMA_*`` environment
variables (``envconfig``). Ollama runs llama.cpp with ``num_ctx`` x ``num_parallel`` cells, and
honours ``OLLAMA_KV_CACHE_TYPE`` only with flash attention on: without it the cache stays f16.
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
from kvlint.engines.ollama import defaults as D
from kvlint.engines.ollama.facts import FACTS
from kvlint.engines.versions import NEWEST
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.versions import parse_version


@dataclass(frozen=True)
class OllamaSettled(Settled):
    """Ollama's Settled: the cache type it really uses is ``cache_types`` (f16 when the one
    asked for needs flash attention and it is off); ``cache_dtype`` is what the file asks."""

    flash: bool = False


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of Ollama: its typed fields, and the flags and environment variables
    it reads that have no field (read here and nowhere else)."""
    return Request.of(
        dep,
        **{"OLLAMA_FLASH_ATTENTION": dep.env.get("OLLAMA_FLASH_ATTENTION")},
    )


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> OllamaSettled:
    """What Ollama will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> OllamaSettled:
    """Ollama's defaults filled into ``req``, its overrides applied to ``model``."""
    spec = model
    here = req.span
    version = stated_release(req, FACTS.name)
    notes: list[str] = []
    num_ctx = req.max_model_len
    if not (num_ctx and num_ctx.value):
        num_ctx = Sourced(D.OLLAMA_CONTEXT_LENGTH, here, default=True)
        notes.append(f"default OLLAMA_CONTEXT_LENGTH {num_ctx.value}")
    num_parallel = req.max_num_seqs
    if not (num_parallel and num_parallel.value):
        num_parallel = Sourced(D.OLLAMA_NUM_PARALLEL, here, default=True)
        notes.append(f"default OLLAMA_NUM_PARALLEL {num_parallel.value}")
    numbers = parse_version(str(version.value)) or parse_version(NEWEST["ollama"]) or (0,)
    flash_value = req.flash_attention or req.extra("OLLAMA_FLASH_ATTENTION")
    if flash_value is not None:
        mode = "on" if switch(flash_value) else "off"
        flash_setting = Sourced(mode, flash_value.span, flash_value.raw)
    else:
        # An image that names no release runs a current one (0.30 and later: `auto`).
        release = D.FLASH_AUTO_SINCE if req.engine_version is None else numbers
        mode = D.flash_attention_default(release, spec.model_type)
        flash_setting = Sourced(mode, here, default=True)
    asked = req.kv_cache_dtype
    cache_dtype = (
        Sourced(str(asked.value).lower(), asked.span, asked.raw)
        if asked is not None
        else Sourced(D.OLLAMA_KV_CACHE_TYPE, here, default=True)
    )
    used = cache_dtype.value
    cache_note = None
    # `auto` hands the type to llama.cpp, which turns flash attention on for it; before 0.30 a
    # quantised type without flash attention was dropped for f16 (from 0.30 an explicit off
    # with a quantised V cache is llama-server's refusal, reported by KV202).
    flash = mode != "off"
    if used != "f16" and not flash and numbers < D.FLASH_AUTO_SINCE:
        cache_note = f"OLLAMA_KV_CACHE_TYPE {used} needs OLLAMA_FLASH_ATTENTION=1: Ollama uses f16"
        notes.append(cache_note)
        used = "f16"
    types, unsized = storage(used, spec.dtype)
    cache_note = unsized or cache_note
    derived = derived_max_model_len(spec)
    return OllamaSettled(
        **given(FACTS, req, model, gpu, spec=spec, version=version, derived=derived),
        max_model_len=num_ctx,
        allow_long=None,
        max_num_seqs=num_parallel,
        max_num_batched_tokens=None,
        memory_fraction=None,
        kv_cache_memory_bytes=None,
        cache_dtype=cache_dtype,
        cache_dtype_v=None,
        cache_types=types,
        tensor_parallel_size=Sourced(1, here, default=True),
        pipeline_parallel_size=Sourced(1, here, default=True),
        data_parallel_size=Sourced(1, here, default=True),
        block_size=None,
        enforce_eager=None,
        flash_attention=flash_setting,
        cache_note=cache_note,
        notes=tuple(notes),
        flash=flash,
    )
