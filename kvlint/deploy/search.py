"""Where containers are in any document: pod specs and container specs under any custom resource.

Operators wrap the pod spec in shapes of their own: AIBrix ``StormService`` roles and
``RayClusterFleet`` head and worker groups, llm-d ``DisaggregatedSet`` roles of LeaderWorkerSet
templates, llmaz ``Service`` workload templates, Volcano kthena ``ModelServing`` roles (an entry
pod and its workers), Seldon predictors, Argo Rollouts and Workflows,
OME runtimes' ``runner`` containers. Rather than one reader per kind, the document is searched:
a mapping with a ``containers`` list is a pod spec; a mapping with an ``image`` and a command,
arguments, environment or resources is a container. What surrounds them (the role's name, the
LeaderWorkerSet group's size, the pod template's metadata) is kept for the deployment's label and
its GPU facts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

# Keys whose subtree never holds a pod spec (and may be large: a CRD's status, a schema).
_SKIP = frozenset({"status", "metadata", "openAPIV3Schema", "schema", "data", "binaryData"})
# Keys a container has besides its image; one of them must be there too, so that a mapping with
# only an `image` (a Helm chart's `image: {repository, tag}`) is not taken for a container.
# (`draResources`: a NIMService's GPUs as DRA claims, in place of `resources`.)
_CONTAINER_KEYS = frozenset(
    {"command", "args", "env", "envFrom", "resources", "ports", "draResources"}
)
# Keys that name a role on their own (the word the label uses).
_ROLE_KEYS = {
    "leaderTemplate": "leader",
    "entryTemplate": "leader",  # Volcano kthena ModelServing roles
    "workerTemplate": "worker",
    "headGroupSpec": "head",
    "workerGroupSpecs": "worker",
    "prefill": "prefill",
    "decode": "decode",
    "prefillConfig": "prefill",
    "decoderConfig": "decode",
    "engineConfig": "engine",
    "engine": "engine",  # OME InferenceService components
    "decoder": "decode",
    "router": "router",
    "routerConfig": "router",
    "leader": "leader",
    "worker": "worker",
}
# Nesting deeper than this is no deployment (and keeps a hostile document cheap).
_MAX_DEPTH = 64


class ContainerSite(NamedTuple):
    """One container found in a document, with what surrounds it."""

    container: Mapping
    pod: Mapping | None  # the pod spec it is in (nodeSelector, affinity, resourceClaims)
    template: Mapping | None  # the pod template (its metadata: labels, annotations)
    roles: tuple[str, ...]  # words naming where it is: ("prefill", "leader")
    group: Mapping | None  # the LeaderWorkerSet template it is in, if any (`size`)
    cluster: Mapping | None  # the Ray cluster spec it is in, if any (head and worker groups)
    init: bool  # an init (or native sidecar) container

    @property
    def leader(self) -> bool:
        # The innermost of these words decides: a worker template in a role its operator
        # named `leader` (kthena's generated test data) is a worker.
        for word in reversed(self.roles):
            if word in ("leader", "head", "worker"):
                return word != "worker"
        return False


def containers(root: Node) -> list[ContainerSite]:
    """Every container under ``root``, in file order."""
    return list(_walk(root, _Around((), None, None, None, None), 0))


class _Around(NamedTuple):
    roles: tuple[str, ...]
    template: Mapping | None
    group: Mapping | None
    cluster: Mapping | None
    parent: Mapping | None


def _walk(node: Node, around: _Around, depth: int) -> Iterator[ContainerSite]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, Sequence):
        for item in node.items:
            yield from _walk(item, around._replace(roles=_named(item, around.roles)), depth + 1)
        return
    if not isinstance(node, Mapping):
        return
    if node.sequence("containers") is not None:
        template = around.template if around.template is not None else around.parent
        yield from _pod(node, around._replace(template=template))
        return
    if is_container(node):
        # A container outside a pod spec (an OME `runner`, an Argo Workflow step): the mapping
        # around it holds its scheduling (nodeSelector, affinity).
        a = around
        yield ContainerSite(node, a.parent, a.template, a.roles, a.group, a.cluster, init=False)
        return
    if node.get("headGroupSpec") is not None:
        around = around._replace(cluster=node)
    if node.get("entryTemplate") is not None and node.get("workerTemplate") is not None:
        around = around._replace(group=node)  # a kthena role: one entry pod and its workers
    for key, child in node.items:
        name = key.text
        if name in _SKIP:
            continue
        inner = around._replace(parent=node)
        word = _ROLE_KEYS.get(name)
        if word is not None and word not in around.roles:
            inner = inner._replace(roles=(*around.roles, word))
        if name in ("leaderWorkerTemplate", "leaderWorkerPattern") and isinstance(child, Mapping):
            inner = inner._replace(group=child)
        if name == "spec" and node.get("metadata") is not None:
            # The mapping that holds a pod spec's `spec` (and its `metadata`) is its template.
            inner = inner._replace(template=node)
        yield from _walk(child, inner, depth + 1)


def _pod(pod: Mapping, a: _Around) -> Iterator[ContainerSite]:
    for key, init in (("initContainers", True), ("containers", False)):
        items = pod.sequence(key)
        for item in items.items if items is not None else []:
            if isinstance(item, Mapping):
                yield ContainerSite(item, pod, a.template, a.roles, a.group, a.cluster, init)


def _named(item: Node, roles: tuple[str, ...]) -> tuple[str, ...]:
    """A list item with a name of its own (a role, a worker group, a predictor) adds it."""
    if not isinstance(item, Mapping) or item.sequence("containers") is not None:
        return roles
    if is_container(item):
        return roles
    for key in ("name", "groupName", "role"):
        text = item.text_of(key)
        if text and text not in roles:
            return (*roles, text)
    return roles


def image_text(container: Mapping) -> tuple[str, Scalar | None]:
    """The image a container runs, as text: a string, or ``{repository, tag}`` (NIMService,
    chart values) joined as ``repository:tag``. The scalar is where the image is written."""
    image = container.get("image")
    if isinstance(image, Scalar):
        return (image.text if image.value is not None else ""), image
    if isinstance(image, Mapping):
        repository = image.scalar("repository") or image.scalar("name")
        if repository is not None and repository.value is not None:
            tag = image.text_of("tag")
            return repository.text + (f":{tag}" if tag else ""), repository
    return "", None


def is_container(node: Mapping) -> bool:
    """An ``image`` with a command, arguments, environment, ports or resources beside it."""
    if node.get("image") is None or not image_text(node)[0]:
        return False
    return any(key.text in _CONTAINER_KEYS for key, _ in node.items)
