"""KubeRay ``RayService``: the Serve config (``serveConfigV2``, YAML in a block string).

Two ways settings are written there: Ray Serve LLM's ``llm_configs`` (``engine_kwargs`` are
vLLM's engine arguments, underscore names) and an application's own ``runtime_env.env_vars``
(``MAX_MODEL_LEN``, ``GPU_MEMORY_UTILIZATION``: upper-case vLLM argument names that the app's code
passes on). GPUs come from ``ray_actor_options.num_gpus`` or the worker group's limits.
"""

from __future__ import annotations

from kvlint.deploy.argv import Token
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import gpu_from_resources
from kvlint.deploy.carriers.container import gpu_from_scheduling
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deploy.carriers.kubernetes import kind_of
from kvlint.deploy.carriers.kubernetes import object_name
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence
from kvlint.source.yaml import parse_embedded

NAME = "ray"

# App env var spellings that are not the upper-cased flag (seen in AWS's ai-on-eks blueprints).
_ENV_ALIASES = {"MAX_NUM_SEQ": "max-num-seqs", "MODEL_ID": "model", "MODEL_NAME": "model"}


def matches(root: Node) -> bool:
    found = kind_of(root)
    return found is not None and found[0].startswith("ray.io/") and found[1] == "RayService"


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    label = object_name(root)
    spec = root.mapping("spec")
    serve = _serve_config(spec, ctx) if spec is not None else None
    apps = serve.sequence("applications") if serve is not None else None
    cluster = spec.mapping("rayClusterConfig") if spec is not None else None
    worker_gpus, worker_gpu_type = _worker_gpus(cluster, ctx)
    deployments: list[Deployment] = []
    for app in apps.items if apps is not None else []:
        if not isinstance(app, Mapping):
            continue
        app_name = app.text_of("name") or "?"
        configs = app.dig("args", "llm_configs")
        if isinstance(configs, Sequence):
            for config in configs.items:
                if isinstance(config, Mapping):
                    deployments.append(_llm_config(config, f"{label} app {app_name}", ctx))
        else:
            dep = _env_app(app, f"{label} app {app_name}", ctx)
            if dep is not None:
                deployments.append(dep)
    for dep in deployments:
        dep.gpu_count = dep.gpu_count or worker_gpus
        dep.gpu = dep.gpu or worker_gpu_type
    if not deployments:
        ctx.unrecognised(
            root.span, f"{label}: no vLLM settings found in its Serve config, nothing checked"
        )
    return deployments


def _serve_config(spec: Mapping, ctx: Context) -> Mapping | None:
    node = spec.get("serveConfigV2")
    if isinstance(node, Scalar):
        documents, problems = parse_embedded(node)
        ctx.problems.extend(problems)
        root = documents[0].root if documents else None
        return root if isinstance(root, Mapping) else None
    structured = spec.get("serveConfig")
    return structured if isinstance(structured, Mapping) else None


def _new(node: Mapping, name: str) -> Deployment:
    return Deployment(
        path=node.source.path,
        span=node.span,
        name=name,
        carrier=NAME,
        engine=Sourced("vllm", node.source.span(node.start, key=node.path)),
    )


def _llm_config(config: Mapping, label: str, ctx: Context) -> Deployment:
    """Ray Serve LLM ``LLMConfig``: ``model_loading_config``, ``engine_kwargs``, accelerator."""
    loading = config.mapping("model_loading_config")
    model_id = loading.text_of("model_id") if loading is not None else None
    dep = _new(config, f"{label} model {model_id or '?'}")
    engine = ENGINES["vllm"]
    source = loading.get("model_source") or loading.get("model_id") if loading else None
    model = scalar_sourced(source)
    if model is not None:
        dep.model = model
        dep.settings["model"] = model
    kwargs = config.mapping("engine_kwargs")
    if kwargs is not None:
        engine.apply_mapping(dep, kwargs)
    dep.gpu = scalar_sourced(config.get("accelerator_type"))
    # Each replica is one engine on tensor x pipeline GPUs (one when neither is set).
    tp = dep.tensor_parallel_size.value if dep.tensor_parallel_size else 1
    pp = dep.pipeline_parallel_size.value if dep.pipeline_parallel_size else 1
    where = dep.tensor_parallel_size or dep.pipeline_parallel_size
    span = where.span if where is not None else config.source.span(config.start, key=config.path)
    dep.gpu_count = Sourced(tp * pp, span, where.raw if where is not None else None)
    return dep


def _env_app(app: Mapping, label: str, ctx: Context) -> Deployment | None:
    """An app of its own (``import_path: vllm_serve:deployment``) configured by env vars."""
    env_vars = app.dig("runtime_env", "env_vars")
    if not isinstance(env_vars, Mapping):
        return None
    engine = ENGINES["vllm"]
    found: list[tuple[str, str, Scalar]] = []
    for key, value in env_vars.items:
        if not isinstance(value, Scalar):
            continue
        name = _ENV_ALIASES.get(key.text) or engine.spec.canonical("--" + key.text.lower())
        if name is not None:
            found.append((name, key.text, value))
    if not any(name != "model" for name, _, _ in found):
        return None
    dep = _new(app, label)
    dep.env = {
        k.text: Sourced(v.text, v.span, v.raw) for k, v in env_vars.items if isinstance(v, Scalar)
    }
    for name, spelled, value in found:
        engine.set(dep, name, value.value, Token(value.text, value), spelled=spelled)
    actors = app.sequence("deployments")
    for deployment in actors.items if actors is not None else []:
        gpus = (
            deployment.dig("ray_actor_options", "num_gpus")
            if isinstance(deployment, Mapping)
            else None
        )
        if isinstance(gpus, Scalar) and isinstance(gpus.value, (int, float)) and gpus.value >= 1:
            dep.gpu_count = Sourced(int(gpus.value), gpus.span, gpus.raw)
    return dep


def _worker_gpus(
    cluster: Mapping | None, ctx: Context
) -> tuple[Sourced[int] | None, Sourced[str] | None]:
    groups = cluster.sequence("workerGroupSpecs") if cluster is not None else None
    for group in groups.items if groups is not None else []:
        pod = group.dig("template", "spec") if isinstance(group, Mapping) else None
        if not isinstance(pod, Mapping):
            continue
        containers = pod.sequence("containers")
        for container in containers.items if containers is not None else []:
            if isinstance(container, Mapping):
                count = gpu_from_resources(container.get("resources"), ctx.problems)
                if count is not None:
                    return count, gpu_from_scheduling(pod)
    return None, None
