"""Deployment variants: the same deployment with one setting changed, every value still Sourced."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.estimate import EngineEstimate
from kvlint.finding import Span
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec

# What the solver calls to learn the engine's numbers; kvlint.estimate by default,
# swappable so a test can pin the search itself.
Estimator = Callable[[Deployment, ModelSpec, "GpuSpec | None"], EngineEstimate]

SOLVER_PATH = "<kvlint solve>"


def default_estimator() -> Estimator:
    from kvlint.engines import estimate

    fn: Estimator = estimate
    return fn


def vary(dep: Deployment, **changes: Any) -> Deployment:
    """``dep`` with the named fields set (``None`` clears a field back to the engine default).

    The new value keeps the span of the value it replaces, so a finding or a fix that quotes a
    solved value still points at the line the user would edit; a field the file never set gets
    the deployment's own span with the field name as its key.
    """
    values: dict[str, Any] = {}
    for name, value in changes.items():
        if value is None:
            values[name] = None
            continue
        old = getattr(dep, name)
        span = old.span if isinstance(old, Sourced) else dep.span._replace(key=name)
        values[name] = Sourced(value, span, raw=str(value))
    return dataclasses.replace(dep, **values)


def value(field: Sourced[Any] | None) -> Any:
    return None if field is None else field.value


def cli_deployment(*, engine: str, model: str, settings: dict[str, Any]) -> Deployment:
    """A Deployment made from command-line options, for ``kvlint solve MODEL``."""
    span = Span(SOLVER_PATH, 1, 1)
    dep = Deployment(
        path=SOLVER_PATH,
        span=span,
        name="command line",
        carrier="cli",
        engine=Sourced(engine, span._replace(key="engine"), raw=engine),
        model=Sourced(model, span._replace(key="model"), raw=model),
    )
    return vary(dep, **{k: v for k, v in settings.items() if v is not None})
