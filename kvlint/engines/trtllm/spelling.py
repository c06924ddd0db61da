"""TensorRT-LLM: ``trtllm-serve``, ``trtllm-build``, ``python -m dynamo.trtllm`` and the LLM API
keys of an ``--extra_llm_api_options`` YAML, as data."""

from __future__ import annotations

from kvlint.deploy.argv import Token
from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.trtllm import flags as trtllm_flags
from kvlint.engines.trtllm.facts import KV_CACHE_DTYPES
from kvlint.source.nodes import Mapping as MappingNode
from kvlint.source.nodes import Node
from kvlint.source.nodes import Scalar

SETTINGS = {
    s.name: s
    for s in (
        Setting("model", "str", "model"),
        Setting("served-model-name", "str", "served_model_name"),
        Setting("tokenizer", "str"),
        Setting("backend", "str", None, ("pytorch", "tensorrt", "trt", "_autodeploy")),
        Setting("dtype", "str", "dtype"),
        Setting("max-batch-size", "int", "max_num_seqs", minimum=1),
        Setting("max-num-tokens", "int", "max_num_batched_tokens", minimum=1),
        Setting("max-seq-len", "int", "max_model_len", minimum=1),
        Setting("max-input-len", "int", minimum=1),
        Setting("max-beam-width", "int", minimum=1),
        Setting("tensor-parallel-size", "int", "tensor_parallel_size", minimum=1),
        Setting("pipeline-parallel-size", "int", "pipeline_parallel_size", minimum=1),
        Setting("moe-expert-parallel-size", "int", minimum=1),
        Setting("enable-attention-dp", "bool", "enable_dp_attention"),
        Setting("free-gpu-memory-fraction", "fraction", "memory_fraction"),
        Setting("tokens-per-block", "int", "block_size", minimum=1),
        Setting("kv-cache-type", "str", None, ("paged", "continuous", "disabled")),
        Setting("fail-fast-on-attention-window-too-large", "bool"),
        # kv_cache_config: {...} of the LLM API YAML, read key by key.
        Setting("kv-cache-config.free-gpu-memory-fraction", "fraction", "memory_fraction"),
        Setting("kv-cache-config.dtype", "str", "kv_cache_dtype", KV_CACHE_DTYPES),
        Setting("kv-cache-config.max-tokens", "int", minimum=1),
        Setting("kv-cache-config.max-gpu-total-bytes", "size", "kv_cache_memory_bytes"),
        Setting("kv-cache-config.tokens-per-block", "int", "block_size", minimum=1),
        Setting("kv-cache-config.enable-block-reuse", "bool"),
        Setting("build-config.max-batch-size", "int", "max_num_seqs", minimum=1),
        Setting("build-config.max-num-tokens", "int", "max_num_batched_tokens", minimum=1),
        Setting("build-config.max-seq-len", "int", "max_model_len", minimum=1),
    )
}
# LLM API sections whose keys are settings of their own (``kv_cache_config.dtype``); the others
# (cuda_graph_config, moe_config, speculative_config, ...) are kept as written.
NESTED = frozenset({"kv-cache-config", "build-config"})

# What Dynamo's worker also reads from the environment (backend_args.py: env_var=...).
ENV = {
    "DYN_TRTLLM_MODEL": "model",
    "DYN_TRTLLM_TENSOR_PARALLEL_SIZE": "tensor-parallel-size",
    "DYN_TRTLLM_PIPELINE_PARALLEL_SIZE": "pipeline-parallel-size",
    "DYN_TRTLLM_MAX_BATCH_SIZE": "max-batch-size",
    "DYN_TRTLLM_MAX_NUM_TOKENS": "max-num-tokens",
    "DYN_TRTLLM_MAX_SEQ_LEN": "max-seq-len",
    "DYN_TRTLLM_FREE_GPU_MEMORY_FRACTION": "free-gpu-memory-fraction",
    "DYN_TRTLLM_KV_BLOCK_SIZE": "tokens-per-block",
}

SPEC = EngineSpec(
    name="trtllm",
    settings=SETTINGS,
    known=trtllm_flags.KNOWN,
    aliases=trtllm_flags.ALIASES,
    env=ENV,
    underscores=True,  # trtllm-serve writes --max_batch_size, Dynamo --max-batch-size
    negatable=True,  # Dynamo's add_negatable_bool_argument: --no-enable-attention-dp
    model_flag="model",
    # serve.py: the --extra_llm_api_options YAML updates the LLM arguments the flags built;
    # Dynamo's worker reads --extra-engine-args the same way.
    config_files=("extra-llm-api-options", "extra-engine-args"),
    config_layer="over",
)


def _tokenizer(dep: Deployment, name: str, value: Sourced[object]) -> None:
    """``trtllm-serve /engine --tokenizer <checkpoint>``: a built engine's directory is a path
    inside the container; the tokenizer names the checkpoint it was built from, whose
    config.json is the model's."""
    text = str(value.value)
    model = dep.model
    local = model is not None and str(model.value).startswith(("/", "./"))
    if local and "/" in text and not text.startswith(("/", "./")):
        dep.model = Sourced(text, value.span, value.raw)


class TrtllmEngine(Engine):
    """TensorRT-LLM's reader: the LLM API YAML nests ``kv_cache_config`` and ``build_config``,
    whose keys are read one by one so each keeps its own line and column."""

    def apply_mapping(self, dep: Deployment, node: MappingNode) -> None:
        rest: list[tuple[Scalar, Node]] = []
        for key, value in node.items:
            section = key.text.replace("_", "-")
            if section not in NESTED or not isinstance(value, MappingNode):
                rest.append((key, value))
                continue
            for inner, inner_value in value.items:
                name = f"{section}.{inner.text.replace('_', '-')}"
                if name in self.spec.settings and isinstance(inner_value, Scalar):
                    raw = inner_value.value if inner_value.value is not None else ""
                    where = Token(inner_value.text, inner_value)
                    self.set(dep, name, raw, where, spelled=f"{key.text}.{inner.text}")
                else:  # a key kvlint does not interpret: kept as written, not reported
                    dep.settings[name] = Sourced(inner_value.plain(), inner_value.span)
        if rest:
            others = MappingNode(node.source, node.path, node.start, node.end, rest)
            super().apply_mapping(dep, others)


ENGINE = TrtllmEngine(SPEC, hooks={"tokenizer": _tokenizer}, positional_model=True)
