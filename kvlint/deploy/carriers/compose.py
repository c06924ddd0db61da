"""docker-compose services: ``entrypoint`` + ``command`` (string or list), ``environment``, GPUs.

Compose splits a string ``command``/``entrypoint`` like a shell; an ``entrypoint`` replaces the
image's, so only without one does an image whose entrypoint is the server take ``command`` as
the engine's flags.
"""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import MAX_COUNT
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.container import int_sourced
from kvlint.deploy.compose_vars import interpolate
from kvlint.deploy.flags import is_run_time_value
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import InputProblem
from kvlint.finding import Severity
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


def _default_count(token: Token, ctx: Context) -> Sourced[int] | None:
    """A `${GPUS:-2}` count: its default, checked as a written count is."""
    text = token.text.strip()
    if text.isdigit() and int(text) <= MAX_COUNT:
        return Sourced(int(text), token.span, token.raw)
    message = f"`count` must be a GPU count from 0 to {MAX_COUNT:,} or `all`, got `{text[:24]}`"
    ctx.problems.append(InputProblem(codes.INVALID_SETTING, token.span, message, Severity.ERROR))
    return None


def _gpus(service: Mapping, ctx: Context) -> Sourced[int] | None:
    """GPUs reserved under ``deploy.resources.reservations.devices`` (count or device_ids)."""
    devices = service.dig("deploy", "resources", "reservations", "devices")
    if not isinstance(devices, Sequence):
        return None
    for device in devices.items:
        if not isinstance(device, Mapping):
            continue
        count = device.get("count")
        if isinstance(count, Scalar) and count.value is not None:
            # `${GPUS:-all}` is its default; `all` is every GPU of the host (how many, the
            # host says) and a variable with no default is the shell's to fill in.
            token = interpolate(Token(count.text, count))
            text = token.text.strip()
            if text == "all" or is_run_time_value(text):
                return None
            if token.text == count.text:
                return int_sourced(count, ctx.problems, "`count`")
            return _default_count(token, ctx)
        ids = device.get("device_ids")
        if isinstance(ids, Sequence) and ids.items:
            return Sourced(len(ids.items), ids.span, ids.source.text[ids.start : ids.end])
    return None
