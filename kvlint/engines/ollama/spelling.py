"""Ollama: ``ollama serve`` takes no flags; settings are OLLAMA_* environment variables."""

from __future__ import annotations

from typing import Any

from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.ollama.facts import KV_CACHE_TYPES

SETTINGS = {
    s.name: s
    for s in (
        Setting("OLLAMA_CONTEXT_LENGTH", "int", "max_model_len", minimum=1),
        # 0 lets Ollama choose (envconfig.NumParallel's default).
        Setting("OLLAMA_NUM_PARALLEL", "int", "max_num_seqs", minimum=0),
        Setting("OLLAMA_KV_CACHE_TYPE", "str", "kv_cache_dtype", KV_CACHE_TYPES),
        Setting("OLLAMA_FLASH_ATTENTION", "bool", "flash_attention"),
        Setting("OLLAMA_MAX_LOADED_MODELS", "int"),
        Setting("OLLAMA_GPU_OVERHEAD", "int"),
        Setting("OLLAMA_SCHED_SPREAD", "bool"),
        Setting("OLLAMA_NEW_ENGINE", "bool"),
    )
}


def _flash(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    dep.flash_attention = Sourced("on" if value.value else "off", value.span, value.raw)


SPEC = EngineSpec(
    name="ollama",
    settings=SETTINGS,
    known={name: "1" for name in SETTINGS},
    env={name: name for name in SETTINGS},
)

ENGINE = Engine(SPEC, hooks={"OLLAMA_FLASH_ATTENTION": _flash})
