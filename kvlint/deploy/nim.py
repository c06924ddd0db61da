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


def apply(dep: Deployment, engine: Engine, env: Mapping[str, Token], model: Sourced[str]) -> None:
    """The model and the ``NIM_*`` settings as ``engine`` spells them, each at its variable."""
    named = env.get("NIM_MODEL_NAME")
    if named is not None and named.text and not named.text.startswith("/"):
        dep.model = Sourced(named.text, named.span, named.raw)
    else:
        dep.model = model
    by_field = {s.field: s.name for s in engine.spec.settings.values() if s.field}
    for var, field in SETTINGS.items():
        token = env.get(var)
        name = by_field.get(field)
        if token is not None and name is not None:
            engine.set(dep, name, token.text, token, spelled=var)
