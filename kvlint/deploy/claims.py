"""Models named by a resource beside the container: an llmaz ``OpenModel``, an OME ``BaseModel``.

Some operators split a deployment in two objects: one names the model (and, for llmaz, the GPUs
it needs), the other runs the server and claims the first by name. The container's own argv
then holds a placeholder (``{{ .ModelPath }}``, ``$(MODEL_PATH)``) or nothing. Within one file
the claimed model is read into each deployment of the claiming object: as its model when the
container names none it can be checked with, and always as ``claimed_model``, so a container
that serves another model than its resource claims can be reported (KV503).
"""

from __future__ import annotations

from typing import NamedTuple

from kvlint.deploy.argv import Token
from kvlint.deploy.carriers.container import gpu_from_resources
from kvlint.deploy.carriers.container import gpu_from_scheduling
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

_HUB_SCHEMES = ("hf://", "huggingface://")


class ModelResource(NamedTuple):
    """A resource that names a model: its label, the model, and the GPUs it asks for."""

    label: str  # "OpenModel/qwen2-0--5b"
    model: Sourced[str]
    gpu: Sourced[str] | None = None
    gpu_count: Sourced[int] | None = None


def _group_kind(root: Node) -> tuple[str, str, str] | None:
    """(API group, kind, name) of a Kubernetes object."""
    if not isinstance(root, Mapping):
        return None
    api, kind = root.text_of("apiVersion"), root.text_of("kind")
    metadata = root.mapping("metadata")
    name = metadata.text_of("name") if metadata is not None else None
    if api is None or kind is None or name is None:
        return None
    return api.partition("/")[0], kind, name


def model_resources(roots: list[Node]) -> dict[str, ModelResource]:
    """Every model-naming resource among a file's documents, by ``metadata.name``."""
    found: dict[str, ModelResource] = {}
    for root in roots:
        ident = _group_kind(root)
        if ident is None:
            continue
        group, kind, name = ident
        assert isinstance(root, Mapping)
        resource: ModelResource | None = None
        if group == "llmaz.io" and kind == "OpenModel":
            resource = _open_model(root, f"{kind}/{name}")
        elif group == "ome.io" and kind in ("BaseModel", "ClusterBaseModel"):
            uri = root.dig("spec", "storage", "storageUri")
            model = _hub_id(uri) if isinstance(uri, Scalar) else None
            if model is not None:
                resource = ModelResource(f"{kind}/{name}", model)
        if resource is not None:
            found.setdefault(name, resource)
    return found


def _open_model(root: Mapping, label: str) -> ModelResource | None:
    """llmaz ``OpenModel``: ``spec.source.modelHub.modelID`` (or an ``ollama://`` / ``hf://``
    URI), and its first inference flavor's GPU limits and node selector."""
    source = root.dig("spec", "source")
    if not isinstance(source, Mapping):
        return None
    model = scalar_sourced(source.dig("modelHub", "modelID"))
    uri = source.get("uri")
    if model is None and isinstance(uri, Scalar):
        model = _hub_id(uri) or _ollama(uri)
    if model is None:
        return None
    flavors = root.dig("spec", "inferenceConfig", "flavors")
    flavor = flavors.items[0] if isinstance(flavors, Sequence) and flavors.items else None
    if not isinstance(flavor, Mapping):
        return ModelResource(label, model)
    # A flavor holds `limits` as a container's `resources` does.
    count = gpu_from_resources(flavor, [])
    return ModelResource(label, model, gpu_from_scheduling(flavor), count)


def _hub_id(uri: Scalar) -> Sourced[str] | None:
    for scheme in _HUB_SCHEMES:
        if uri.text.startswith(scheme):
            token = Token(uri.text, uri).tail(len(scheme))
            return Sourced(token.text.rstrip("/"), token.span, token.raw)
    return None


def _ollama(uri: Scalar) -> Sourced[str] | None:
    if uri.text.startswith("ollama://"):
        token = Token(uri.text, uri).tail(len("ollama://"))
        return Sourced(token.text, token.span, token.raw)
    return None


def claim(root: Node, resources: dict[str, ModelResource]) -> ModelResource | None:
    """The model a serving object claims: one it names itself (llm-d ModelService
    ``modelArtifacts.uri``, as ``hf://``), or the
    resource it claims by name (an llmaz Playground's ``modelClaim``, or the main one of its
    ``modelClaims``, an llmaz Service's; an OME InferenceService's ``spec.model.name``)."""
    ident = _group_kind(root)
    if ident is None:
        return None
    group, kind, name = ident
    assert isinstance(root, Mapping)
    spec = root.mapping("spec")
    if spec is None:
        return None
    own = (
        spec.dig("modelArtifacts", "uri") if (group, kind) == ("llm-d.ai", "ModelService") else None
    )
    if isinstance(own, Scalar):
        model = _hub_id(own)
        return ModelResource(f"{kind}/{name}", model) if model is not None else None
    claimed: str | None = None
    if group == "inference.llmaz.io" and kind in ("Playground", "Service"):
        single = spec.dig("modelClaim", "modelName")
        if isinstance(single, Scalar) and single.value is not None:
            claimed = single.text
        models = spec.dig("modelClaims", "models")
        for item in models.items if isinstance(models, Sequence) and claimed is None else []:
            if isinstance(item, Mapping) and item.text_of("role") in (None, "main"):
                claimed = item.text_of("name")
                break
    elif group == "ome.io" and kind == "InferenceService":
        model_ref = spec.mapping("model")
        claimed = model_ref.text_of("name") if model_ref is not None else None
    return resources.get(claimed) if claimed is not None else None


def attach(root: Node, deployments: list[Deployment], resources: dict[str, ModelResource]) -> None:
    """Give each deployment of ``root`` the model its resource claims (and the resource's GPU
    facts where the deployment has none)."""
    resource = claim(root, resources)
    if resource is None:
        return
    for dep in deployments:
        dep.claimed_model = resource.model
        dep.claimed_by = resource.label
        if dep.model is None or "model" in dep.runtime or _is_path(dep.model.value):
            # The container leaves the model to the operator (a placeholder, a mount path):
            # the resource says what it is.
            dep.model = resource.model
            dep.runtime.pop("model", None)
        dep.gpu = dep.gpu or resource.gpu
        dep.gpu_count = dep.gpu_count or resource.gpu_count


def _is_path(model: str) -> bool:
    return model.startswith(("/", "./", "~"))
