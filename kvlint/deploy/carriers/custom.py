"""Any other Kubernetes object: every container under it that runs an engine.

Tried after the carriers that know a kind's own fields (KServe, KubeAI, Dynamo, RayService):
the document is searched for pod specs and containers (``kvlint.deploy.search``), so an
operator's custom resource (AIBrix StormService and RayClusterFleet, llm-d DisaggregatedSet,
llmaz Service, Seldon, Argo Rollouts and Workflows, OME runtimes, KAITO templates) is read like
a Deployment. A resource that runs a server kvlint cannot read is a KV905 warning; one that
holds no container is another kind of object (a Service, a ConfigMap) and says nothing.
"""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy import nim
from kvlint.deploy.argv import Token
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.kubernetes import group_env
from kvlint.deploy.carriers.kubernetes import kind_of
from kvlint.deploy.carriers.kubernetes import object_name
from kvlint.deploy.carriers.kubernetes import pod_facts
from kvlint.deploy.detect import image_engine
from kvlint.deploy.groups import lws_gpus
from kvlint.deploy.groups import ray_cluster_gpus
from kvlint.deploy.search import ContainerSite
from kvlint.deploy.search import containers
from kvlint.deploy.search import image_text
from kvlint.deploy.serving import engine_title
from kvlint.deploy.serving import other_image
from kvlint.deploy.serving import unread_resource
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar

NAME = "custom-resource"

_GROUP_WORDS = ("leader", "head", "worker")
# Resources whose operator supplies the engine's image and entrypoint, so a container of theirs
# with flags alone runs that engine (llm-d's ModelService takes them from its BaseConfig).
_ENGINE_OF_KIND = {("llm-d.ai", "ModelService"): "vllm"}
_MODEL_BOOSTER = ("workload.serving.volcano.sh", "ModelBooster")


def matches(root: Node) -> bool:
    return kind_of(root) is not None


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    label = object_name(root)
    read: list[tuple[ContainerSite, Deployment | None, list[InputProblem]]] = []
    for site in containers(root):
        problems: list[InputProblem] = []
        read.append((site, _deployment(site, root, label, problems, ctx), problems))
    # Where a group's leader (or a Ray head) runs the engine, its workers' containers are that
    # one engine's other ranks (or `ray start`): not deployments of their own, nor unread ones.
    led = {
        _unit(site)
        for site, dep, problems in read
        if site.leader
        and (dep is not None or any(p.code == codes.UNRECOGNISED_DOCUMENT for p in problems))
    }
    deployments: list[Deployment] = []
    for site, dep, problems in read:
        if not site.leader and "worker" in site.roles and _unit(site) in led:
            continue
        ctx.problems.extend(problems)
        if dep is not None:
            deployments.append(dep)
    if not deployments:
        reason = unread_resource(root) or _ray_nodes(read)
        if reason is not None:
            message = f"{label}: {reason}, so its settings are not checked"
            ctx.problems.append(
                InputProblem(codes.UNRECOGNISED_DOCUMENT, root.span, message, Severity.WARNING)
            )
    return deployments


def _deployment(
    site: ContainerSite, root: Mapping, label: str, problems: list[InputProblem], ctx: Context
) -> Deployment | None:
    container = site.container
    bare = container.get("command") is None and not container.get("args")
    if site.cluster is not None and bare:
        return None  # a Ray node: KubeRay starts `ray start` in it, the engine runs elsewhere
    if bare and (root.text_of("kind"), (root.text_of("apiVersion") or "").partition("/")[0]) == (
        "MPIJob",
        "kubeflow.org",
    ):
        return None  # an MPI worker: the operator runs sshd in it, the launcher's mpirun the rest
    name = container.text_of("name") or "?"
    where = " ".join(site.roles)
    kind = "initContainer" if site.init else "container"
    facts = pod_facts(site.pod, site.template, root, ctx.devices) if site.pod else None
    api = (root.text_of("apiVersion") or "").partition("/")[0]
    dep = container_deployment(
        container,
        name=f"{label}{' ' + where if where else ''} {kind} {name}",
        carrier=NAME,
        problems=problems,
        pod=facts,
        default_engine=_ENGINE_OF_KIND.get((api, root.text_of("kind") or "")),
        extra_env=group_env(site.group),
    )
    if dep is None:
        return None
    spec = root.mapping("spec")
    if (api, root.text_of("kind")) == ("apps.nvidia.com", "NIMService") and spec is not None:
        nim.multi_node(dep, spec, ENGINES[dep.engine.value])
    elif (api, root.text_of("kind")) == _MODEL_BOOSTER:
        _model_booster_worker(dep, container, root)
    if site.group is not None and (site.leader or "worker" not in site.roles):
        dep.group_gpus = lws_gpus(site.group, problems)
    elif site.cluster is not None and site.leader:
        dep.group_gpus = ray_cluster_gpus(site.cluster, problems)
    return dep


def _model_booster_worker(dep: Deployment, worker: Mapping, root: Mapping) -> None:
    """A kthena ModelBooster worker: its ``config`` is the engine's flags (the controller writes
    ``--key value`` per key, ``--key`` alone for an empty string: ConvertVLLMArgsFromJson), and
    the model is the backend's ``modelURI``, which it downloads and serves from a path."""
    config = worker.mapping("config")
    engine = ENGINES.get(dep.engine.value)
    if config is not None and engine is not None:
        tokens: list[Token] = []
        for key, value in config.items:
            tokens.append(Token("--" + key.text.replace("_", "-"), key))
            if isinstance(value, Scalar) and value.text != "":
                tokens.append(Token(value.text, value))
        engine.apply_args(dep, tokens)
    uri = root.dig("spec", "backend", "modelURI")
    if dep.model is None and isinstance(uri, Scalar) and uri.text:
        dep.model = Sourced(uri.text.removeprefix("hf://"), uri.span, uri.raw)


def _ray_nodes(
    read: list[tuple[ContainerSite, Deployment | None, list[InputProblem]]],
) -> str | None:
    """A Ray cluster whose nodes run an engine's image with no command of their own: the engine
    is started by Ray code (a RayJob's entrypoint, a job submitted later) kvlint does not read."""
    for site, _, _ in read:
        if site.cluster is None:
            continue
        image, _ = image_text(site.container)
        engine = image_engine(image) if image else None
        stack = engine_title(engine) if engine is not None else other_image(image)
        if stack is not None:
            return (
                f"it runs a Ray cluster of {stack} images (`{image}`) whose engine is started by "
                f"Ray code kvlint does not read"
            )
    return None


def _unit(site: ContainerSite) -> tuple[str, ...]:
    """The roles above the group's own words: ``(prefill, leader)`` and ``(prefill, worker)``
    are one unit, ``(decode, worker)`` another."""
    for index, word in enumerate(site.roles):
        if word in _GROUP_WORDS:
            return site.roles[:index]
    return site.roles
