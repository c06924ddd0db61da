"""Engines: how each spells its settings (flags, env vars), one module each, and the registry."""

from __future__ import annotations

from kvlint.deploy.engines import llamacpp
from kvlint.deploy.engines import ollama
from kvlint.deploy.engines import sglang
from kvlint.deploy.engines import tgi
from kvlint.deploy.engines import vllm
from kvlint.deploy.engines.interpret import Engine

ENGINES: dict[str, Engine] = {
    "vllm": vllm.ENGINE,
    "sglang": sglang.ENGINE,
    "llamacpp": llamacpp.ENGINE,
    "tgi": tgi.ENGINE,
    "ollama": ollama.ENGINE,
}
