"""RayLLM model configs: ``engine_config`` (vLLM's ``engine_kwargs``) and ``scaling_config``.

The format of RayLLM (ray-project/ray-llm), still deployed from ConfigMaps that a RayService's
``models`` list names: ``engine_config.model_id`` and ``engine_kwargs`` (vLLM's engine
arguments), ``scaling_config.num_workers`` x ``num_gpus_per_worker`` GPUs, the GPU as a Ray
resource ``accelerator_type_<name>`` (``accelerator_type_a10``, ``accelerator_type_l4``).
"""

from __future__ import annotations

from kvlint.deploy.carriers.base import Context
from kvlint.deploy.carriers.container import scalar_sourced
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import ENGINES
from kvlint.source.nodes import Mapping
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar

NAME = "rayllm"

_ACCELERATOR_PREFIXES = ("accelerator_type_", "accelerator_type:")


def matches(root: Node) -> bool:
    if not isinstance(root, Mapping) or root.get("apiVersion") is not None:
        return False
    engine = root.mapping("engine_config")
    return engine is not None and engine.get("model_id") is not None


def extract(root: Node, ctx: Context) -> list[Deployment]:
    assert isinstance(root, Mapping)
    config = root.mapping("engine_config")
    assert config is not None
    kind = config.text_of("type") or "VLLMEngine"
    model = scalar_sourced(config.get("hf_model_id")) or scalar_sourced(config.get("model_id"))
    label = f"RayLLM model {model.value if model is not None else '?'}"
    if kind != "VLLMEngine":
        return []
    dep = Deployment(
        path=ctx.path,
        span=root.span,
        name=label,
        carrier=NAME,
        engine=Sourced("vllm", config.span),
    )
    if model is not None:
        dep.model = model
        dep.settings["model"] = model
    kwargs = config.mapping("engine_kwargs")
    if kwargs is not None:
        ENGINES["vllm"].apply_mapping(dep, kwargs)
    scaling = root.mapping("scaling_config")
    if scaling is not None:
        dep.gpu_count = _gpus(scaling)
        dep.gpu = _accelerator(scaling.mapping("resources_per_worker"))
    if dep.gpu is None:
        actor = root.dig("deployment_config", "ray_actor_options", "resources")
        dep.gpu = _accelerator(actor if isinstance(actor, Mapping) else None)
    return [dep]


def _gpus(scaling: Mapping) -> Sourced[int] | None:
    """``num_workers`` x ``num_gpus_per_worker``: the GPUs one replica's engine spans."""
    workers = scaling.scalar("num_workers")
    per_worker = scaling.scalar("num_gpus_per_worker")
    count = _number(workers, 1) * _number(per_worker, 1)
    where = per_worker if per_worker is not None else workers
    if where is None or count < 1:
        return None
    return Sourced(int(count), where.span, where.raw)


def _number(node: Scalar | None, default: float) -> float:
    if node is None or isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
        return default
    return float(node.value)


def _accelerator(resources: Mapping | None) -> Sourced[str] | None:
    """The GPU a Ray resource ``accelerator_type_l4`` names, as ``l4``."""
    for key, _ in resources.items if resources is not None else []:
        for prefix in _ACCELERATOR_PREFIXES:
            if key.text.startswith(prefix) and len(key.text) > len(prefix):
                return Sourced(key.text[len(prefix) :], key.span, key.raw)
    return None
