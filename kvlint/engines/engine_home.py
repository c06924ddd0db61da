"""Home: the ``ServingEngine`` every engine folder is, found by the folder's layout (not named
``home``: the registry's ``home()`` function would be shadowed by a submodule of that name).

A home's package holds ``facts`` (imported with the package: what rules may say of the engine),
``spelling`` (``ENGINE``: its CLI as data), ``effective`` (``settle`` and ``resolve``: the
settle step) and ``accounting`` (``estimate``: what it allocates). ``Home`` imports each of the
last three when first asked for, so a run that finds no deployment of an engine never loads its
tables; the package's ``__init__`` is then one line, ``HOME = Home(__name__, FACTS)``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING
from typing import cast

if TYPE_CHECKING:
    from kvlint.deploy.interpret import Engine
    from kvlint.deployment import Deployment
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import EngineFacts
    from kvlint.settled import Request
    from kvlint.settled import Settled


class Home:
    """One engine's home: its facts, and its spelling, settle step and accounting modules."""

    def __init__(self, package: str, facts: EngineFacts) -> None:
        self.package = package
        self.FACTS = facts

    def _module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{name}")

    def interpreter(self) -> Engine:
        """Its flags, aliases and environment variables, and how they set Deployment fields."""
        return cast("Engine", self._module("spelling").ENGINE)

    def settle(self, dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled:
        """What it will run with: overrides applied, defaults filled and marked."""
        return cast("Settled", self._module("effective").settle(dep, spec, gpu))

    def resolve(self, request: Request, model: ModelSpec, gpu: GpuSpec | None) -> Settled:
        """The settle step on a request already read (what ``revise`` and the solver use)."""
        return cast("Settled", self._module("effective").resolve(request, model, gpu))

    def account(self, settled: Settled) -> EngineEstimate:
        """What it allocates for the settled deployment, or why it will not start."""
        if settled.engine != self.FACTS.name:
            raise ValueError(f"{settled.engine} settled, accounted by {self.FACTS.name}")
        estimate = cast("EngineEstimate", self._module("accounting").estimate(settled))
        if estimate.band_regime is not None or estimate.band_note is not None:
            return estimate
        if estimate.available_kv_bytes is None and estimate.kv_cache_tokens is None:
            return estimate  # no figure, nothing to band
        from kvlint.engines import band

        logs = band.engine_logs(self.FACTS.name)
        if logs is None and not self.FACTS.pool_is_cells:
            return estimate  # an engine with its own band table (vLLM: stated memory, no band)
        if band.shipped(self.FACTS.name).rows:
            return estimate  # a fitted band the estimate did not take (the memory is stated)
        from dataclasses import replace

        note = band.no_band(logs, cells=self.FACTS.pool_is_cells)
        return replace(estimate, band_note=note)
