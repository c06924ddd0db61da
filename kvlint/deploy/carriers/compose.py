"""docker-compose services: ``entrypoint`` + ``command`` (string or list), ``environment``, GPUs.

Compose splits a string ``command``/``entrypoint`` like a shell; an ``entrypoint`` replaces the
image's, so only without one does an image whose entrypoint is the server take ``command`` as
the engine's flags.
"""

from __future__ import annotations

from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.container import int_sourced
from kvlint.deploy.compose_vars import interpolate
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

NAME = "compose"


def matches(root: Node) -> bool:
    if not isinstance(root, Mapping) or root.get("apiVersion") is not None:
        return False
    services = root.mapping("services")
    if services is None or not services.items:
        return False
    return all(
        isinstance(service, Mapping)
        and (service.get("image") is not None or service.get("build") is not None)
        for _, service in services.items
    )


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    services = root.mapping("services")
    deployments: list[Deployment] = []
    for key, service in services.items if services is not None else []:
        if not isinstance(service, Mapping):
            continue
        dep = container_deployment(
            service,
            name=f"services.{key.text}",
            carrier=NAME,
            problems=ctx.problems,
            command_key="entrypoint",
            args_key="command",
            env_key="environment",
            interpolate=interpolate,
        )
        if dep is None:
            continue
        dep.gpu_count = _gpus(service, ctx) or dep.gpu_count
        runtime = service.scalar("runtime")
        if dep.gpu is None and runtime is not None and runtime.text == "habana":
            # Intel Gaudi through its container runtime: an accelerator kvlint does not size.
            dep.gpu = Sourced("Intel Gaudi", runtime.span, runtime.raw)
        deployments.append(dep)
    return deployments


def _gpus(service: Mapping, ctx: Context) -> Sourced[int] | None:
    """GPUs reserved under ``deploy.resources.reservations.devices`` (count or device_ids)."""
    devices = service.dig("deploy", "resources", "reservations", "devices")
    if not isinstance(devices, Sequence):
        return None
    for device in devices.items:
        if not isinstance(device, Mapping):
            continue
        count = device.get("count")
        if isinstance(count, Scalar) and count.text != "all":
            return int_sourced(count, ctx.problems, "`count`")
        ids = device.get("device_ids")
        if isinstance(ids, Sequence) and ids.items:
            return Sourced(len(ids.items), ids.span, ids.source.text[ids.start : ids.end])
    return None
