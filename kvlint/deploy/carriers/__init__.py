"""Carriers: where settings live. One module per kind of document, tried in this order."""

from __future__ import annotations

from kvlint.deploy.carriers import compose
from kvlint.deploy.carriers import custom
from kvlint.deploy.carriers import dynamo
from kvlint.deploy.carriers import engine_yaml
from kvlint.deploy.carriers import helm
from kvlint.deploy.carriers import kserve
from kvlint.deploy.carriers import kubeai
from kvlint.deploy.carriers import kubernetes
from kvlint.deploy.carriers import llmaz
from kvlint.deploy.carriers import plan
from kvlint.deploy.carriers import ray
from kvlint.deploy.carriers import rayllm
from kvlint.deploy.carriers.base import Carrier

CARRIERS: dict[str, Carrier] = {
    plan.NAME: plan,
    kubernetes.NAME: kubernetes,
    kserve.NAME: kserve,
    kubeai.NAME: kubeai,
    dynamo.NAME: dynamo,
    ray.NAME: ray,
    llmaz.NAME: llmaz,
    custom.NAME: custom,  # any other Kubernetes object: searched for containers
    compose.NAME: compose,
    helm.NAME: helm,
    rayllm.NAME: rayllm,
    engine_yaml.NAME: engine_yaml,
}
