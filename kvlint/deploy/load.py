"""``load_path``: a file -> every Deployment in it, and every problem found reading it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from kvlint import codes
from kvlint import reading
from kvlint.errors import KvlintError
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence
from kvlint.source.text import SourceText
from kvlint.source.text import decode
from kvlint.source.text import unreadable
from kvlint.source.yaml import Document
from kvlint.source.yaml import Head
from kvlint.source.yaml import parse_documents
from kvlint.source.yaml import parse_embedded

if TYPE_CHECKING:
    from kvlint.deploy.carriers.base import Context
    from kvlint.deployment import Deployment

# Deployment files are kilobytes; a file this large is data, and reading it would only be slow.
MAX_BYTES = reading.DEPLOYMENT.limit


@dataclass
class LoadResult:
    """One file read: its text, the deployments found in it and the problems met."""

    path: str  # the display path
    text: str
    deployments: list[Deployment] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)


def load_path(path: Path, *, display: str | None = None) -> LoadResult:
    """Read one file. Bad content becomes problems; only an I/O failure raises KvlintError."""
    shown = display if display is not None else str(path)
    try:
        data = reading.read_bytes(path, reading.DEPLOYMENT)
    except reading.FileTooLarge as exc:
        return _too_large(shown, exc.size)
    except OSError as exc:
        # A FIFO named `deploy.yaml` would block a pre-commit hook forever and `/dev/zero`
        # would fill memory: kvlint.reading refuses both before reading.
        raise KvlintError(reading.describe(exc), path=shown) from None
    return load_bytes(data, display=shown, json=path.suffix.lower() == ".json")


def _too_large(display: str, size: int) -> LoadResult:
    message = reading.describe(reading.FileTooLarge(size, reading.DEPLOYMENT))
    return LoadResult(display, "", [], [unreadable(Span(display, 1, 1), message)])


def load_text(text: str, *, display: str, json: bool = False) -> LoadResult:
    """``load_path`` for text already in memory (tests, editors, stdin)."""
    return load_bytes(text.encode("utf-8"), display=display, json=json)


def load_bytes(data: bytes, *, display: str, json: bool = False) -> LoadResult:
    if len(data) > MAX_BYTES:
        return _too_large(display, len(data))
    source, problems = decode(display, data)
    if source is None:
        return LoadResult(display, "", [], problems)
    documents, parse_problems = parse_documents(source, json=json, skip=holds_no_workload)
    problems.extend(parse_problems)
    if not documents:  # nothing that could run an engine: the carriers are never imported
        return LoadResult(display, source.text, [], problems)
    return _read_documents(display, source, documents, problems)


# Kubernetes kinds that hold no workload, by API group ("" the core group): no pod template,
# no container, no engine config; read, they are recognised and yield nothing. They are left
# out before kvlint's nodes are built (issue 20: a commit touching only a Service or an RBAC
# file paid for the carriers, every engine's tables and the rules). A Knative or llmaz
# `Service` is another group's, and read.
_NO_WORKLOAD: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "Service",
            "Secret",
            "ServiceAccount",
            "Namespace",
            "PersistentVolumeClaim",
            "PersistentVolume",
            "LimitRange",
            "ResourceQuota",
            "Endpoints",
            "ConfigMap",  # unless it holds YAML files: see holds_no_workload
        }
    ),
    "rbac.authorization.k8s.io": frozenset(
        {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    ),
    "networking.k8s.io": frozenset({"Ingress", "IngressClass", "NetworkPolicy"}),
    "autoscaling": frozenset({"HorizontalPodAutoscaler"}),
    "policy": frozenset({"PodDisruptionBudget"}),
    "apiextensions.k8s.io": frozenset({"CustomResourceDefinition"}),
    "storage.k8s.io": frozenset({"StorageClass"}),
    "scheduling.k8s.io": frozenset({"PriorityClass"}),
    "discovery.k8s.io": frozenset({"EndpointSlice"}),
}


def holds_no_workload(head: Head) -> bool:
    """Whether a document of this kind can hold nothing kvlint reads. A ConfigMap can: the
    YAML files in its ``data`` (an engine config mounted for ``vllm serve --config``)."""
    if head.kind is None or head.api_version is None:
        return False
    group = head.api_version.rpartition("/")[0] if "/" in head.api_version else ""
    if head.kind not in _NO_WORKLOAD.get(group, ()):
        return False
    if head.kind == "ConfigMap":
        return not any(key.endswith((".yaml", ".yml")) for key in head.data_keys)
    return True


def _read_documents(
    display: str, source: SourceText, documents: list[Document], problems: list[InputProblem]
) -> LoadResult:
    from kvlint.deploy.carriers.base import Context
    from kvlint.deploy.claims import attach
    from kvlint.deploy.claims import model_resources
    from kvlint.deploy.gpu_facts import device_requests
    from kvlint.deploy.gpu_facts import read_visible_gpus
    from kvlint.deploy.mounted import config_map_files

    ctx = Context(source, problems)
    deployments: list[Deployment] = []
    # Models named by one document and claimed by another (an llmaz OpenModel, an OME
    # BaseModel): read first, so the claiming document's deployments get them in any order.
    roots = [document.root for document in documents]
    resources = model_resources(roots)
    ctx.devices = device_requests(roots)
    ctx.config_files = config_map_files(roots)
    for document in documents:
        found = _read_document(document, ctx)
        if found:
            ctx.problems.extend(document.object_tags)
        attach(document.root, found, resources)
        deployments.extend(found)
    if ctx.mounted:
        # A ConfigMap's engine config that a container of the file reads through its flags
        # was read into that container's deployment: not a deployment of its own as well.
        read = ctx.mounted
        deployments = [
            dep
            for dep in deployments
            if not (dep.carrier == "engine_yaml" and (dep.span.line, dep.span.column) in read)
        ]
    for dep in deployments:
        read_visible_gpus(dep)
        ctx.problems.extend(dep.problems)
    return LoadResult(display, source.text, deployments, ctx.problems)


def _read_document(document: Document, ctx: Context) -> list[Deployment]:
    inner = _wrapped(document.root)
    if inner is not None:
        found: list[Deployment] = []
        for node in inner:
            found.extend(_read_node(node, ctx, report=False))
        return found
    return _read_node(document.root, ctx, report=True)


def _wrapped(root: Node) -> list[Node] | None:
    """Documents that hold others: ``kind: List`` (kubectl output), Flux ``HelmRelease`` values,
    Argo CD ``Application`` inline Helm values."""
    if not isinstance(root, Mapping):
        return None
    kind = root.text_of("kind")
    if kind == "List" and isinstance(root.get("items"), Sequence):
        items = root.get("items")
        assert isinstance(items, Sequence)
        return list(items.items)
    if kind == "HelmRelease":
        values = root.dig("spec", "values")
        return [values] if isinstance(values, Mapping) else []
    if kind == "Application" and (root.text_of("apiVersion") or "").startswith("argoproj.io/"):
        return _argo_values(root)
    if kind == "ConfigMap" and root.text_of("apiVersion") == "v1":
        return _config_files(root)
    return None


def _config_files(root: Mapping) -> list[Node]:
    """The YAML files a ConfigMap holds (``data: {config.yaml: |...}``): an engine config
    mounted for ``vllm serve --config``, a RayLLM model config."""
    data = root.mapping("data")
    found: list[Node] = []
    for key, value in data.items if data is not None else []:
        if isinstance(value, Scalar) and key.text.endswith((".yaml", ".yml")):
            documents, _ = parse_embedded(value)  # a broken file: whatever mounts it reports it
            found.extend(d.root for d in documents if isinstance(d.root, Mapping))
    return found


def _argo_values(root: Mapping) -> list[Node]:
    """An Argo CD Application's inline Helm values: ``valuesObject``, or ``values`` as a YAML
    string (a literal block), for its one ``source`` or each of its ``sources``."""
    sources = root.dig("spec", "sources")
    found: list[Node] = []
    items = list(sources.items) if isinstance(sources, Sequence) else [root.dig("spec", "source")]
    for source in items:
        helm = source.mapping("helm") if isinstance(source, Mapping) else None
        if helm is None:
            continue
        values = helm.get("valuesObject")
        if isinstance(values, Mapping):
            found.append(values)
            continue
        text = helm.get("values")
        if isinstance(text, Scalar):
            documents, _ = parse_embedded(text)  # a broken string: Helm itself reports it
            found.extend(d.root for d in documents if isinstance(d.root, Mapping))
    return found


def _read_node(root: Node, ctx: Context, *, report: bool) -> list[Deployment]:
    from kvlint.deploy.carriers import carrier_for
    from kvlint.deploy.serving import values_image

    carrier = carrier_for(root)
    if carrier is not None:
        return carrier.extract(root, ctx)
    if _is_recognised(root) or not report:
        return []
    serving = values_image(root)
    if serving is not None:
        where, what = serving
        message = (
            f"`{where.path.removeprefix('$.')}` runs {what} (`{where.text}`), but kvlint does not "
            f"read this document's keys, so its settings are not checked"
        )
        ctx.problems.append(
            InputProblem(codes.UNRECOGNISED_DOCUMENT, where.span, message, Severity.WARNING)
        )
        return []
    ctx.unrecognised(
        root.source.span(root.start, key=root.path),
        "document not recognised as a deployment (a Kubernetes manifest, compose file, "
        "Helm values, engine config or kvlint plan): nothing checked in it",
    )
    return []


def _is_recognised(root: object) -> bool:
    """Documents that are known and hold no deployment: other Kubernetes objects, empty ones."""
    if not isinstance(root, Mapping):
        return root is None or getattr(root, "value", "") in (None, "")
    if not root.items:
        return True
    keys = set(root.keys())
    if "apiVersion" in keys and "kind" in keys:
        return True  # a Kubernetes object of another kind (Service, ConfigMap, ...)
    # Files every infra repository also holds, which are never deployments: a Helm
    # Chart.yaml, a GitHub Actions workflow, a pre-commit config, a kustomization.
    return (
        {"apiVersion", "name", "version"} <= keys
        or {"on", "jobs"} <= keys
        or ("repos" in keys and isinstance(root.get("repos"), Sequence))
        or ("resources" in keys and keys <= _KUSTOMIZE_KEYS)
    )


_KUSTOMIZE_KEYS = frozenset(
    {
        "resources",
        "namespace",
        "namePrefix",
        "nameSuffix",
        "commonLabels",
        "labels",
        "images",
        "patches",
        "patchesStrategicMerge",
        "configMapGenerator",
        "secretGenerator",
        "components",
        "commonAnnotations",
        "replicas",
        "helmCharts",
        "generators",
        "transformers",
    }
)
