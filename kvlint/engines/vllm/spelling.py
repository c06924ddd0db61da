"""vLLM: ``vllm serve MODEL``, ``python -m vllm.entrypoints.openai.api_server``, config YAML."""

from __future__ import annotations

from typing import Any

from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.vllm import flags as vllm_flags
from kvlint.engines.vllm.facts import KV_CACHE_DTYPES

SETTINGS = {
    s.name: s
    for s in (
        Setting("model", "str", "model"),
        Setting("served-model-name", "str", "served_model_name"),
        Setting("dtype", "str", "dtype"),
        Setting("quantization", "str", "quantization"),
        Setting("kv-cache-dtype", "str", "kv_cache_dtype", KV_CACHE_DTYPES),
        # max_model_len, max_num_batched_tokens and kv_cache_memory_bytes go through
        # human_readable_int (vllm/engine/arg_utils.py): 32k, 1K, 25.6k; -1/auto for the first.
        Setting("max-model-len", "max_model_len", "max_model_len"),
        Setting("max-num-seqs", "int", "max_num_seqs", minimum=1),
        Setting("max-num-batched-tokens", "human_int", "max_num_batched_tokens"),
        Setting("gpu-memory-utilization", "fraction", "memory_fraction"),
        Setting("kv-cache-memory-bytes", "human_int", "kv_cache_memory_bytes"),
        Setting("num-gpu-blocks-override", "int", "num_gpu_blocks_override", minimum=1),
        Setting("tensor-parallel-size", "int", "tensor_parallel_size", minimum=1),
        Setting("pipeline-parallel-size", "int", "pipeline_parallel_size", minimum=1),
        Setting("data-parallel-size", "int", "data_parallel_size", minimum=1),
        Setting("data-parallel-size-local", "int", "data_parallel_size_local", minimum=0),
        Setting("data-parallel-rank", "int", "data_parallel_rank", minimum=0),
        Setting("nnodes", "int", "nnodes", minimum=1),
        Setting("headless", "bool", "headless"),
        Setting("distributed-executor-backend", "str", "distributed_executor_backend"),
        Setting("block-size", "int", "block_size", minimum=1),
        Setting("enforce-eager", "bool", "enforce_eager"),
        Setting("disable-sliding-window", "bool", "disable_sliding_window"),
        Setting("disable-hybrid-kv-cache-manager", "bool", "disable_hybrid_kv_cache_manager"),
        Setting("speculative-model", "str", "speculative_model"),
        Setting("speculative-config", "json", "speculative_model"),
        Setting("hf-overrides", "json", "hf_overrides"),
        Setting("rope-scaling", "json", "rope_scaling"),
        Setting("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "bool", "allow_long_max_model_len"),
        # GiB of weights per GPU kept in CPU memory: a number in args as in a config file.
        Setting("cpu-offload-gb", "float"),
    )
}


def _speculative(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    config = value.value
    if isinstance(config, dict) and isinstance(config.get("model"), str):
        dep.speculative_model = Sourced(config["model"], value.span, value.raw)


def _hf_overrides(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    if not isinstance(value.value, dict):
        return
    dep.hf_overrides = value
    rope = value.value.get("rope_scaling") or value.value.get("rope_parameters")
    if isinstance(rope, dict):
        dep.rope_scaling = Sourced(rope, value.span, value.raw)


def _served_name(dep: Deployment, name: str, value: Sourced[Any]) -> None:
    # nargs="+": the first name is the one the API reports.
    first = str(value.value).split()[0] if str(value.value).split() else str(value.value)
    dep.served_model_name = Sourced(first, value.span, value.raw)


# The JSON options vLLM's argument parser also takes one key at a time
# (`--hf-overrides.head_dim 1024`, docs/cli/json_tip.inc.md): every *-config, *-overrides and
# *-kwargs option but the two that name a file or a source (--config, --generation-config).
DOTTED = frozenset(
    name
    for name in vllm_flags.KNOWN
    if name.endswith(("-config", "-overrides", "-kwargs"))
    and name not in ("config", "generation-config")
) | {"limit-mm-per-prompt", "rope-scaling"}

SPEC = EngineSpec(
    name="vllm",
    settings=SETTINGS,
    known=vllm_flags.KNOWN,
    aliases=vllm_flags.ALIASES,
    env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "VLLM_ALLOW_LONG_MAX_MODEL_LEN"},
    underscores=True,
    negatable=True,
    abbrev=True,
    releases_read=vllm_flags.RELEASES_READ,
    first_seen=vllm_flags.FIRST_SEEN,
    last_seen=vllm_flags.LAST_SEEN,
    dotted=DOTTED,
    # FlexibleArgumentParser._pull_args_from_config (vllm/utils/argparse_utils.py, vllm-project/
    # vllm 00da11e3) turns the --config YAML into `--key value` pairs and inserts them after
    # the sub-command and the positional model, before the rest of the command line, "to
    # enforce the precedence of cli > config > defaults": a flag on the command line wins, and
    # the file's `model` is used only when the command line names none.
    config_files=("config",),
    config_layer="under",
)

ENGINE = Engine(
    SPEC,
    hooks={
        "speculative-config": _speculative,
        "hf-overrides": _hf_overrides,
        "served-model-name": _served_name,
    },
    # llm-d images and KServe's LLMInferenceService pass extra flags in this variable.
    args_env=("VLLM_ADDITIONAL_ARGS",),
    positional_model=True,
)
