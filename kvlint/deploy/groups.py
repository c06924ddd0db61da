"""GPUs one engine reaches across pods: a LeaderWorkerSet group, a kthena role, a Ray cluster.

A multi-node engine (vLLM's pipeline or data parallelism over a LeaderWorkerSet, tensor
parallelism over a Ray cluster) runs on the GPUs of every pod of its group, not only its own
pod's. The GPU count its layout needs is checked against this total.
"""

from __future__ import annotations

from kvlint.deploy.carriers.container import gpu_from_resources
from kvlint.deploy.carriers.container import int_sourced
from kvlint.deployment import Sourced
from kvlint.finding import InputProblem
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Sequence


def pod_gpus(pod_spec: Node | None) -> int:
    """The GPUs a pod spec's containers request, summed (limits first, as the scheduler)."""
    if not isinstance(pod_spec, Mapping):
        return 0
    total = 0
    for key in ("containers", "initContainers"):
        items = pod_spec.sequence(key)
        for item in items.items if items is not None else []:
            if isinstance(item, Mapping):
                found = gpu_from_resources(item.get("resources"), [])
                total += found.value if found is not None else 0
    return total


def lws_gpus(template: Mapping, problems: list[InputProblem]) -> Sourced[int] | None:
    """A LeaderWorkerSet template's GPUs: the leader pod's plus ``size - 1`` worker pods'
    (without a leader template every pod is a worker). None for a group of one pod."""
    if template.get("entryTemplate") is not None:
        return _kthena_role_gpus(template, problems)
    size = int_sourced(template.get("size"), problems, "`size`")
    if size is None or size.value <= 1:
        return None
    worker_spec = template.dig("workerTemplate", "spec") or template.dig("template", "spec")
    worker = pod_gpus(worker_spec)  # a RoleBasedGroup pattern has one `template` for all pods
    leader_spec = template.dig("leaderTemplate", "spec")
    leader = pod_gpus(leader_spec) if isinstance(leader_spec, Mapping) else worker
    return Sourced(leader + (size.value - 1) * worker, size.span, size.raw)


def _kthena_role_gpus(role: Mapping, problems: list[InputProblem]) -> Sourced[int] | None:
    """A Volcano kthena ModelServing role: its entry pod's GPUs plus ``workerReplicas`` worker
    pods' (kthena's multi-node example starts a Ray cluster over them for TP x PP)."""
    workers = int_sourced(role.get("workerReplicas"), problems, "`workerReplicas`")
    if workers is None or workers.value < 1:
        return None
    entry = pod_gpus(role.dig("entryTemplate", "spec"))
    worker = pod_gpus(role.dig("workerTemplate", "spec"))
    return Sourced(entry + workers.value * worker, workers.span, workers.raw)


def ray_cluster_gpus(cluster: Mapping, problems: list[InputProblem]) -> Sourced[int] | None:
    """A Ray cluster's GPUs: the head pod's plus each worker group's replicas x its pod's.
    None when it has no worker group (the head alone is the pod's own count)."""
    head = pod_gpus(cluster.dig("headGroupSpec", "template", "spec"))
    groups = cluster.get("workerGroupSpecs")
    if not isinstance(groups, Sequence) or not groups.items:
        return None
    total = head
    for group in groups.items:
        if not isinstance(group, Mapping):
            continue
        replicas = int_sourced(group.get("replicas"), problems, "`replicas`")
        if replicas is None:
            replicas = int_sourced(group.get("minReplicas"), problems, "`minReplicas`")
        count = replicas.value if replicas is not None else 1
        total += count * pod_gpus(group.dig("template", "spec"))
    return Sourced(total, groups.span, None)
