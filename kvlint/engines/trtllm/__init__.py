"""TensorRT-LLM: everything kvlint knows of this engine, in one home (a ``ServingEngine``).

``facts`` is what rules may say of it, ``flags`` and ``spelling`` its CLI as data, ``defaults``
what it does when a file is silent, ``effective`` its settle step (what it will run with),
``accounting`` what it allocates. The submodules are imported when a deployment that runs the
engine is found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.engines.trtllm.facts import FACTS as FACTS

if TYPE_CHECKING:
    from kvlint.deploy.interpret import Engine
    from kvlint.deployment import Deployment
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import Request
    from kvlint.settled import Settled


def interpreter() -> Engine:
    from kvlint.engines.trtllm.spelling import ENGINE

    return ENGINE


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.trtllm.effective import settle as settle_trtllm

    return settle_trtllm(dep, spec, gpu)


def resolve(request: Request, model: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.trtllm.effective import resolve as resolve_trtllm

    return resolve_trtllm(request, model, gpu)


def account(settled: Settled) -> EngineEstimate:
    from kvlint.engines.trtllm.accounting import estimate
    from kvlint.engines.trtllm.effective import TrtllmSettled

    assert isinstance(settled, TrtllmSettled), f"{settled.engine} settled for trtllm"
    return estimate(settled)
