"""Carriers: where settings live. One module per kind of document, tried in this order."""

from __future__ import annotations

from kvlint.deploy.carriers import engine_yaml
from kvlint.deploy.carriers import kubernetes
from kvlint.deploy.carriers.base import Carrier

CARRIERS: dict[str, Carrier] = {
    kubernetes.NAME: kubernetes,
    engine_yaml.NAME: engine_yaml,
}
