"""vLLM's settle step: what ``vllm serve`` will run with for one deployment.

The only place kvlint reads vLLM's settings off a Deployment: the typed fields its flag table
fills, the few settings that have no field (``--cpu-offload-gb``, ``--attention-backend``) and
the environment variables vLLM reads (``VLLM_ALLOW_LONG_MAX_MODEL_LEN``, the chunked-local
switch, ``VLLM_ATTENTION_BACKEND``). Overrides are applied to the model, vLLM's defaults for
the version and GPU filled in (``vllm/engine/arg_utils.py``, ``vllm/config/cache.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines.common import computed_dtype
from kvlint.engines.common import derived_max_model_len
from kvlint.engines.common import given
from kvlint.engines.common import parallel_size
from kvlint.engines.common import storage
from kvlint.engines.common import switch
from kvlint.engines.vllm import defaults as D
from kvlint.engines.vllm.facts import FACTS
from kvlint.engines.vllm.memory import DEFAULT_MAX_LORA_RANK as MAX_LORA_RANK
from kvlint.gpus import GpuSpec
from kvlint.model.drafters import for_method
from kvlint.model.overrides import with_length_overrides
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.settled import PoolSwitch
from kvlint.settled import Request
from kvlint.settled import Settled
from kvlint.units import INT64_MAX
from kvlint.units import GiB
from kvlint.versions import version_label

# DeepSeek sparse attention (V3.2): "Some models (namely DeepSeekV3.2) default to fp8"
# (vllm/config/cache.py docstring); its cache is an fp8 latent plus the indexer's keys.
SPARSE_MLA_MODEL_TYPES = frozenset({"deepseek_v32"})


@dataclass(frozen=True)
class VllmSettled(Settled):
    """vLLM's Settled, with what only its accounting reads."""

    hybrid_kv_cache: bool = True  # the hybrid allocator pages windowed layers by their window
    # Why vLLM turns the hybrid allocator off although no setting asks: "chunked" (chunked-local
    # attention without its environment switch), or None. Gemma 4 is paged by its windows on
    # the 0.11 line too: the vllm/vllm-openai:gemma4 image's start-up on an H200 NVL (the
    # huggingface.co/LargitData/gemma-4-31b-it-fp8 model card: fp8 cache, 32,768 tokens, 8192
    # batched) logs 55.22 GiB, 120,624 tokens and 11.57x, which are 45,236 blocks of 10 layers
    # x 16 tokens x 8 KiB, // 6 groups x 16, and 45,236 / (5 x 577 + 1024) blocks a request;
    # every layer at full length would be 131,590 tokens and 4.02x. A jump in the logged tokens
    # from 0.20.0 to 0.20.2 is the capacity line's new formula, not the paging.
    hybrid_off_by_default: str | None = None
    # --decode-context-parallel-size: each request's cache is split over this many ranks by
    # sequence (one block in dcp per rank), so a request needs 1/dcp of its blocks on a GPU.
    decode_context_parallel: int = 1
    auto_max_model_len: bool = False  # -1 / auto: the current line shrinks it to fit
    num_gpu_blocks_override: int | None = None
    v0_engine: bool = False  # the V0 engine runs (defaults.vllm_v0)
    # Recurrent-state paging (defaults.vllm_mamba_cache_mode): prefix caching as it runs, the
    # Mamba cache mode, the speculative tokens per step and the method proposing them, the conv
    # and recurrent state dtypes ("auto": the model dtype; the recurrent one follows the conv).
    prefix_caching: bool = False
    mamba_cache_mode: str = "none"
    speculative_tokens: int = 0
    speculative_method: str | None = None
    # A draft model of its own (EAGLE / EAGLE-3 / DFlash heads, a draft_model): its name as
    # written, and its shape when the run resolved it (None: not known here, not counted).
    draft_model: str | None = None
    draft: ModelSpec | None = None
    mamba_cache_dtype: str = "auto"
    mamba_ssm_cache_dtype: str = "auto"
    # VLLM_USE_FLASHINFER_SAMPLER as set (True for 1, False for 0), None when unset: which
    # top-k/top-p kernel the dummy sampler runs (memory.native_sampler).
    flashinfer_sampler: bool | None = None
    # The tensor-parallel ranks may talk over NVLink-class links (defaults.peer_links): NCCL's
    # many channels and the custom all-reduce keep buffers on every GPU (memory.non_torch_bytes).
    peer_links: bool = True
    # The encoder profile's inputs (memory.encoder_profile): --limit-mm-per-prompt's images a
    # prompt (None: the default), --skip-mm-profiling, and the image processor's max_pixels
    # from --mm-processor-kwargs; --language-model-only builds no tower at all (no weights, no
    # profile).
    mm_image_limit: int | None = None
    skip_mm_profiling: bool = False
    mm_max_pixels: int | None = None
    language_model_only: bool = False
    # --enable-lora: the adapters' rank (--max-lora-rank) and slots (--max-loras), whose
    # buffers load with the weights (memory.lora_bytes); None when LoRA is off.
    lora_rank: int | None = None
    max_loras: int = 1
    defaulted: tuple[str, ...] = ()  # the defaults that decided it, as the notes name them

    @property
    def numbers(self) -> tuple[int, ...]:
        assert self.version_numbers is not None  # vLLM versions always parse (or default)
        return self.version_numbers

    @property
    def old(self) -> bool:
        """The 0.11 accounting (no CUDA-graph term, two capacity lines)."""
        return self.numbers < D.VLLM_CUDAGRAPH_PROFILING_SINCE

    @property
    def capacity_by_concurrency(self) -> bool:
        """The capacity log says int(max_concurrency x max_model_len) tokens (0.20.2 on), not
        num_blocks // groups x min block size."""
        return self.numbers >= D.VLLM_MERGED_CAPACITY_LINE_SINCE

    @property
    def v0(self) -> bool:
        """The V0 engine (before 0.8, where V1 became the default; ``VLLM_USE_V1=0`` before
        0.11)."""
        return self.v0_engine

    @property
    def tp(self) -> int:
        return self.tensor_parallel_size.value

    @property
    def pp(self) -> int:
        return self.pipeline_parallel_size.value

    @property
    def length(self) -> int:
        return self.max_model_len.value

    @property
    def fraction(self) -> float:
        """``gpu_memory_utilization`` as set or defaulted (also when kv_cache_memory_bytes
        replaces it: the free-memory check at start still compares with it)."""
        assert self.memory_fraction is not None  # vLLM's settle step always fills it in
        return self.memory_fraction.value

    @property
    def seqs(self) -> int:
        assert self.max_num_seqs is not None
        return self.max_num_seqs.value

    @property
    def batched(self) -> int:
        assert self.max_num_batched_tokens is not None
        return self.max_num_batched_tokens.value

    @property
    def in_flight(self) -> int:
        """Tokens scheduled ahead of a sliding window (``max_in_flight_tokens``)."""
        if self.numbers < D.VLLM_IN_FLIGHT_BATCHES_SINCE:
            return self.batched
        batches = self.pp if self.pp > 1 else 2  # async scheduling on V1: 2 batches in flight
        return batches * self.batched


