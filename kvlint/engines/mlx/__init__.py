"""MLX (``mlx_lm.server`` on Apple silicon): everything kvlint knows of it, in one home.

``facts`` is what rules may say of it, ``spelling`` its CLI as data, ``defaults`` what it does
when a command line is silent, ``effective`` its settle step, ``accounting`` what it holds in
unified memory. The submodules are imported when a deployment that runs the engine is found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.engines.mlx.facts import FACTS as FACTS

if TYPE_CHECKING:
    from kvlint.deploy.interpret import Engine
    from kvlint.deployment import Deployment
    from kvlint.estimate import EngineEstimate
    from kvlint.gpus import GpuSpec
    from kvlint.model.spec import ModelSpec
    from kvlint.settled import Request
    from kvlint.settled import Settled


def interpreter() -> Engine:
    from kvlint.engines.mlx.spelling import ENGINE

    return ENGINE


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.mlx.effective import settle as settle_mlx

    return settle_mlx(dep, spec, gpu)


def resolve(request: Request, model: ModelSpec, gpu: GpuSpec | None) -> Settled:
    from kvlint.engines.mlx.effective import resolve as resolve_mlx

    return resolve_mlx(request, model, gpu)


def account(settled: Settled) -> EngineEstimate:
    from kvlint.engines.mlx.accounting import estimate
    from kvlint.engines.mlx.effective import MlxSettled

    assert isinstance(settled, MlxSettled), f"{settled.engine} settled for mlx"
    return estimate(settled)
