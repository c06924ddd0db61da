"""NVIDIA Dynamo ``DynamoGraphDeployment``: each worker service's ``extraPodSpec.mainContainer``.

Services with ``componentType: frontend`` (the router) are skipped; GPUs come from the
service's ``resources.limits.gpu``; service-level ``envs`` join the container's ``env``.
"""

from __future__ import annotations

from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import PodFacts
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.container import env_tokens
from kvlint.deploy.carriers.container import gpu_from_resources
from kvlint.deploy.carriers.container import gpu_from_scheduling
from kvlint.deploy.carriers.kubernetes import kind_of
from kvlint.deploy.carriers.kubernetes import object_name
from kvlint.deployment import Deployment
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node

NAME = "dynamo"


def matches(root: Node) -> bool:
    found = kind_of(root)
    return found is not None and found[1] in ("DynamoGraphDeployment", "DynamoComponentDeployment")


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    label = object_name(root)
    services = root.dig("spec", "services")
    deployments: list[Deployment] = []
    for key, service in services.items if isinstance(services, Mapping) else []:
        if not isinstance(service, Mapping) or service.text_of("componentType") == "frontend":
            continue
        pod = service.mapping("extraPodSpec")
        container = pod.mapping("mainContainer") if pod is not None else None
        if container is None:
            continue
        dep = container_deployment(
            container,
            name=f"{label} service {key.text}",
            carrier=NAME,
            problems=ctx.problems,
            pod=PodFacts(
                gpu=gpu_from_scheduling(pod),
                pod_spec=pod,
                config_files=ctx.config_files,  # --extra-engine-args from a ConfigMap
                mounted=ctx.mounted,
            ),
            extra_env=env_tokens(service.get("envs")).items(),
        )
        if dep is None:
            continue
        dep.gpu_count = gpu_from_resources(service.get("resources"), ctx.problems) or dep.gpu_count
        deployments.append(dep)
    if not deployments:
        ctx.unrecognised(root.span, f"{label}: no worker service runs an engine kvlint reads")
    return deployments
