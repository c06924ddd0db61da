"""Records built directly for unit tests (no file parsing): requests and settled deployments."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Sourced
from kvlint.engines import home
from kvlint.finding import Span
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Request
from kvlint.settled import Settled

PATH = "plan.yaml"


class Lines:
    """Hands out spans on successive lines of one file, as a deployment file would have them."""

    def __init__(self, path: str = PATH) -> None:
        self.path = path
        self.line = 0

    def __call__(self, value: Any, raw: str | None = None, column: int = 3) -> Sourced[Any]:
        self.line += 1
        return Sourced(value, Span(self.path, self.line, column), raw)


def request(engine: str = "vllm", **fields: Any) -> Request:
    """What a deployment asks of ``engine``: its Request fields as plain values (or Sourced
    ones), each on its own line in the order given; ``extras`` as a dict of plain values."""
    at = Lines()
    extras = {key: at(value, str(value)) for key, value in fields.pop("extras", {}).items()}
    values = {
        key: value if isinstance(value, Sourced) else at(value, str(value))
        for key, value in fields.items()
    }
    return Request(engine=engine, span=Span(PATH, 1, 1), extras=extras, **values)


def settled(
    engine: str = "vllm", *, spec: ModelSpec, gpu: GpuSpec | None, **fields: Any
) -> Settled:
    """What ``engine`` will run with for the request ``fields`` make, serving ``spec`` on
    ``gpu`` (the engine's own settle step)."""
    return home(engine).resolve(request(engine, **fields), spec, gpu)
