"""Carriers: where settings live. One module per kind of document, tried in this order.

Each carrier module is imported only when a document could be its kind: a test of the
document's apiVersion and kind (a Kubernetes object) or of its shape, looser than or equal to
the carrier's own ``matches``, which then decides. A Kubernetes Deployment never imports the
Helm, compose, Ray, KServe or engine-config readers (~2 ms of a one-file check). Any Kubernetes
object is owned by ``custom`` at the latest, so the readers of other shapes are only tried on
documents that are not Kubernetes objects.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from kvlint.deploy.carriers.base import Carrier
from kvlint.deploy.carriers.base import kind_of
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node

# The Kubernetes (apiVersion, kind) of the document, or None for any other document.
Kind = tuple[str, str] | None


def _plan(root: Node, kind: Kind) -> bool:
    return isinstance(root, Mapping) and root.get("kvlint") is not None


def _kubernetes(root: Node, kind: Kind) -> bool:
    return kind is not None


def _other(root: Node, kind: Kind) -> bool:
    return kind is None


def _keyed(key: str) -> Callable[[Node, Kind], bool]:
    return lambda root, kind: (
        kind is None and isinstance(root, Mapping) and root.get(key) is not None
    )


def _group(prefix: str) -> Callable[[Node, Kind], bool]:
    return lambda root, kind: kind is not None and prefix in kind[0]


# Carrier module under kvlint.deploy.carriers -> when to ask it, in the order they are tried.
CARRIERS: dict[str, Callable[[Node, Kind], bool]] = {
    "plan": _plan,
    "kubernetes": _kubernetes,  # Pods and the workloads that hold a pod template
    "kserve": _group("kserve.io"),
    "kubeai": _group("kubeai.org/"),
    "dynamo": lambda root, kind: kind is not None and kind[1].startswith("Dynamo"),
    "ray": _group("ray.io/"),
    "llmaz": _group("inference.llmaz.io/"),
    "custom": _kubernetes,  # any other Kubernetes object: searched for containers
    "compose": _keyed("services"),
    "helm": _other,
    "rayllm": _keyed("engine_config"),
    "engine_yaml": _other,
}


def carrier(name: str) -> Carrier:
    """The carrier module ``name`` (imported on first use)."""
    return cast(Carrier, importlib.import_module(f"{__name__}.{name}"))


def carrier_for(root: Node) -> Carrier | None:
    """The first carrier that owns the document, or None when none does."""
    kind = kind_of(root)
    for name, could_be in CARRIERS.items():
        if could_be(root, kind):
            found = carrier(name)
            if found.matches(root):
                return found
    return None
