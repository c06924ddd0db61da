"""Kubernetes workloads: Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod, LeaderWorkerSet."""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.base import kind_of as kind_of  # where the others import it
from kvlint.deploy.carriers.container import PodFacts
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deploy.gpu_facts import DeviceRequest
from kvlint.deploy.gpu_facts import choose
from kvlint.deploy.gpu_facts import scheduling_facts
from kvlint.deploy.groups import lws_gpus
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar

NAME = "kubernetes"

# kind -> path from the document root to the pod template's spec
_POD_SPECS: dict[str, tuple[tuple[str, ...], ...]] = {
    "Deployment": (("spec", "template", "spec"),),
    "StatefulSet": (("spec", "template", "spec"),),
    "DaemonSet": (("spec", "template", "spec"),),
    "ReplicaSet": (("spec", "template", "spec"),),
    "Job": (("spec", "template", "spec"),),
    "CronJob": (("spec", "jobTemplate", "spec", "template", "spec"),),
    "Pod": (("spec",),),
    # The leader runs the server; without a leaderTemplate the worker template is every pod.
    "LeaderWorkerSet": (
        ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"),
    ),
}


def matches(root: Node) -> bool:
    found = kind_of(root)
    return found is not None and found[1] in _POD_SPECS


def object_name(root: Mapping) -> str:
    metadata = root.mapping("metadata")
    name = metadata.text_of("name") if metadata is not None else None
    return f"{root.text_of('kind')}/{name or '?'}"


def pod_facts(
    pod_spec: Mapping,
    template: Node | None,
    workload: Node | None = None,
    devices: dict[str, DeviceRequest] | None = None,
    ctx: Context | None = None,
) -> PodFacts:
    """The pod's GPU and annotations: the workload object's (``kubectl annotate deployment``),
    then the pod template's on top of them; its GPU facts and the file's DRA claims."""
    found = scheduling_facts(pod_spec)
    facts = PodFacts(gpu=choose(found), gpu_facts=found, pod_spec=pod_spec, devices=devices or {})
    if ctx is not None:  # the file's ConfigMaps: config files the containers mount
        facts.config_files, facts.mounted = ctx.config_files, ctx.mounted
    if workload is not None and workload is not template:
        _annotations(workload, facts)
    if template is not None:
        _annotations(template, facts)
    return facts


def _annotations(holder: Node, facts: PodFacts) -> None:
    metadata = holder.mapping("metadata") if isinstance(holder, Mapping) else None
    annotations = metadata.mapping("annotations") if metadata is not None else None
    if annotations is None:
        return
    for key, value in annotations.items:
        sourced = scalar_sourced(value)
        if sourced is not None:
            facts.annotations[key.text] = Sourced(sourced.value, sourced.span, sourced.raw)


def pod_deployments(
    pod_spec: Mapping,
    *,
    label: str,
    carrier: str,
    ctx: Context,
    template: Node | None = None,
    workload: Node | None = None,
    default_engine: str | None = None,
    extra_env: list[tuple[str, Token]] | None = None,
) -> list[Deployment]:
    """One Deployment per container of a pod spec that runs an engine."""
    facts = pod_facts(pod_spec, template, workload, ctx.devices, ctx)
    deployments: list[Deployment] = []
    containers = pod_spec.sequence("containers")
    for index, container in enumerate(containers.items if containers is not None else []):
        if not isinstance(container, Mapping):
            continue
        name = container.text_of("name") or f"#{index}"
        dep = container_deployment(
            container,
            name=f"{label} container {name}",
            carrier=carrier,
            problems=ctx.problems,
            pod=facts,
            default_engine=default_engine,
            extra_env=extra_env or (),
        )
        if dep is not None:
            deployments.append(dep)
    return deployments


def group_env(template: Node | None) -> list[tuple[str, Token]]:
    """The variables LeaderWorkerSet (and RoleBasedGroup's leader-worker pattern) set in every
    pod of a group: the group's ``size`` (``--nnodes=$(LWS_GROUP_SIZE)`` reads it)."""
    size = template.get("size") if isinstance(template, Mapping) else None
    if isinstance(size, Scalar) and size.value is not None:
        token = Token(size.text, size)
        return [("LWS_GROUP_SIZE", token), ("RBG_LWP_GROUP_SIZE", token)]
    return []


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    kind = root.text_of("kind") or ""
    label = object_name(root)
    for path in _POD_SPECS[kind]:
        pod_spec = root.dig(*path)
        if not isinstance(pod_spec, Mapping):
            continue
        template = root.dig(*path[:-1]) if len(path) > 1 else root
        role = ""
        if kind == "LeaderWorkerSet":
            role = " leader" if "leaderTemplate" in path else " worker"
        before = len(ctx.problems)
        found = pod_deployments(
            pod_spec,
            label=label + role,
            carrier=NAME,
            ctx=ctx,
            template=template,
            workload=root,
            extra_env=group_env(root.dig("spec", "leaderWorkerTemplate")),
        )
        if found or any(p.code == codes.UNRECOGNISED_DOCUMENT for p in ctx.problems[before:]):
            group = root.dig("spec", "leaderWorkerTemplate")
            if kind == "LeaderWorkerSet" and isinstance(group, Mapping) and found:
                total = lws_gpus(group, ctx.problems)
                for dep in found:
                    dep.group_gpus = total
            return found  # a leader that runs a server kvlint cannot read: said once, for it
    return []