def read(dep: Deployment) -> Request:
    """What ``dep`` asks of vLLM: its typed fields, and the flags and environment variables
    vLLM reads that have no field (read here and nowhere else)."""
    return Request.of(
        dep,
        **{
            D.CHUNKED_LOCAL_ENV: dep.env.get(D.CHUNKED_LOCAL_ENV),
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN": dep.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN"),
            "VLLM_ATTENTION_BACKEND": dep.env.get("VLLM_ATTENTION_BACKEND"),
            D.V1_SWITCH_ENV: dep.env.get(D.V1_SWITCH_ENV),
            D.FLASHINFER_SAMPLER_ENV: dep.env.get(D.FLASHINFER_SAMPLER_ENV),
            D.P2P_DISABLE_ENV: dep.env.get(D.P2P_DISABLE_ENV),
            "nnodes": dep.nnodes,
            "attention-backend": dep.settings.get("attention-backend"),
            "cpu-offload-gb": dep.settings.get("cpu-offload-gb"),
            "enforce-eager": dep.settings.get("enforce-eager"),
            "decode-context-parallel-size": dep.settings.get("decode-context-parallel-size"),
            "enable-prefix-caching": dep.settings.get("enable-prefix-caching"),
            "speculative-config": dep.settings.get("speculative-config"),
            "num-speculative-tokens": dep.settings.get("num-speculative-tokens"),
            "mamba-cache-dtype": dep.settings.get("mamba-cache-dtype"),
            "mamba-ssm-cache-dtype": dep.settings.get("mamba-ssm-cache-dtype"),
            "mamba-cache-mode": dep.settings.get("mamba-cache-mode"),
            "limit-mm-per-prompt": dep.settings.get("limit-mm-per-prompt"),
            "mm-processor-kwargs": dep.settings.get("mm-processor-kwargs"),
            "skip-mm-profiling": dep.settings.get("skip-mm-profiling"),
            "language-model-only": dep.settings.get("language-model-only"),
            "enable-lora": dep.settings.get("enable-lora"),
            "max-lora-rank": dep.settings.get("max-lora-rank"),
            "max-loras": dep.settings.get("max-loras"),
        },
    )


