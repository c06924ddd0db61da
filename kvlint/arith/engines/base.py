"""EngineEstimate: what an engine will allocate, as its start-up log would report it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field


@dataclass(frozen=True)
class EngineEstimate:
    """The engine's own numbers for one deployment. Memory figures are per GPU (per rank), token
    and concurrency figures engine-wide, as vLLM logs them. ``None`` means not computable from
    the files (``missing`` says why)."""

    engine: str  # vllm, sglang, llamacpp, tgi, ollama
    version: str  # the version whose accounting was applied: "0.11", "current", ...
    max_model_len: int
    gpu_total_bytes: int | None = None
    memory_fraction: float | None = None
    weights_bytes: int | None = None  # per GPU
    activation_bytes: int | None = None
    non_torch_bytes: int | None = None
    cudagraph_bytes: int | None = None
    available_kv_bytes: int | None = None  # per GPU
    bytes_per_token: int | None = None  # per GPU, as the engine pages it (block-rounded heads)
    num_blocks: int | None = None
    # Blocks one request of max_model_len takes (every KV group's share; vLLM's
    # num_blocks_per_request), so admission can be counted exactly: (num_blocks - 1) // this,
    # block 0 being the null block. None when not computed.
    blocks_per_request: int | None = None
    block_size: int | None = None
    kv_cache_tokens: int | None = None  # "GPU KV cache size: N tokens"
    max_concurrency: float | None = None  # "Maximum concurrency for L tokens per request: Xx"
    fits: bool | None = None  # False: the engine refuses to start
    needed_bytes_one_sequence: int | None = None  # per GPU, for one max_model_len request
    estimated_max_model_len: int | None = None  # what vLLM's error would suggest
    first_principles_tokens: int | None = None  # what the same memory holds with no paging waste
    error: str | None = None  # the engine's own error text when it would refuse
    kv_buffer_bytes: int | None = None  # llama.cpp / Ollama: the KV buffers, all devices
    # Settings the files leave unset, as the engine fills them: (Deployment field, value), e.g.
    # ("max_num_seqs", 256). kvlint.sizing.size turns them into Sourced(default=True) values.
    defaults: tuple[tuple[str, object], ...] = ()
    missing: tuple[str, ...] = ()  # facts the files do not give ("GPU type", ...)
    notes: tuple[str, ...] = field(default=())  # what decided the outcome (defaults used, ...)
