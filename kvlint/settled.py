"""Settled: what an engine will really run with, every value still Sourced (a record).

A Deployment is what the files say; an engine's ``settle`` step turns it into a Settled once,
before anything is sized: overrides applied to the model (``--hf-overrides``, ``--rope-scaling``),
the engine's defaults filled in and marked ``default=True`` (cited at the deployment), the cache
dtype parsed into storage types, raw flag spellings read for the last time. The engine's
accounting, the rules, ``kvlint size`` and ``kvlint solve`` all read this record, so they cannot
disagree about what the engine runs with.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import NamedTuple

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.deployment import Workload
from kvlint.finding import Span
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheTypes


class ParallelRules(NamedTuple):
    """How an engine splits a model across GPUs."""

    engine: str  # as messages name it
    tensor: bool = True  # shards attention heads across GPUs
    pipeline: bool = True  # splits layers into stages
    replicates_kv_heads: bool = True  # past the KV heads each GPU holds a copy of one
    data: bool = True  # runs data-parallel ranks of its own, each on its own GPUs
    # Without a stated size it shards over every GPU it sees (TGI's --num-shard), so only a
    # stated size can disagree with the pod's GPUs.
    shards_over_visible_gpus: bool = False


class EngineFacts(NamedTuple):
    """What a rule may say about an engine without asking which engine it is: its name as
    people write it, how it spells each setting, and how it behaves where engines differ."""

    name: str  # the registry key: vllm, sglang, llamacpp, tgi, ollama, trtllm
    display: str  # vLLM, SGLang, llama.cpp, TGI, Ollama, TensorRT-LLM
    # Deployment field -> the engine's own name for it (max_num_seqs -> max_running_requests)
    spellings: tuple[tuple[str, str], ...] = ()
    cache_8bit: str = "fp8"  # the engine's spelling of an 8-bit cache, for a fix
    default_cache_dtype: str = "auto"  # the spelling of "the model dtype"
    v_cache_dtype_apart: bool = False  # V's type is its own setting (llama.cpp -ctv)
    # The environment switch that lets max_model_len pass the model's positions, if any.
    long_context_switch: str | None = None
    # The pool is cells allocated up front for every slot (llama.cpp's -c), not free memory.
    pool_is_cells: bool = False
    # The scheduler admits max_num_seqs sequences against the KV pool (vLLM, SGLang): a cap
    # above what fits only queues them (TGI's max_concurrent_requests is a queue limit).
    pooled_admission: bool = False
    # What the engine does when one full-length request does not fit its pool.
    one_request_refusal: str = ""
    # Tokens a context length is rounded to (llama.cpp pads n_ctx to 256 cells).
    length_granularity: int | None = None
    # A quantised V cache without flash attention: "refuses" (llama.cpp), "falls back" to f16
    # (Ollama), or None where it does not apply.
    quantised_v_without_flash: str | None = None
    # From this release the fall-back is a refusal (Ollama 0.30 hands the type to llama-server).
    quantised_v_refused_from: tuple[int, ...] | None = None
    # The engine puts layers on the GPU one by one (llama.cpp -ngl) rather than sharding them.
    offloads_layers: bool = False
    parallel: ParallelRules = ParallelRules("engine")  # how it splits a model across GPUs
    # What the engine prints when its layout needs more GPUs than the node has, with
    # ``{needed}`` and ``{available}`` to fill; None where kvlint has no text to quote.
    world_size_refusal: str | None = None
    # The cache dtypes it starts with, by release: (first release, the dtypes), oldest first;
    # and those every release starts with although an old release's list leaves them out.
    cache_dtype_releases: tuple[tuple[tuple[int, ...], tuple[str, ...]], ...] = ()
    unlisted_cache_dtypes: tuple[str, ...] = ()
    # Releases before this one start with a cache dtype they do not list and keep the default
    # (Ollama warns "unsupported OLLAMA_KV_CACHE_TYPE" and uses f16); None: every release
    # refuses one (argparse, clap, llama.cpp's "Unsupported cache type").
    unlisted_cache_dtype_ignored_before: tuple[int, ...] | None = None
    # An fp8 e4m3 cache needs compute capability 8.9 (vLLM's Triton KV writer asserts it).
    fp8_cache_needs_sm89: bool = False
    # The engine's own words when attention heads do not divide by TP ({heads}, {tp} filled
    # in), quoted by KV304; empty where kvlint has not read the engine's message.
    tp_heads_refusal: str = (
        "Total number of attention heads ({heads}) must be divisible by tensor parallel size "
        "({tp})."
    )
    # The memory fraction is a share of what is free after the weights and buffers
    # (TensorRT-LLM's free_gpu_memory_fraction), not of the GPU: the weights are weighed
    # against the whole GPU.
    fraction_of_free: bool = False
    # Why an e4m3 cache fails on an older GPU, in the engine's own terms.
    fp8_cache_refusal: str = (
        "vLLM's kernels need 8.9 or newer and fail with \"type fp8e4nv not supported in this "
        'architecture"'
    )
    # The engine's spelling of a 4-bit cache (vLLM's nvfp4, llama.cpp's q4_0), if it has one:
    # the solver's levers and its engine table offer it beside ``cache_8bit``.
    cache_4bit: str | None = None
    # max_model_len is the cells of every slot together (llama.cpp's -c, divided between -np
    # slots): a concurrency is then a setting, and ``n`` sequences of ``L`` tokens are asked
    # for as max_model_len ``n x L`` with max_num_seqs ``n``.
    context_spans_slots: bool = False
    # Why the engine has no weight quantisation setting (it loads the quantisation of its
    # file), for the solver's weight levers; None where --quantization applies.
    fixed_weights: str | None = None
    # The releases the solver's engine table sizes a deployment under, as (the version a file
    # would name, None for the newest kvlint models; the row's label). Empty: the newest,
    # labelled ``display``.
    compared_releases: tuple[tuple[str | None, str], ...] = ()
    # The GPU vendors it runs on (kvlint.gpus.GpuSpec.vendor): the solver compares the
    # engines a GPU can run (vLLM, SGLang and TGI have no Metal backend; MLX's CUDA backend
    # is not modelled).
    vendors: tuple[str, ...] = ("nvidia", "amd")
    # How to stop every tensor-parallel rank keeping a whole copy of an MLA latent cache: the
    # engine's own switch, as a fix title (KV305).
    mla_copies_fix: str = "Shard attention by data parallelism (`data_parallel_size`) instead of TP"
    # With no version named, the releases (one per line whose memory accounting differs,
    # besides the newest) a deployment is also sized at, so a verdict that hangs on the
    # release says so.
    version_lines: tuple[str, ...] = ()
    # The newest release that cached MLA models as full K/V (no MLA support yet): a file naming
    # no release that serves an MLA model is sized at it too.
    mla_full_kv_release: str | None = None

    def accepted_cache_dtypes(self, release: tuple[int, ...] | None) -> tuple[str, ...]:
        """The cache dtypes ``release`` starts with (the newest release's when None)."""
        if not self.cache_dtype_releases:
            return ()
        if release is None:
            return self.cache_dtype_releases[-1][1]
        accepted = self.cache_dtype_releases[0][1]
        for since, dtypes in self.cache_dtype_releases:
            if release >= since:
                accepted = dtypes
        return accepted

    def spelling(self, field_name: str) -> str:
        """The engine's name for a Deployment field (the field's own name when it has none)."""
        return dict(self.spellings).get(field_name, field_name)


@dataclass(frozen=True)
class Request:
    """What the files ask an engine for: a Deployment's engine settings, typed and read once by
    the engine's settle step, which turns it into a Settled. ``extras`` holds what the engine
    reads from flags and environment variables that have no field of their own (vLLM's
    ``--cpu-offload-gb``, TGI's ``ATTENTION``), keyed as the engine spells them. The solver
    revises a request (``kvlint.engines.revise``) to ask what another setting would do."""

    engine: str
    span: Span  # the deployment: where an engine default is cited
    engine_version: Sourced[str] | None = None
    dtype: Sourced[str] | None = None
    quantization: Sourced[str] | None = None
    kv_cache_dtype: Sourced[str] | None = None
    kv_cache_dtype_v: Sourced[str] | None = None
    max_model_len: Sourced[int] | None = None
    max_num_seqs: Sourced[int] | None = None
    max_num_batched_tokens: Sourced[int] | None = None
    memory_fraction: Sourced[float] | None = None
    kv_cache_memory_bytes: Sourced[int] | None = None
    num_gpu_blocks_override: Sourced[int] | None = None
    tensor_parallel_size: Sourced[int] | None = None
    pipeline_parallel_size: Sourced[int] | None = None
    data_parallel_size: Sourced[int] | None = None
    gpu_count: Sourced[int] | None = None
    reserved_memory: Sourced[int] | None = None  # bytes other residents hold on the GPU
    block_size: Sourced[int] | None = None
    enforce_eager: Sourced[bool] | None = None
    disable_sliding_window: Sourced[bool] | None = None
    disable_hybrid_kv_cache_manager: Sourced[bool] | None = None
    flash_attention: Sourced[str] | None = None
    swa_full: Sourced[bool] | None = None
    kv_unified: Sourced[bool] | None = None
    n_gpu_layers: Sourced[int] | None = None
    hf_overrides: Sourced[dict[str, Any]] | None = None
    rope_scaling: Sourced[dict[str, Any]] | None = None
    allow_long_max_model_len: Sourced[bool] | None = None
    speculative_model: Sourced[str] | None = None  # a draft model of its own, as named
    draft_spec: ModelSpec | None = None  # its shape, when the run resolved it
    extras: dict[str, Sourced[Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, dep: Deployment, **extras: Sourced[Any] | None) -> Request:
        """The request ``dep`` makes of its engine, with the engine's own extra inputs."""
        values = {name: getattr(dep, name) for name in _REQUEST_FIELDS}
        found = {key: value for key, value in extras.items() if value is not None}
        return cls(engine=str(dep.engine.value), span=dep.span, extras=found, **values)

    def extra(self, key: str) -> Sourced[Any] | None:
        return self.extras.get(key)


class PoolSwitch(NamedTuple):
    """A setting that makes the engine page windowed layers as full attention (KV305's cause)."""

    key: str  # the setting as a fix names it: disable_hybrid_kv_cache_manager
    value: Sourced[Any]
    text: str  # "the hybrid KV cache manager is disabled"


@dataclass(frozen=True)
class Settled:
    """Every value the engine will run with. A value the files set keeps its span; one the
    engine fills in is ``Sourced(..., default=True)`` at the deployment's span."""

    engine: str
    facts: EngineFacts
    span: Span  # the deployment: where an engine default is cited
    request: Request  # what the files asked for (the solver revises it)
    model: ModelSpec  # the model as its config says, before the deployment's overrides
    version: Sourced[str]  # the release sized as; default=True when no file names one
    version_numbers: tuple[int, ...] | None  # parsed; None for a build id or "latest"
    spec: ModelSpec  # the model with the deployment's length and RoPE overrides applied
    gpu: GpuSpec | None
    gpu_count: Sourced[int] | None  # GPUs of one replica as the files request them
    max_model_len: Sourced[int]
    derived_max_model_len: int  # the longest the engine derives from the (overridden) config
    length_origin: str  # how: "max_position_embeddings=32768 x the `yarn` RoPE factor 4"
    allow_long: Sourced[bool] | None  # the switch that lets max_model_len pass it, when set
    max_num_seqs: Sourced[int] | None  # None: the engine picks it after sizing (SGLang)
    max_num_batched_tokens: Sourced[int] | None
    memory_fraction: Sourced[float] | None  # None when kv_cache_memory_bytes replaces it
    kv_cache_memory_bytes: Sourced[int] | None
    cache_dtype: Sourced[str]  # as the engine spells it; "auto" = the model dtype
    cache_dtype_v: Sourced[str] | None  # llama.cpp -ctv when it differs from -ctk
    # Storage of K, V and states; None when kvlint does not know the layout (``cache_note``).
    cache_types: CacheTypes | None
    tensor_parallel_size: Sourced[int]
    pipeline_parallel_size: Sourced[int]
    data_parallel_size: Sourced[int]
    block_size: Sourced[int] | None
    enforce_eager: Sourced[bool] | None
    quantization: Sourced[str] | None
    dtype: Sourced[str] | None  # the model dtype the engine is told to use
    # No file names a version the engine's tables can read ("latest", none): sized as the newest.
    version_assumed: bool = False
    cpu_offload_bytes: Sourced[int] | None = None  # weights per GPU kept in CPU memory
    attention_backend: Sourced[str] | None = None
    flash_attention: Sourced[str] | None = None  # on / off / auto, as llama.cpp reads it
    n_gpu_layers: Sourced[int] | None = None
    hf_overrides: Sourced[dict[str, Any]] | None = None  # as stated (KV101 reads head_dim)
    pool_switches: tuple[PoolSwitch, ...] = ()
    cache_note: str | None = None  # why the cache dtype was not sized, or was replaced
    # The requests it serves, when a plan or the config states them (KV301 judges admission
    # at their lengths; the accounting counts what it admits at each).
    workload: Workload | None = None
    # Bytes of the GPU other residents hold (a second model, a TTS model, a gateway cache):
    # every engine's accounting takes them off the memory it plans with, and says so.
    reserved_memory: Sourced[int] | None = None
    # What decided the outcome besides the files: "default max_num_seqs 256", ...
    notes: tuple[str, ...] = field(default=())

    @property
    def model_gpus(self) -> int:
        """GPUs that hold one copy of the model: tensor x pipeline parallel."""
        return max(1, self.tensor_parallel_size.value) * max(1, self.pipeline_parallel_size.value)

    @property
    def written_version(self) -> tuple[int, ...] | None:
        """The release a file names, as numbers (None when no file names one)."""
        return None if self.version.default or self.version_assumed else self.version_numbers


# The Deployment fields an engine reads (the rest say where it is written, what model it
# serves and what a plan claims).
_REQUEST_FIELDS = tuple(
    name for name in Request.__dataclass_fields__ if name not in ("engine", "span", "extras")
)
