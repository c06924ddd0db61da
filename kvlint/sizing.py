"""Sizing: everything the rules see about one deployment, computed once before they run."""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.arith.engines.base import EngineEstimate
from kvlint.arith.gpus import GpuSpec
from kvlint.arith.kv import KvSize
from kvlint.model.spec import ModelSpec


@dataclass(frozen=True)
class Sizing:
    """First principles (``kv``) and the engine's own accounting (``engine``), always both when
    the facts allow. ``missing`` names facts the files do not give, for the info finding."""

    spec: ModelSpec | None
    kv: KvSize | None  # at the deployment's cache dtype
    gpu: GpuSpec | None
    engine: EngineEstimate | None
    missing: tuple[str, ...] = ()
