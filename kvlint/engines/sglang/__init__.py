"""SGLang: everything kvlint knows of this engine, in one home (a ``ServingEngine``).

``facts`` is what rules may say of it, ``flags`` and ``spelling`` its CLI as data, ``defaults``
what it does when a file is silent, ``effective`` its settle step (what it will run with),
``accounting`` what it allocates. The submodules are imported when a deployment that runs the
engine is found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.engines.sglang.facts import FACTS as FACTS

if TYPE_CHECKING:
    from kvlint.deploy.interpret import Engine
    from kvlint.deployment import Deployment
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import Request
    from kvlint.settled import Settled


def interpreter() -> Engine:
    from kvlint.engines.sglang.spelling import ENGINE

    return ENGINE


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.sglang.effective import settle as settle_sglang

    return settle_sglang(dep, spec, gpu)


def resolve(request: Request, model: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.sglang.effective import resolve as resolve_sglang

    return resolve_sglang(request, model, gpu)


def account(settled: Settled) -> EngineEstimate:
    from kvlint.engines.sglang.accounting import estimate
    from kvlint.engines.sglang.effective import SglangSettled

    assert isinstance(settled, SglangSettled), f"{settled.engine} settled for sglang"
    return estimate(settled)
