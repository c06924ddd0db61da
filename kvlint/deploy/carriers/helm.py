"""Helm values: vLLM production stack, vLLM example chart, llm-d, Ollama, single-engine charts.

Single-engine charts put ``image`` and camelCase settings at the top level.

Chart keys are camelCase spellings of the engine's flags (``maxModelLen`` is
``--max-model-len``); keys a chart does not pass to the engine are not reported.
"""

from __future__ import annotations

from kvlint import codes
from kvlint.deploy.argv import Token
from kvlint.deploy.argv import from_node
from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import PodFacts
from kvlint.deploy.carriers.container import container_deployment
from kvlint.deploy.carriers.container import env_tokens
from kvlint.deploy.carriers.container import gpu_from_resources
from kvlint.deploy.carriers.container import gpu_from_scheduling
from kvlint.deploy.carriers.container import int_sourced
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deploy.detect import image_engine
from kvlint.deploy.detect import nim_llm
from kvlint.deploy.detect import version_from_image
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.finding import InputProblem
from kvlint.finding import Severity
from kvlint.lazy_re import lazy
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar
from kvlint.source.nodes import Sequence

NAME = "helm"

_CAMEL_RE = lazy(r"(?<=[a-z0-9])([A-Z])")


def kebab(key: str) -> str:
    """``maxModelLen`` -> ``max-model-len``; ``max_model_len`` -> ``max-model-len``."""
    return _CAMEL_RE.sub(r"-\1", key).lower().replace("_", "-")


def _image(values: Mapping) -> tuple[str, Scalar | None]:
    image = values.get("image")
    if isinstance(image, Scalar):
        return image.text, image
    if isinstance(image, Mapping):
        repository = image.scalar("repository")
        tag = image.text_of("tag")
        if repository is not None:
            return repository.text + (f":{tag}" if tag else ""), repository
    return "", None


def _chart_kind(root: Node) -> str | None:
    if not isinstance(root, Mapping) or root.get("apiVersion") is not None:
        return None
    if isinstance(root.get("servingEngineSpec"), Mapping):
        return "production-stack"
    if root.get("modelArtifacts") is not None and (root.get("decode") or root.get("prefill")):
        return "llm-d"
    ollama = root.mapping("ollama")
    if ollama is not None and (ollama.get("models") is not None or ollama.get("gpu") is not None):
        return "ollama"
    image, _ = _image(root)
    # A NIM chart's values (nim-llm: model.name, model.ngcAPISecret, ...) are its own keys.
    if image and image_engine(image) is not None and not nim_llm(image):
        return "engine-chart"
    return None


def matches(root: Node) -> bool:
    return _chart_kind(root) is not None


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    kind = _chart_kind(root)
    if kind == "production-stack":
        return _production_stack(root, ctx)
    if kind == "llm-d":
        return _llm_d(root, ctx)
    if kind == "ollama":
        return _ollama(root, ctx)
    return _engine_chart(root, ctx)


def _apply_camel(engine: Engine, dep: Deployment, values: Mapping, skip: frozenset[str]) -> None:
    """Chart keys that are engine flags in camelCase; other chart keys are the chart's own."""
    for key, value in values.items:
        if key.text in skip or not isinstance(value, Scalar) or value.value in (None, ""):
            continue  # an empty value is unset: charts guard each with `{{- if .Values.X }}`
        name = engine.spec.canonical("--" + kebab(key.text))
        if name is None:
            continue
        if value.value is False and engine.spec.arity(name) in ("0", "bool"):
            continue  # the chart leaves the flag out
        engine.set(dep, name, value.value, Token(value.text, value), spelled=key.text)


def _new(engine: str, node: Node, name: str, where: Node | None, raw: str | None) -> Deployment:
    span = where.span if where is not None else node.source.span(node.start, key=node.path)
    return Deployment(
        path=node.source.path,
        span=node.span,
        name=name,
        carrier=NAME,
        engine=Sourced(engine, span, raw),
    )


