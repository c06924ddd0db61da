"""llmaz ``Playground``: the engine (``backendName``), its extra ``args``, ``envs`` and resources.

The model comes from the ``OpenModel`` the Playground claims (``kvlint.deploy.claims``), with
its flavor's GPUs; the engine's base command and the model path come from llmaz's
``BackendRuntime``, which is the operator's and holds nothing to check here.
(llmaz api/inference/v1alpha1 playground_types.go, backendruntime_types.go.)
"""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy.argv import from_node
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import env_tokens
from kvlint.deploy.carriers.container import gpu_from_resources
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deploy.carriers.kubernetes import kind_of
from kvlint.deploy.carriers.kubernetes import object_name
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node

NAME = "llmaz"

_KINDS = ("Playground",)

# backendName -> kvlint engine (llmaz chart's BackendRuntimes: vllm, sglang, llamacpp, tgi,
# ollama; tensorrt-llm is one kvlint does not read). vLLM is the default backend.
_ENGINES = {
    "vllm": "vllm",
    "sglang": "sglang",
    "llamacpp": "llamacpp",
    "tgi": "tgi",
    "ollama": "ollama",
}
# The BackendRuntime's `version` is the engine image's tag for these.
_VERSIONED = frozenset({"vllm", "sglang", "tgi"})


def matches(root: Node) -> bool:
    found = kind_of(root)
    return found is not None and found[0].startswith("inference.llmaz.io/") and found[1] in _KINDS


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    label = object_name(root)
    spec = root.mapping("spec")
    config = spec.mapping("backendRuntimeConfig") if spec is not None else None
    backend = config.scalar("backendName") if config is not None else None
    written = backend.text if backend is not None and backend.value is not None else "vllm"
    engine_name = _ENGINES.get(written.lower())
    if engine_name is None:
        where = backend.span if backend is not None else root.span
        message = (
            f"{label}: it runs the `{written}` backend, a server kvlint does not read, "
            f"so its settings are not checked"
        )
        ctx.problems.append(
            InputProblem(codes.UNRECOGNISED_DOCUMENT, where, message, Severity.WARNING)
        )
        return []
    engine = ENGINES[engine_name]
    place = backend if backend is not None else (config or spec or root)
    dep = Deployment(
        path=ctx.path,
        span=root.span,
        name=label,
        carrier=NAME,
        engine=Sourced(engine_name, place.span, backend.raw if backend is not None else None),
    )
    if config is None:
        return [dep]
    version = scalar_sourced(config.get("version"))
    if version is not None and engine_name in _VERSIONED:
        dep.engine_version = Sourced(version.value.lstrip("v"), version.span, version.raw)
    env = env_tokens(config.get("envs"))
    dep.env = {key: Sourced(t.text, t.span, t.raw) for key, t in env.items()}
    engine.apply_env(dep, env)
    engine.apply_args(dep, from_node(config.get("args")))
    dep.gpu_count = gpu_from_resources(config.get("resources"), ctx.problems)
    return [dep]
