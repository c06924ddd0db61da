"""Deployment: one model for every engine, each value carrying the span that set it (a record)."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Generic
from typing import NamedTuple
from typing import TypeVar

from kvlint.finding import InputProblem
from kvlint.finding import Span

if TYPE_CHECKING:  # a Deployment holds a draft model's shape only once a run resolved it
    from kvlint.model.spec import ModelSpec

T = TypeVar("T")


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A value and where it came from. ``raw`` is the text as written (``32k``, ``"0.9"``)."""

    value: T
    span: Span
    raw: str | None = None
    default: bool = False  # filled in from the engine's defaults, not written in any file


@dataclass(frozen=True)
class Claims:
    """What a plan promises or assumed (the kvlint plan format's ``claims``)."""

    concurrency: Sourced[int] | None = None
    context: Sourced[int] | None = None
    kv_per_token: Sourced[int] | None = None  # bytes
    kv_per_sequence: Sourced[int] | None = None  # bytes, at `context` (or max_model_len)
    kv_pool_tokens: Sourced[int] | None = None
    kv_cache_dtype: Sourced[str] | None = None
    gpus_needed: Sourced[int] | None = None


class RequestLength(NamedTuple):
    """One request length a workload states: prompt and output tokens together."""

    tokens: int
    label: str  # how a message names it: "p95", "typical request"
    detail: str  # "1,800 prompt + 200 output", or "" when stated as one figure
    source: Sourced[int]  # the figure a file states (a percentile, or the prompt's tokens)


@dataclass(frozen=True)
class Workload:
    """The requests a deployment serves, as a team states them once: a plan's ``workload`` or
    a config's ``workload`` per path. Rules judge admission at these lengths as well as at
    ``max_model_len`` (a batch of 2,000-token articles is not a stream of 32K prompts)."""

    prompt_tokens: Sourced[int] | None = None  # a typical request's prompt
    output_tokens: Sourced[int] | None = None  # and its output
    # ("p95", tokens): prompt + output at that percentile of requests
    percentiles: tuple[tuple[str, Sourced[int]], ...] = ()

    def lengths(self) -> tuple[RequestLength, ...]:
        """Every stated request length, shortest first (the typical request, then each
        percentile); empty when the workload states none."""
        found: list[RequestLength] = []
        prompt, output = self.prompt_tokens, self.output_tokens
        typical = (prompt.value if prompt else 0) + (output.value if output else 0)
        source = prompt or output
        if typical > 0 and source is not None:
            detail = (
                f"{prompt.value:,} prompt + {output.value:,} output" if prompt and output else ""
            )
            found.append(RequestLength(typical, "typical request", detail, source))
        for label, value in self.percentiles:
            if value.value > 0:
                found.append(RequestLength(value.value, label, "", value))
        return tuple(sorted(found, key=lambda length: length.tokens))


