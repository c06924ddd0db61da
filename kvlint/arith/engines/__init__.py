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
    return EngineEstimate(
        engine=engine,
        version="",
        max_model_len=dep.max_model_len.value if dep.max_model_len else 0,
        missing=(f"{engine} accounting",),
    )
