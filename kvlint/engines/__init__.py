"""The serving engines kvlint knows, one home each under ``kvlint/engines/<engine>/``.

``ENGINES`` maps an engine's name to how it spells its settings (its CLI as data); ``estimate``
runs its own accounting of the KV cache. Each engine's modules are imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvlint.deploy.interpret import Engine
    from kvlint.deployment import Deployment
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec

# Every engine kvlint reads, in the order reports list them.
NAMES = ("vllm", "sglang", "llamacpp", "tgi", "ollama")


class _Spellings(Mapping[str, "Engine"]):
    """Name -> the engine's CLI as data, each engine's tables imported when first asked for."""

    def __getitem__(self, name: str) -> Engine:
        if name not in NAMES:
            raise KeyError(name)
        module = importlib.import_module(f"kvlint.engines.{name}.spelling")
        engine: Engine = module.ENGINE
        return engine

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)


ENGINES: Mapping[str, Engine] = _Spellings()


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """The engine's own numbers for ``dep`` (by ``dep.engine.value``)."""
    from kvlint.estimate import EngineEstimate

    engine = dep.engine.value.lower()
    if engine in ("llama.cpp", "llama-cpp"):
        engine = "llamacpp"
    if engine in NAMES:
        module = importlib.import_module(f"kvlint.engines.{engine}.accounting")
        result: EngineEstimate = module.estimate(dep, spec, gpu)
        return result
    return EngineEstimate(
        engine=engine,
        version="",
        max_model_len=dep.max_model_len.value if dep.max_model_len else 0,
        missing=(f"{engine} accounting",),
    )
