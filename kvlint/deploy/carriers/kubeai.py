"""KubeAI ``Model``: ``url`` (hf://, ollama://), ``engine``, ``args``, ``env``, ``resourceProfile``.

``resourceProfile: nvidia-gpu-l4:8`` is eight L4s.
"""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deploy.argv import from_node
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import env_tokens
from kvlint.deploy.carriers.kubernetes import kind_of
from kvlint.deploy.carriers.kubernetes import object_name
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar

NAME = "kubeai"

# spec.engine -> kvlint engine (kubeai api/k8s/v1/model_types.go: OLlama, VLLM, ...)
_ENGINES = {"vllm": "vllm", "ollama": "ollama"}


def matches(root: Node) -> bool:
    found = kind_of(root)
    return found is not None and found[0].startswith("kubeai.org/") and found[1] == "Model"


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    spec = root.mapping("spec")
    label = object_name(root)
    if spec is None:
        ctx.unrecognised(root.span, f"{label}: no `spec`, nothing to check")
        return []
    engine_node = spec.scalar("engine")
    url = spec.scalar("url")
    engine_name = _ENGINES.get(engine_node.text.lower()) if engine_node is not None else None
    if url is not None and url.text.startswith("ollama://"):
        engine_name = "ollama"
    if engine_name is None:
        place = engine_node.span if engine_node is not None else spec.span
        written = engine_node.text if engine_node is not None else "(none)"
        ctx.unrecognised(place, f"{label}: engine `{written}` is not one kvlint reads")
        return []
    engine = ENGINES[engine_name]
    where = engine_node if engine_node is not None else url
    dep = Deployment(
        path=ctx.path,
        span=root.span,
        name=label,
        carrier=NAME,
        engine=Sourced(
            engine_name, where.span if where else spec.span, where.raw if where else None
        ),
    )
    if url is not None:
        dep.model = _model_from_url(url)
    env = env_tokens(spec.get("env"))
    dep.env = {key: Sourced(t.text, t.span, t.raw) for key, t in env.items()}
    engine.apply_env(dep, env)
    engine.apply_args(dep, from_node(spec.get("args")))
    _resource_profile(spec.scalar("resourceProfile"), dep, ctx)
    return [dep]


def _model_from_url(url: Scalar) -> Sourced[str]:
    """``hf://org/name`` -> ``org/name``; ``ollama://gemma3:27b`` -> ``gemma3:27b``; else as is."""
    text = url.text
    for scheme in ("hf://", "ollama://"):
        if text.startswith(scheme):
            token = Token(text, url).tail(len(scheme))
            return Sourced(token.text, token.span, token.raw)
    return Sourced(text, url.span, url.raw)


def _resource_profile(node: Scalar | None, dep: Deployment, ctx: Context) -> None:
    """``<vendor>-gpu-<model>:<count>``: the GPU as GKE-style ``nvidia-l4``, and the count."""
    if node is None or not node.text:
        return
    profile, _, count = node.text.partition(":")
    whole = Token(node.text, node)
    if profile.startswith("cpu"):
        return
    vendor, sep, model = profile.partition("-gpu-")
    gpu = f"{vendor}-{model}" if sep else profile
    dep.gpu = Sourced(gpu, whole.tail(0).span, node.raw)
    if count:
        token = whole.tail(len(profile) + 1)
        if count.isdigit():
            dep.gpu_count = Sourced(int(count), token.span, count)
        else:
            message = f"`resourceProfile` count must be a whole number, got `{count}`"
            ctx.problems.append(
                InputProblem(codes.INVALID_SETTING, token.span, message, Severity.ERROR)
            )
