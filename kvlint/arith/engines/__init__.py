"""Each engine's own accounting of the KV cache, version-aware: ``estimate`` dispatches."""

from __future__ import annotations

from kvlint.arith.engines.base import EngineEstimate
from kvlint.arith.gpus import GpuSpec
from kvlint.deploy.model import Deployment
from kvlint.model.spec import ModelSpec


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """The engine's own numbers for ``dep`` (by ``dep.engine.value``)."""
    engine = dep.engine.value.lower()
    if engine == "vllm":
        from kvlint.arith.engines import vllm

        return vllm.estimate(dep, spec, gpu)
    if engine == "sglang":
        from kvlint.arith.engines import sglang

        return sglang.estimate(dep, spec, gpu)
    if engine in ("llamacpp", "llama.cpp", "llama-cpp"):
        from kvlint.arith.engines import llamacpp

        return llamacpp.estimate(dep, spec, gpu)
    if engine == "tgi":
        from kvlint.arith.engines import tgi

        return tgi.estimate(dep, spec, gpu)
    if engine == "ollama":
        from kvlint.arith.engines import ollama

        return ollama.estimate(dep, spec, gpu)
    return EngineEstimate(
        engine=engine,
        version="",
        max_model_len=dep.max_model_len.value if dep.max_model_len else 0,
        missing=(f"{engine} accounting",),
    )