def _production_stack(root: Mapping, ctx: Context) -> list[Deployment]:
    """``servingEngineSpec.modelSpec[]`` (vllm-project/production-stack helm/values.yaml)."""
    specs = root.dig("servingEngineSpec", "modelSpec")
    deployments: list[Deployment] = []
    engine = ENGINES["vllm"]
    if _false(root.dig("servingEngineSpec", "enableEngine")):
        return []  # the chart renders no engine at all (helm/templates/deployment-vllm-multi)
    for index, spec in enumerate(specs.items if isinstance(specs, Sequence) else []):
        # `enabled: false` is an example the chart does not deploy (its own values.yaml ships
        # one, "not deployed by default"): nothing runs, nothing to check.
        if not isinstance(spec, Mapping) or _false(spec.get("enabled")):
            continue
        label = spec.text_of("name") or f"#{index}"
        repository = spec.scalar("repository")
        dep = _new(
            "vllm",
            spec,
            f"servingEngineSpec.modelSpec {label}",
            repository,
            repository.raw if repository else None,
        )
        image = (repository.text if repository else "") + ":" + (spec.text_of("tag") or "")
        version = version_from_image(image, "vllm")
        tag = spec.scalar("tag")
        if version is not None and tag is not None:
            dep.engine_version = Sourced(version, tag.span, tag.raw)
        model = scalar_sourced(spec.get("modelURL"))
        if model is not None:
            dep.model = model
            dep.settings["model"] = model
        env = env_tokens(spec.get("env"))
        dep.env = {key: Sourced(t.text, t.span, t.raw) for key, t in env.items()}
        engine.apply_env(dep, env)
        config = spec.mapping("vllmConfig")
        if config is not None:
            v0 = config.scalar("v0")
            if v0 is not None and str(v0.value) == "1":
                # The chart then sets VLLM_USE_V1=0: the V0 engine (helm/templates/deployment).
                dep.env["VLLM_USE_V1"] = Sourced("0", v0.span, v0.raw)
            _apply_camel(engine, dep, config, frozenset({"extraArgs", "v0"}))
            engine.apply_args(dep, from_node(config.get("extraArgs")))
        dep.gpu_count = _request_gpu(spec.scalar("requestGPU"), ctx.problems)
        # requestGPUType is a resource name (nvidia.com/mig-...), not a GPU model.
        dep.gpu = gpu_from_scheduling(spec)
        ray = spec.dig("raySpec", "enabled")
        if isinstance(ray, Scalar) and ray.value is True:
            # The chart runs vLLM over a Ray cluster of its own (helm/templates/ray-cluster).
            dep.distributed_executor_backend = Sourced("ray", ray.span, ray.raw)
        deployments.append(dep)
    return deployments


def _false(node: Node | None) -> bool:
    return isinstance(node, Scalar) and node.value is False


def _request_gpu(node: Scalar | None, problems: list[InputProblem]) -> Sourced[int] | None:
    """The GPUs the chart requests: ``int requestGPU`` of them (its chart.resources helper), so
    none below one. ``requestGPU: 0.5`` is how the chart's own tests share a GPU between pods:
    a warning that says what it does, not an error that it is no whole number."""
    if node is not None and isinstance(node.value, float) and 0 < node.value < 1:
        message = (
            f"`requestGPU` {node.text} requests no GPU: the chart renders `int requestGPU` "
            f"of them (0), so the pod is scheduled without one and sees only what the node's "
            f"container runtime exposes"
        )
        problems.append(InputProblem(codes.INVALID_SETTING, node.span, message, Severity.WARNING))
        return None
    return int_sourced(node, problems, "`requestGPU`")


def _engine_chart(root: Mapping, ctx: Context) -> list[Deployment]:
    """A chart for one engine: the vLLM example chart (``image.command``) or top-level settings."""
    image_text, image_node = _image(root)
    engine_name = image_engine(image_text) or "vllm"
    image = root.get("image")
    dep: Deployment | None = None
    if isinstance(image, Mapping) and image.get("command") is not None:
        # vllm examples/online_serving/chart-helm: the container command is `image.command`.
        dep = container_deployment(
            image,
            name="values",
            carrier=NAME,
            problems=ctx.problems,
            command_key="command",
            args_key="args",
        )
    if dep is None:
        dep = _new(engine_name, root, "values", image_node, image_node.raw if image_node else None)
    engine = ENGINES[dep.engine.value]
    if image_node is not None:
        version = version_from_image(image_text, dep.engine.value)
        tag = image.get("tag") if isinstance(image, Mapping) else image_node
        if version is not None and tag is not None:
            dep.engine_version = Sourced(version, tag.span, tag.source.text[tag.start : tag.end])
    model = root.get("model")
    model_node = model.get("id") or model.get("name") if isinstance(model, Mapping) else model
    found = scalar_sourced(model_node) or scalar_sourced(root.get("modelId"))
    if found is not None and dep.model is None:
        dep.model = found
        dep.settings[engine.spec.model_flag] = found
    _apply_camel(engine, dep, root, frozenset({"image", "model", "replicaCount"}))
    for key in ("vllm", "engine", "config", "vllmConfig"):
        nested = root.mapping(key)
        if nested is not None:
            _apply_camel(engine, dep, nested, frozenset())
    env = env_tokens(root.get("env") or root.get("extraEnv"))
    engine.apply_env(dep, env)
    dep.gpu_count = gpu_from_resources(root.get("resources"), ctx.problems) or dep.gpu_count
    dep.gpu = gpu_from_scheduling(root) or _first(root.get("gpuModels")) or dep.gpu
    return [dep]


