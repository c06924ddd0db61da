"""NVIDIA NIM for LLMs: the model its image names, the engine its profile runs, and the
``NIM_*`` environment variables as that engine's settings.

A NIM image (``nvcr.io/nim/<org>/<model>:<tag>``) starts a launcher that picks an engine profile
(TensorRT-LLM, vLLM or SGLang) for the GPU, or the one ``NIM_MODEL_PROFILE`` names
(``tensorrt_llm-h100-fp8-tp2-pp1-throughput``, ``vllm-bf16-tp1-pp1``, ``sglang-...``), and hands
it the ``NIM_*`` settings (NVIDIA's NIM for LLMs configuration reference: NIM_MAX_MODEL_LEN,
NIM_KVCACHE_PERCENT, NIM_TENSOR_PARALLEL_SIZE, NIM_PIPELINE_PARALLEL_SIZE, NIM_MAX_BATCH_SIZE,
NIM_MODEL_NAME). Without a profile the launcher prefers an optimized TensorRT-LLM profile, so
kvlint sizes the TensorRT-LLM engine.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvlint.deploy.argv import Token
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.source.nodes import Mapping as MappingNode
from kvlint.source.nodes import Scalar

PROFILE = "NIM_MODEL_PROFILE"
# NIM variable -> the Deployment field it sets, whichever engine the profile runs.
SETTINGS = {
    "NIM_MAX_MODEL_LEN": "max_model_len",
    # "the percentage of free GPU memory for the KV cache", written as a fraction (0.9).
    "NIM_KVCACHE_PERCENT": "memory_fraction",
    "NIM_TENSOR_PARALLEL_SIZE": "tensor_parallel_size",
    "NIM_PIPELINE_PARALLEL_SIZE": "pipeline_parallel_size",
    "NIM_MAX_BATCH_SIZE": "max_num_seqs",
}
_ENGINES = (
    ("tensorrt_llm", "trtllm"),
    ("trtllm", "trtllm"),
    ("vllm", "vllm"),
    ("sglang", "sglang"),
)


def profile_engine(image: str, env: Mapping[str, Token]) -> str:
    """The engine the NIM runs: the one ``NIM_MODEL_PROFILE`` or the image tag names, else
    TensorRT-LLM."""
    profile = env.get(PROFILE)
    tag = image.rsplit("/", 1)[-1].partition(":")[2]
    for text in (profile.text if profile is not None else "", tag):
        lowered = text.lower()
        for word, engine in _ENGINES:
            if word in lowered:
                return engine
    return "trtllm"


# NIM names that are not the checkpoint's Hugging Face id (NVIDIA's NIM catalog names).
HUB_IDS = {
    "meta/llama3-8b-instruct": "meta-llama/Meta-Llama-3-8B-Instruct",
    "meta/llama3-70b-instruct": "meta-llama/Meta-Llama-3-70B-Instruct",
    "mistralai/mistral-7b-instruct-v0.3": "mistralai/Mistral-7B-Instruct-v0.3",
    "mistralai/mixtral-8x7b-instruct-v01": "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "mistralai/mixtral-8x22b-instruct-v01": "mistralai/Mixtral-8x22B-Instruct-v0.1",
    "qwen/qwen2.5-7b-instruct": "Qwen/Qwen2.5-7B-Instruct",
    "deepseek-ai/deepseek-r1-distill-llama-8b": "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
    "google/gemma-2-9b-it": "google/gemma-2-9b-it",
    "nvidia/llama-3.1-nemotron-nano-8b-v1": "nvidia/Llama-3.1-Nemotron-Nano-8B-v1",
}


def apply(
    dep: Deployment, engine: Engine, env: Mapping[str, Token], model: Sourced[str] | None
) -> None:
    """The model and the ``NIM_*`` settings as ``engine`` spells them, each at its variable.
    ``NIM_MODEL_NAME`` (a Hub id, ``hf://<id>``, or a path in the container) names the model of
    the multi-LLM NIM and overrides the image's."""
    named = env.get("NIM_MODEL_NAME")
    text = named.text.removeprefix("hf://") if named is not None else ""
    if named is not None and text and "://" not in text and not text.startswith("/"):
        dep.model = Sourced(text, named.span, named.raw)
    elif model is not None:
        hub = HUB_IDS.get(str(model.value).lower())
        dep.model = Sourced(hub, model.span, model.raw) if hub else model
    by_field = {s.field: s.name for s in engine.spec.settings.values() if s.field}
    for var, field in SETTINGS.items():
        token = env.get(var)
        name = by_field.get(field)
        if token is not None and name is not None:
            engine.set(dep, name, token.text, token, spelled=var)
    if "NIM_TENSOR_PARALLEL_SIZE" not in env and PROFILE not in env:
        dep.layout_picked_by = "the NIM launcher, which picks a profile for the GPUs it finds"


def multi_node(dep: Deployment, spec: MappingNode, engine: Engine) -> None:
    """A ``NIMService``'s ``multiNode.parallelism``: the operator runs a LeaderWorkerSet of
    ``pipeline`` pods and sets NIM_TENSOR_PARALLEL_SIZE / NIM_PIPELINE_PARALLEL_SIZE from it
    (k8s-nim-operator ``getLWSCommonEnv``; the service's own ``env`` wins). Its GPUs are the
    pods' GPUs together."""
    parallelism = spec.dig("multiNode", "parallelism")
    if not isinstance(parallelism, MappingNode):
        return
    by_field = {s.field: s.name for s in engine.spec.settings.values() if s.field}
    sizes = {"tensor": "tensor_parallel_size", "pipeline": "pipeline_parallel_size"}
    for key, field in sizes.items():
        node = parallelism.get(key)
        name = by_field.get(field)
        if not isinstance(node, Scalar) or node.value is None or name is None:
            continue
        if getattr(dep, field) is None:  # the service's env set it: that wins
            engine.set(dep, name, node.text, Token(node.text, node), spelled=f"parallelism.{key}")
    dep.layout_picked_by = None
    pipeline = dep.pipeline_parallel_size
    if dep.gpu_count is not None and pipeline is not None and pipeline.value > 1:
        total = dep.gpu_count.value * pipeline.value
        dep.group_gpus = Sourced(total, dep.gpu_count.span, dep.gpu_count.raw)
