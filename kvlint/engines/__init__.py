"""The serving engines kvlint knows, one home each under ``kvlint/engines/<engine>/``.

Each home is a package whose ``HOME`` satisfies ``ServingEngine`` (as pre-commit's languages
do): its facts, how it spells its settings (``spelling``: its CLI as data), its ``settle`` step
(what it will run with) and its accounting (``account``: what it allocates, or why it refuses).
Every home is laid out alike, so ``HOME`` is a ``kvlint.engines.engine_home.Home`` over its package.
``HOMES`` is the one registry; an engine's modules are imported only when a deployment runs it.
Adding an engine means adding one folder and one line here.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol
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


class ServingEngine(Protocol):
    """One engine's home (the ``HOME`` of a package under ``kvlint/engines/``)."""

    FACTS: EngineFacts

    def interpreter(self) -> Engine:
        """Its flags, aliases and environment variables, and how they set Deployment fields."""
        ...

    def settle(self, dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled:
        """What it will run with: overrides applied, defaults filled and marked."""
        ...

    def resolve(self, request: Request, model: ModelSpec, gpu: GpuSpec | None) -> Settled:
        """The settle step on a request already read (what ``revise`` and the solver use)."""
        ...

    def account(self, settled: Settled) -> EngineEstimate:
        """What it allocates for the settled deployment, or why it will not start."""
        ...


# name -> the package that is the engine's home, in the order reports list engines.
HOMES: dict[str, str] = {
    "vllm": "kvlint.engines.vllm",
    "sglang": "kvlint.engines.sglang",
    "llamacpp": "kvlint.engines.llamacpp",
    "tgi": "kvlint.engines.tgi",
    "ollama": "kvlint.engines.ollama",
    "trtllm": "kvlint.engines.trtllm",
    "mlx": "kvlint.engines.mlx",
}
NAMES = tuple(HOMES)
_ALIASES = {
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "tensorrt-llm": "trtllm",
    "tensorrt_llm": "trtllm",
    "mlx-lm": "mlx",
    "mlx_lm": "mlx",
}


def canonical(name: str) -> str:
    """The registry key of an engine as a file or a flag names it (``llama.cpp`` -> llamacpp)."""
    key = name.strip().lower()
    return _ALIASES.get(key, key)


def home(name: str) -> ServingEngine:
    """The home of engine ``name``; KeyError for an engine kvlint does not read."""
    package = HOMES[canonical(name)]
    return cast("ServingEngine", importlib.import_module(package).HOME)


class _Spellings(Mapping[str, "Engine"]):
    """Name -> the engine's CLI as data, each engine's tables imported when first asked for."""

    def __getitem__(self, name: str) -> Engine:
        if name not in HOMES:
            raise KeyError(name)
        return home(name).interpreter()

    def __iter__(self) -> Iterator[str]:
        return iter(HOMES)

    def __len__(self) -> int:
        return len(HOMES)


ENGINES: Mapping[str, Engine] = _Spellings()


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> Settled | None:
    """What ``dep``'s engine will run with; None for an engine kvlint does not size."""
    name = canonical(str(dep.engine.value))
    if name not in HOMES:
        return None
    settled = home(name).settle(dep, spec, gpu)
    if dep.workload is not None:
        # The requests it serves are the same whatever the engine: set here, not in each home.
        settled = dataclasses.replace(settled, workload=dep.workload)
    return settled


class _Keep:
    """The default of ``revise``'s ``gpu``: the settled one (None is "no GPU")."""


KEEP = _Keep()


def revise(
    settled: Settled,
    *,
    engine: str | None = None,
    model: ModelSpec | None = None,
    gpu: GpuSpec | _Keep | None = KEEP,
    **fields: object,
) -> Settled:
    """``settled`` with the request's ``fields`` changed (``None`` clears one back to the engine
    default), settled again: what the solver asks "and with TP 4?" of. ``engine`` settles the
    same request under another engine; ``model`` and ``gpu`` replace the model and the GPU.

    A changed value keeps the span of the value it replaces; one the files never set is cited
    at the deployment, with the field's name as its key.
    """
    from dataclasses import replace

    from kvlint.deployment import Sourced

    request = settled.request
    changes: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            changes[name] = None
            continue
        old = getattr(request, name)
        span = old.span if isinstance(old, Sourced) else request.span._replace(key=name)
        changes[name] = Sourced(value, span, raw=str(value))
    target = canonical(engine) if engine is not None else settled.engine
    revised = replace(request, engine=target, **changes)
    if target != settled.engine:
        revised = replace(revised, extras={})  # another engine's own flags do not carry over
    chosen = settled.gpu if isinstance(gpu, _Keep) else gpu
    resolved = home(target).resolve(revised, model or settled.model, chosen)
    # The requests served stay the same whatever is revised.
    return replace(resolved, workload=settled.workload) if settled.workload else resolved


def account(settled: Settled) -> EngineEstimate:
    """The engine's own accounting of the settled deployment."""
    return home(settled.engine).account(settled)


def estimate(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> EngineEstimate:
    """Settle ``dep`` and run its engine's accounting (for callers that hold a Deployment)."""
    settled = settle(dep, spec, gpu)
    if settled is None:
        from kvlint.estimate import EngineEstimate

        engine = str(dep.engine.value).lower()
        return EngineEstimate(
            engine=engine,
            version="",
            max_model_len=dep.max_model_len.value if dep.max_model_len else 0,
            missing=(f"{engine} accounting",),
        )
    return account(settled)


def facts(name: str) -> EngineFacts:
    """What rules and the solver may know of engine ``name`` (its facts module only)."""
    return home(name).FACTS
