"""llama.cpp (llama-server): everything kvlint knows of it, in one home (a ``ServingEngine``).

``facts`` is what rules may say of it, ``flags`` and ``spelling`` its CLI as data, ``defaults``
what it does when a file is silent, ``effective`` its settle step (what it will run with),
``accounting`` what it allocates. The submodules are imported when a deployment that runs the
engine is found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.engines.llamacpp.facts import FACTS as FACTS

if TYPE_CHECKING:
    from kvlint.deploy.interpret import Engine
    from kvlint.deployment import Deployment
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import Request
    from kvlint.settled import Settled


def interpreter() -> Engine:
    from kvlint.engines.llamacpp.spelling import ENGINE

    return ENGINE


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.llamacpp.effective import settle as settle_llamacpp

    return settle_llamacpp(dep, spec, gpu)


def resolve(request: Request, model: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.llamacpp.effective import resolve as resolve_llamacpp

    return resolve_llamacpp(request, model, gpu)


def account(settled: Settled) -> EngineEstimate:
    from kvlint.engines.llamacpp.accounting import estimate
    from kvlint.engines.llamacpp.effective import LlamaCppSettled

    assert isinstance(settled, LlamaCppSettled), f"{settled.engine} settled for llamacpp"
    return estimate(settled)