def _first(node: Node | None) -> Sourced[str] | None:
    if isinstance(node, Sequence) and node.items:
        return scalar_sourced(node.items[0])
    return None


def _llm_d(root: Mapping, ctx: Context) -> list[Deployment]:
    """llm-d-modelservice values: ``decode``/``prefill`` roles, each a pod of vLLM containers."""
    artifacts = root.mapping("modelArtifacts")
    model_node = artifacts.get("name") if artifacts is not None else None
    deployments: list[Deployment] = []
    for role in ("prefill", "decode"):
        section = root.mapping(role)
        if section is None:
            continue
        create = section.scalar("create")
        if create is not None and create.value is False:
            continue
        containers = section.sequence("containers")
        parallelism = section.mapping("parallelism")
        for index, container in enumerate(containers.items if containers is not None else []):
            if not isinstance(container, Mapping):
                continue
            # `modelCommand: vllmServe` makes the chart start `vllm serve <model>`.
            default = "vllm" if container.text_of("modelCommand") else None
            dep = container_deployment(
                container,
                name=f"{role} container {container.text_of('name') or index}",
                carrier=NAME,
                problems=ctx.problems,
                pod=PodFacts(gpu=gpu_from_scheduling(section)),
                default_engine=default,
            )
            if dep is None and default is not None:
                dep = _new("vllm", container, f"{role} container {index}", None, None)
                ENGINES["vllm"].apply_args(dep, from_node(container.get("args")))
            if dep is None:
                continue
            if dep.model is None and model_node is not None:
                dep.model = scalar_sourced(model_node)
            if parallelism is not None:
                tp = int_sourced(parallelism.get("tensor"), ctx.problems, "`parallelism.tensor`")
                dp = int_sourced(parallelism.get("data"), ctx.problems, "`parallelism.data`")
                dep.tensor_parallel_size = dep.tensor_parallel_size or tp
                dep.data_parallel_size = dep.data_parallel_size or dp
                # The chart requests tensor x data-local GPUs per pod when none are listed.
                if dep.gpu_count is None and tp is not None:
                    local = int_sourced(parallelism.get("dataLocal"), ctx.problems, "`dataLocal`")
                    count = tp.value * (local.value if local is not None else 1)
                    dep.gpu_count = Sourced(count, tp.span, tp.raw)
            deployments.append(dep)
    return deployments


def _ollama(root: Mapping, ctx: Context) -> list[Deployment]:
    """The Ollama chart (otwld/ollama-helm): ``ollama.gpu`` and ``ollama.models``, env vars."""
    ollama = root.mapping("ollama")
    assert ollama is not None
    models = ollama.get("models")
    if isinstance(models, Mapping):  # chart >= 1.0: models.pull / models.run
        models = models.get("run") or models.get("pull")
    names = (
        [m for m in models.items if isinstance(m, Scalar)] if isinstance(models, Sequence) else []
    )
    gpu = ollama.mapping("gpu")
    enabled = gpu.scalar("enabled") if gpu is not None else None
    count = None
    if gpu is not None and (enabled is None or enabled.value is not False):
        count = int_sourced(gpu.get("number"), ctx.problems, "`ollama.gpu.number`")
    env = env_tokens(root.get("extraEnv"))
    engine = ENGINES["ollama"]
    deployments: list[Deployment] = []
    choices: list[Scalar | None] = list(names) or [None]
    for model in choices:
        label = f"ollama model {model.text}" if model is not None else "ollama"
        dep = _new("ollama", ollama, label, None, None)
        if model is not None:
            dep.model = Sourced(model.text, model.span, model.raw)
        dep.env = {key: Sourced(t.text, t.span, t.raw) for key, t in env.items()}
        engine.apply_env(dep, env)
        dep.gpu_count = count
        dep.gpu = gpu_from_scheduling(root)
        deployments.append(dep)
    return deployments