@dataclass
class Deployment:
    """One served model as a file describes it.

    Every setting is normalised to vLLM-style names whatever the engine spells it:
    ``max_num_seqs`` is also SGLang's ``--max-running-requests``, llama.cpp's ``-np``, TGI's
    ``--max-concurrent-requests`` and ``OLLAMA_NUM_PARALLEL``; ``memory_fraction`` is
    ``gpu_memory_utilization`` / ``mem_fraction_static`` / ``cuda_memory_fraction``.
    ``settings`` keeps every setting as the engine spells it (canonical long name, dashes).
    """

    path: str
    span: Span  # the document, container or service that holds the deployment
    name: str  # human label: "Deployment/vllm container vllm", "services.llm", "plan"
    carrier: str  # engine_yaml, kubernetes, compose, helm, plan, kubeai, ray, dynamo, ...
    engine: Sourced[str]
    engine_version: Sourced[str] | None = None
    model: Sourced[str] | None = None
    served_model_name: Sourced[str] | None = None
    dtype: Sourced[str] | None = None
    quantization: Sourced[str] | None = None
    kv_cache_dtype: Sourced[str] | None = None
    kv_cache_dtype_v: Sourced[str] | None = None  # llama.cpp -ctv when it differs
    max_model_len: Sourced[int] | None = None
    max_num_seqs: Sourced[int] | None = None
    max_num_batched_tokens: Sourced[int] | None = None
    memory_fraction: Sourced[float] | None = None
    kv_cache_memory_bytes: Sourced[int] | None = None
    num_gpu_blocks_override: Sourced[int] | None = None
    tensor_parallel_size: Sourced[int] | None = None
    pipeline_parallel_size: Sourced[int] | None = None
    data_parallel_size: Sourced[int] | None = None
    data_parallel_size_local: Sourced[int] | None = None  # vLLM: the DP ranks on this node
    data_parallel_rank: Sourced[int] | None = None  # vLLM: this server is one DP rank (external LB)
    nnodes: Sourced[int] | None = None  # nodes one engine spans (vLLM and SGLang --nnodes)
    headless: Sourced[bool] | None = None  # vLLM --headless: a worker node's ranks, no server
    distributed_executor_backend: Sourced[str] | None = None  # vLLM: ray, mp, ...
    enable_dp_attention: Sourced[bool] | None = None  # SGLang: DP ranks inside the TP group
    gpu: Sourced[str] | None = None  # as written: "H100-80GB", "nvidia-l4", "p5.48xlarge"
    gpu_count: Sourced[int] | None = None  # GPUs per replica / pod
    # Bytes of the GPU (or unified memory) other residents hold: a second model, a TTS model,
    # a gateway cache (a plan's `reserved_memory`, or the config / --reserved-memory).
    reserved_memory: Sourced[int] | None = None
    block_size: Sourced[int] | None = None
    enforce_eager: Sourced[bool] | None = None
    disable_sliding_window: Sourced[bool] | None = None
    disable_hybrid_kv_cache_manager: Sourced[bool] | None = None
    flash_attention: Sourced[str] | None = None  # llama.cpp -fa: on / off / auto
    swa_full: Sourced[bool] | None = None  # llama.cpp --swa-full
    kv_unified: Sourced[bool] | None = None  # llama.cpp -kvu
    n_gpu_layers: Sourced[int] | None = None  # llama.cpp -ngl
    speculative_model: Sourced[str] | None = None
    # The draft model's shape when the run resolved ``speculative_model`` (the linter does, as
    # it resolves ``model``); None when none is named or it is not known here.
    draft_spec: ModelSpec | None = None
    hf_overrides: Sourced[dict[str, Any]] | None = None
    rope_scaling: Sourced[dict[str, Any]] | None = None  # --rope-scaling / hf_overrides
    allow_long_max_model_len: Sourced[bool] | None = None  # VLLM_ALLOW_LONG_MAX_MODEL_LEN
    settings: dict[str, Sourced[Any]] = field(default_factory=dict)
    env: dict[str, Sourced[str]] = field(default_factory=dict)
    annotations: dict[str, Sourced[str]] = field(default_factory=dict)
    claims: Claims = field(default_factory=Claims)
    workload: Workload | None = None  # the requests it serves, when a plan or config says
    problems: list[InputProblem] = field(default_factory=list)
    unknown_flags: list[Sourced[str]] = field(default_factory=list)
    # A cache dtype setting given a weight quantisation the engine does not take as a cache
    # type (`--kv-cache-dtype awq`, `OLLAMA_KV_CACHE_TYPE=q4_K_M`), by Deployment field: read
    # by KV201 instead of a generic KV502, and left out of the field (the cache stays default).
    weight_format_cache: dict[str, Sourced[str]] = field(default_factory=dict)
    # Settings whose value the file leaves to run time (`$(MAX_LEN)`, `{{ .Values.len }}`), by
    # Deployment field: the value as written. The arithmetic cannot use them (sizing says so).
    runtime: dict[str, Sourced[str]] = field(default_factory=dict)
    # GPUs across the pods one engine spans (a LeaderWorkerSet group, a Ray cluster), when it
    # spans more than its own pod; `gpu_count` stays the pod's own.
    group_gpus: Sourced[int] | None = None
    # Who picks the parallel layout when no file states it, if not the engine's default (the
    # NIM launcher chooses a profile for the GPUs it finds): a stated size is then the only one
    # that can disagree with the GPUs.
    layout_picked_by: str | None = None
    # GPUs the engine sees when ``CUDA_VISIBLE_DEVICES`` (or ``NVIDIA_VISIBLE_DEVICES``) lists
    # device numbers, spanned at the variable's value, and the variable's name.
    visible_gpus: Sourced[int] | None = None
    visible_gpus_from: str = ""
    # The engine's workers come from a Ray cluster it joins (``RAY_ADDRESS``), not its pod.
    joins_ray_cluster: bool = False
    # The model a custom resource beside the container says it serves (an llmaz OpenModel, an
    # OME BaseModel), and that resource ("OpenModel/qwen2-0--5b").
    claimed_model: Sourced[str] | None = None
    claimed_by: str = ""
