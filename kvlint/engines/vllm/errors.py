"""vLLM's own start-up error texts, word for word, so a finding can quote what vLLM will print.

Reproduces the two failures of ``_check_enough_kv_cache_memory`` (``vllm/v1/core/
kv_cache_utils.py``: no memory left for the cache, or too little for one request at
``max_model_len``) in the 0.11 wording and the current one, and the over-long ``max_model_len``
of ``_get_and_verify_max_len``; ``research/engines.md`` section 1 quotes each. Also the free
memory check of the worker's ``init_device`` and the V0 engine's cache-too-short error.
``vllm.py`` decides which failure applies and with what numbers; this module only words it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.units import GiB

if TYPE_CHECKING:
    from kvlint.engines.vllm.effective import VllmSettled
    from kvlint.model.spec import ModelSpec

# The multiprocessing executor's device check (``_check_cuda`` in
# vllm/executor/multiproc_gpu_executor.py): more tensor x pipeline workers than the node's GPUs.
WORLD_SIZE = (
    "please ensure that world_size ({needed}) is less than than max local gpu count ({available})"
)

_DOCS = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."


def fmt_gib(value: int) -> str:
    return f"{value / GiB:.2f}"


def oom_message(s: VllmSettled, needed: int, available: int, estimated: int) -> str:
    if s.old:
        estimated_msg = (
            f"Based on the available memory, the estimated maximum model length is {estimated}."
            if estimated > 0
            else ""
        )
        return (
            f"To serve at least one request with the models's max seq len ({s.length}), "
            f"({fmt_gib(needed)} GiB KV cache is needed, which is larger than the available KV "
            f"cache memory ({fmt_gib(available)} GiB). {estimated_msg} Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
        )
    estimated_msg = (
        f"Based on the available memory, the estimated maximum model length is {estimated}. "
        if estimated > 0
        else ""
    )
    return (
        f"To serve at least one request with the model's max seq len ({s.length}), "
        f"({fmt_gib(needed)} GiB KV cache is needed, which is larger than the available KV "
        f"cache memory ({fmt_gib(available)} GiB). {estimated_msg}Try increasing "
        "`gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
        f"decreasing `max_model_len` when initializing the engine. {_DOCS}"
    )


def no_memory_message(s: VllmSettled) -> str:
    if s.old:
        return (
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
            "when initializing the engine."
        )
    return (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine (this flag also controls CPU memory reservation on the CPU "
        f"backend, despite its name). {_DOCS}"
    )


def too_long_message(s: VllmSettled, spec: ModelSpec) -> str:
    key = spec.max_length_key or "max_position_embeddings"
    return (
        f"User-specified max_model_len ({s.length}) is greater than the derived "
        f"max_model_len ({key}={s.derived_max_model_len} or model_max_length=None in model's "
        "config.json). To allow overriding this maximum, set the env var "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."
    )


def free_memory_message(s: VllmSettled, free: int, total: int, requested: int) -> str:
    """``init_device``: the memory free after the CUDA context is below the requested share."""
    held = s.reserved_memory.value if s.reserved_memory is not None else 0
    others = f" ({held / GiB:.2f} GiB held by other residents)" if held else ""
    return (
        f"Free memory on device ({free / GiB:.2f}/{total / GiB:.2f} GiB){others} on startup "
        "is less than desired GPU memory utilization "
        f"({s.fraction}, {requested / GiB:.2f} GiB). Decrease GPU "
        "memory utilization or reduce GPU memory used by other processes."
    )


def v0_too_long_message(s: VllmSettled, tokens: int) -> str:
    """The V0 engine: one sequence of ``max_model_len`` does not fit the cache's tokens."""
    return (
        f"The model's max seq len ({s.length}) is larger than the maximum number of "
        f"tokens that can be stored in KV cache ({tokens}). Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
    )