def settle(dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None) -> VllmSettled:
    """What vLLM will run with for ``dep`` serving ``spec`` on ``gpu``."""
    return resolve(read(dep), spec, gpu)


def resolve(req: Request, model: ModelSpec, gpu: GpuSpec | None) -> VllmSettled:
    """vLLM's defaults for the version and GPU filled into ``req``, its overrides applied to
    ``model``."""
    here = req.span
    written = req.engine_version
    numbers, assumed = D.vllm_version(written.value if written else None)
    version = written or Sourced(version_label(numbers), here, default=True)
    use_v1 = req.extra(D.V1_SWITCH_ENV)
    v0 = D.vllm_v0(numbers, str(use_v1.value) if use_v1 is not None else None)
    defaults = D.vllm_defaults(numbers, gpu, v0)
    defaulted: list[str] = []
    spec = with_length_overrides(
        model,
        req.hf_overrides.value if req.hf_overrides else None,
        req.rope_scaling.value if req.rope_scaling else None,
    )
    if numbers < D.VLLM_MLA_SINCE and spec.mla_expanded is not None:
        # before MLA support: every latent layer is cached as full K/V of every head
        full = spec.mla_expanded
        layers = tuple(full if layer.kind is CacheKind.MLA else layer for layer in spec.layers)
        spec = replace(
            spec,
            layers=layers,
            num_key_value_heads=full.kv_heads,
            head_dim=full.head_dim_k,
            mla_expanded=None,
        )
        defaulted.append("MLA layers cached as full K/V of every head (vLLM before 0.7.1)")
    derived = derived_max_model_len(spec, numbers)

    asked = req.max_model_len
    auto = asked is not None and (asked.value < 0 or (asked.raw or "").strip().lower() == "auto")
    max_model_len: Sourced[int]
    if asked is None or asked.value <= 0:
        max_model_len = Sourced(derived, here, default=True)
        defaulted.append(f"max_model_len {derived:,} (the model's)")
    else:
        max_model_len = asked

    has_mla = any(layer.kind is CacheKind.MLA for layer, _ in spec.layer_shapes)
    block_size = req.block_size or Sourced(
        D.vllm_block_size(has_mla, numbers, gpu), here, default=True
    )
    cache_dtype = req.kv_cache_dtype
    if cache_dtype is not None:
        cache_dtype = Sourced(str(cache_dtype.value).lower(), cache_dtype.span, cache_dtype.raw)
    elif spec.model_type in SPARSE_MLA_MODEL_TYPES:
        cache_dtype = Sourced("fp8_ds_mla", here, default=True)
        defaulted.append("kv_cache_dtype fp8_ds_mla (DeepSeek sparse attention's default)")
    else:
        cache_dtype = Sourced("auto", here, default=True)

    fraction = req.memory_fraction
    if fraction is None:
        fraction = Sourced(defaults.gpu_memory_utilization, here, default=True)
        defaulted.append(f"gpu_memory_utilization {fraction.value:g}")
    seqs = req.max_num_seqs
    if seqs is None:
        seqs = Sourced(defaults.max_num_seqs, here, default=True)
        defaulted.append(f"max_num_seqs {seqs.value}")
    batched = req.max_num_batched_tokens
    if batched is None:
        value = defaults.max_num_batched_tokens
        chunked = D.v0_chunked_prefill(
            max_model_len.value,
            cuda=gpu is None or gpu.vendor == "nvidia",
            multimodal=bool(spec.vision_param_count),
            mla=has_mla,
        )
        if v0 and not chunked:
            # V0 without chunked prefill: a batch holds a whole prompt.
            value = max(max_model_len.value, value)
        batched = Sourced(value, here, default=True)
        defaulted.append(f"max_num_batched_tokens {value}")

    hybrid = not switch(req.disable_hybrid_kv_cache_manager)
    off_by_default: str | None = None
    if hybrid and any(layer.kind is CacheKind.CHUNKED for layer, _ in spec.layer_shapes):
        # Chunked-local attention and the hybrid manager, by release (vllm/config/vllm.py;
        # defaults.vllm_chunked_local_hybrid says which releases turn it off by default).
        allow = req.extra(D.CHUNKED_LOCAL_ENV)
        if not D.vllm_chunked_local_hybrid(numbers, allow.value if allow else None):
            hybrid, off_by_default = False, "chunked"
            defaulted.append(
                f"hybrid KV cache off for chunked attention ({D.CHUNKED_LOCAL_ENV} unset or 0)"
            )
    if switch(req.disable_sliding_window):
        hybrid, off_by_default = False, None

    allow_long = req.allow_long_max_model_len
    env_long = req.extra("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
    if env_long is not None and env_long.value.strip().lower() in ("1", "true"):
        allow_long = Sourced(True, env_long.span, env_long.raw)

    eager = req.enforce_eager
    if eager is None and switch(req.extra("enforce-eager")):
        eager = Sourced(True, here)
    backend = req.extra("VLLM_ATTENTION_BACKEND") or _sourced_str(req.extra("attention-backend"))
    # `auto` is the model dtype (never the weight quantisation), or the --dtype a file sets;
    # from 0.14 a ModelOpt checkpoint's declared cache quantisation where it states one.
    stored = cache_dtype.value
    declared = D.vllm_checkpoint_cache_dtype(spec, numbers) if stored == "auto" else None
    if declared is not None:
        stored = declared
        defaulted.append(f"kv_cache_dtype auto: the checkpoint's {declared} cache (ModelOpt)")
    types, cache_note = storage(stored, computed_dtype(req.dtype, spec))
    recurrent = any(layer.state_elements for layer, _ in spec.layer_shapes)
    prefix = req.extra("enable-prefix-caching")
    if prefix is not None:
        prefix_caching = switch(prefix)
    else:
        # V1 caches prefixes by default; hybrids with a recurrent state only from 0.28.
        prefix_caching = not recurrent or numbers >= D.VLLM_HYBRID_PREFIX_CACHING_DEFAULT_SINCE
    spec_method, spec_tokens = _speculative(req)
    draft_name = _draft_model(req, spec_method, spec_tokens)
    mode = req.extra("mamba-cache-mode")
    mamba_cache_mode = D.vllm_mamba_cache_mode(
        numbers,
        prefix_caching,
        str(mode.value).strip().lower() if mode else None,
        spec.model_type,
    )
    conv_dtype = req.extra("mamba-cache-dtype")
    ssm_dtype = req.extra("mamba-ssm-cache-dtype")

    return VllmSettled(
        **given(
            FACTS,
            req,
            model,
            gpu,
            spec=spec,
            version=version,
            derived=derived,
            numbers=numbers,
            assumed=assumed,
        ),
        max_model_len=max_model_len,
        allow_long=allow_long,
        max_num_seqs=seqs,
        max_num_batched_tokens=batched,
        memory_fraction=fraction,
        kv_cache_memory_bytes=req.kv_cache_memory_bytes,
        cache_dtype=cache_dtype,
        cache_dtype_v=None,
        cache_types=types,
        tensor_parallel_size=parallel_size(req.tensor_parallel_size, here),
        pipeline_parallel_size=parallel_size(req.pipeline_parallel_size, here),
        data_parallel_size=parallel_size(req.data_parallel_size, here),
        block_size=block_size,
        enforce_eager=eager,
        cpu_offload_bytes=_cpu_offload(req),
        attention_backend=backend,
        hf_overrides=req.hf_overrides,
        pool_switches=_pool_switches(req),
        cache_note=cache_note,
        hybrid_kv_cache=hybrid,
        hybrid_off_by_default=off_by_default,
        auto_max_model_len=auto,
        num_gpu_blocks_override=req.num_gpu_blocks_override.value
        if req.num_gpu_blocks_override
        else None,
        v0_engine=v0,
        flashinfer_sampler=D.env_switch(req.extra(D.FLASHINFER_SAMPLER_ENV)),
        peer_links=D.peer_links(
            gpu,
            tp=parallel_size(req.tensor_parallel_size, here).value,
            pp=parallel_size(req.pipeline_parallel_size, here).value,
            nnodes=req.extra("nnodes"),
            p2p_disabled=D.env_switch(req.extra(D.P2P_DISABLE_ENV)),
        ),
        mm_image_limit=_image_limit(req),
        skip_mm_profiling=switch(req.extra("skip-mm-profiling")),
        language_model_only=switch(req.extra("language-model-only")),
        mm_max_pixels=_max_pixels(req),
        lora_rank=_lora_rank(req),
        max_loras=_whole(_value(req.extra("max-loras"))) or 1,
        defaulted=tuple(defaulted),
        decode_context_parallel=_dcp(req),
        prefix_caching=prefix_caching,
        mamba_cache_mode=mamba_cache_mode,
        speculative_tokens=spec_tokens,
        speculative_method=spec_method,
        draft_model=draft_name,
        draft=_draft_spec(req.draft_spec, spec_method) if draft_name is not None else None,
        mamba_cache_dtype=str(conv_dtype.value).strip().lower() if conv_dtype else "auto",
        mamba_ssm_cache_dtype=D.vllm_ssm_cache_dtype(
            spec.model_type, spec.ssm_state_dtype, str(ssm_dtype.value) if ssm_dtype else None
        ),
    )


def _speculative(req: Request) -> tuple[str | None, int]:
    """``--speculative-config`` (a JSON object, or the mapping a config file writes): the
    method and ``num_speculative_tokens``; ``--num-speculative-tokens`` of older releases."""
    value = req.extra("speculative-config")
    config: Any = value.value if value is not None else None
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            config = None
    method: str | None = None
    tokens: Any = None
    if isinstance(config, dict):
        method = str(config["method"]).strip().lower() if config.get("method") else None
        tokens = config.get("num_speculative_tokens")
    older = req.extra("num-speculative-tokens")
    if tokens is None and older is not None:
        tokens = older.value
    if isinstance(tokens, str) and tokens.strip().isdigit():
        tokens = int(tokens)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or not 0 < tokens <= 64:
        return method, 0
    return method, tokens


def _json_object(value: Sourced[Any] | None) -> dict[str, Any] | None:
    """A flag's JSON object (or the mapping a config file writes), None otherwise."""
    data: Any = value.value if value is not None else None
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return None
    return data if isinstance(data, dict) else None


def _whole(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= INT64_MAX:
        return None
    return value


def _image_limit(req: Request) -> int | None:
    """``--limit-mm-per-prompt``'s image count: a JSON object (``{"image": 0}``, or
    ``{"image": {"count": 2, ...}}`` from 0.11), or the older ``image=2,video=1``."""
    value = req.extra("limit-mm-per-prompt")
    if value is None:
        return None
    limits = _json_object(value)
    if limits is None and isinstance(value.value, str):
        pairs = (item.partition("=") for item in value.value.split(","))
        limits = {key.strip(): number.strip() for key, sep, number in pairs if sep}
    image = (limits or {}).get("image")
    if isinstance(image, dict):
        image = image.get("count")
    return _whole(image)


def _value(value: Sourced[Any] | None) -> Any:
    return value.value if value is not None else None


def _lora_rank(req: Request) -> int | None:
    """``--max-lora-rank`` (16 unless set) where ``--enable-lora`` is on, else None."""
    if not switch(req.extra("enable-lora")):
        return None
    return _whole(_value(req.extra("max-lora-rank"))) or MAX_LORA_RANK


def _max_pixels(req: Request) -> int | None:
    """``--mm-processor-kwargs``' ``max_pixels`` (Qwen2-VL's processor bound), if positive."""
    kwargs = _json_object(req.extra("mm-processor-kwargs"))
    number = _whole((kwargs or {}).get("max_pixels"))
    return number or None


# Methods that propose without a model of their own: the target's MTP layers (any *mtp name:
# mtp, deepseek_mtp, qwen3_next_mtp, ...), n-grams of the prompt, a suffix tree.
_NO_DRAFT_MODEL = ("ngram", "suffix", "ngram_gpu")


def _draft_model(req: Request, method: str | None, tokens: int) -> str | None:
    """The draft model a speculative config runs beside the target (``"model"`` of
    ``--speculative-config``, or ``--speculative-model`` of older releases), None when
    speculative decoding is off or its method needs none."""
    named = req.speculative_model
    if named is None or not tokens or not str(named.value).strip():
        return None
    if method is not None and (method.endswith("mtp") or method in _NO_DRAFT_MODEL):
        return None
    return str(named.value).strip()


def _draft_spec(draft: ModelSpec | None, method: str | None) -> ModelSpec | None:
    """The draft model as vLLM builds it for ``method`` (an EAGLE head's config is a plain
    decoder's: the method says it shares the target's embedding and head)."""
    if draft is None:
        return None
    facts = for_method(method, draft.drafter, draft.hidden_size, draft.vocab_size)
    return draft if facts is draft.drafter else replace(draft, drafter=facts)


def _dcp(req: Request) -> int:
    """``--decode-context-parallel-size`` (``-dcp``), 1 unless a positive whole number."""
    value = req.extra("decode-context-parallel-size")
    number = value.value if value is not None else 1
    if isinstance(number, str) and number.strip().isdigit():
        number = int(number)
    if not isinstance(number, int) or isinstance(number, bool) or not 0 < number <= 1024:
        return 1
    return number


def _cpu_offload(req: Request) -> Sourced[int] | None:
    """``--cpu-offload-gb``: GiB of weights per GPU kept in CPU memory (vllm/config/cache.py),
    in bytes; the flag table reads it as a number in args and config files alike."""
    value = req.extra("cpu-offload-gb")
    if value is None:
        return None
    number = value.value
    if (
        not isinstance(number, (int, float))
        or isinstance(number, bool)
        or not math.isfinite(number)
        # NaN, infinity, negatives and 400-digit ints are not an offload
        or not 0 < number <= INT64_MAX // GiB
    ):
        return None
    return Sourced(round(float(number) * GiB), value.span, value.raw)


def _sourced_str(value: Sourced[Any] | None) -> Sourced[str] | None:
    return None if value is None else Sourced(str(value.value), value.span, value.raw)


def _pool_switches(req: Request) -> tuple[PoolSwitch, ...]:
    """The settings that page windowed layers as full attention, for KV305's cause."""
    found = []
    for value, key, text in (
        (
            req.disable_hybrid_kv_cache_manager,
            "disable_hybrid_kv_cache_manager",
            "the hybrid KV cache manager is disabled",
        ),
        (req.disable_sliding_window, "disable_sliding_window", "the sliding window is disabled"),
    ):
        if value is not None and switch(value):
            found.append(PoolSwitch(key, value, text))
    return tuple(found)
