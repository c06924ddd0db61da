"""What ``mlx_lm.server`` holds in unified memory: the bundle's weights, then a cache per session.

mlx-lm allocates nothing up front: each session's cache grows as it is filled, in steps of
256 tokens (ml-explore/mlx-lm@d78bf58 ``mlx_lm/models/cache.py``: ``KVCache.step``,
``RotatingKVCache``, ``QuantizedKVCache``). A model with a ``make_cache`` of its own (Gemma 4,
``models/gemma4_text.py``) gives each sliding-window layer a ``RotatingKVCache(max_size=
sliding_window)`` and each global layer a ``KVCache``; other models get a ``KVCache`` per layer,
or a ``RotatingKVCache(max_kv_size, keep=4)`` when ``max_kv_size`` is set
(``make_prompt_cache``). A global layer with ``attention_k_eq_v`` hands ``values = keys`` to
``cache.update_and_fetch(keys, values)``, and the cache stores both: two tensors per token,
not one. A rotating cache fed a prompt chunk of S tokens holds ``max_size - 1 + S`` until the
first decoded token trims it back (``_update_concat``).

The memory an engine on a Mac may plan with is the GPU working set macOS lets Metal wire
(``recommendedMaxWorkingSetSize``; mlx_lm.server wires it at start), which ``sudo sysctl
iogpu.wired_limit_mb=N`` raises, less what other residents hold (``reserved_memory``). Past
it mlx-lm does not refuse: buffers stop being wired, the system pages, and Metal may fail a
command buffer (``kIOGPUCommandBufferCallbackErrorOutOfMemory``). Sessions are counted as
what fits beside the weights.
"""

from __future__ import annotations

from dataclasses import replace

from kvlint.arith.kv import KvSize
from kvlint.arith.weights import weight_breakdown
from kvlint.engines.common import ceil_div
from kvlint.engines.common import head_dims
from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import reserved_note
from kvlint.engines.common import without_storage
from kvlint.engines.mlx import defaults as D
from kvlint.engines.mlx.effective import MlxSettled
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheDtype
from kvlint.units import GiB


def own_cache_layout(spec: ModelSpec) -> bool:
    """Whether mlx-lm's model class makes its own caches (``make_cache``): the models with
    layers other than full attention (windows, chunks, states, shared KV) do; a model of full
    attention only takes ``make_prompt_cache``'s default, which ``max_kv_size`` bounds."""
    return any(
        layer.kind not in (CacheKind.FULL, CacheKind.FULL_KV_SHARED) for layer in spec.layers
    )


def _step(tokens: int) -> int:
    return ceil_div(tokens, D.CACHE_STEP) * D.CACHE_STEP


def layer_tokens(layer: LayerSpec, length: int, max_kv_size: int | None, own: bool) -> int:
    """Tokens one session's cache of ``layer`` holds at ``length`` (decoding)."""
    if layer.kind.bounded and layer.window:
        return min(_step(min(length, layer.window)), layer.window)
    if max_kv_size and not own:
        return min(_step(min(length, max_kv_size)), max_kv_size)
    return _step(length)


def token_bytes(layer: LayerSpec, dtype: CacheDtype) -> int:
    """K + V bytes one token costs in ``layer`` (K = V layers store V beside K)."""
    if layer.kind in (CacheKind.SHARED, CacheKind.NONE, CacheKind.STATE):
        return 0
    head_k, head_v = head_dims(layer)
    k = dtype.bytes_for(layer.kv_heads * head_k, layer.kv_heads)
    v = dtype.bytes_for(layer.kv_heads * head_v, layer.kv_heads) if head_v else 0
    return k + v


def session_bytes(
    spec: ModelSpec, length: int, dtype: CacheDtype, state: CacheDtype, max_kv_size: int | None
) -> int:
    """One session's cache at ``length`` tokens, every layer."""
    own = own_cache_layout(spec)
    total = 0
    for layer in spec.layers:
        if layer.kind is CacheKind.STATE:
            total += state.bytes_for(layer.state_elements)
            continue
        total += layer_tokens(layer, length, max_kv_size, own) * token_bytes(layer, dtype)
    return total


def prefill_surplus(spec: ModelSpec, length: int, step: int, dtype: CacheDtype) -> int:
    """What a session's rotating caches hold beyond their window while it prefills: a chunk
    of ``min(step, length)`` tokens on top of ``window - 1`` (``_update_concat``)."""
    total = 0
    for layer in spec.layers:
        if layer.kind.bounded and layer.window and length > layer.window:
            extra = min(step, length) - 1
            total += extra * token_bytes(layer, dtype)
    return total


def _bundle_bytes(s: MlxSettled) -> tuple[int, str]:
    """The bundle's weights as mlx-lm holds them: the language model only (``sanitize`` drops
    a vision or audio tower: models/gemma4.py), MLX quantisation with its group scales."""
    breakdown = weight_breakdown(s.spec, s.quantization.value if s.quantization else None)
    return breakdown.total - breakdown.vision, breakdown.method


def estimate(s: MlxSettled) -> EngineEstimate:
    """What mlx_lm.server holds for the settled deployment, and how many sessions fit."""
    spec, gpu = s.spec, s.gpu
    version = str(s.version.value)
    length = s.max_model_len.value
    notes = [f"mlx-lm {version}" + (" (newest known)" if s.version.default else "")]
    filled: list[tuple[str, object]] = []
    if s.version.default:
        filled.append(("engine_version", version))
    if s.max_model_len.default:
        filled.append(("max_model_len", length))
        whose = "the model's" if length == s.derived_max_model_len else "the plan's context"
        notes.append(f"no context limit in mlx_lm.server: sized at {whose} {length:,}")
    assert s.max_num_seqs is not None
    if s.max_num_seqs.default:
        filled.append(("max_num_seqs", s.max_num_seqs.value))
        notes.append(f"default --decode-concurrency {s.max_num_seqs.value}")
    base = EngineEstimate(
        engine="mlx", version=version, max_model_len=length, defaults=tuple(filled)
    )
    if s.cache_types is None:
        return without_storage(s, base)
    state = s.cache_types.state
    dtype = s.cache_types.k
    max_kv = s.max_kv_size.value if s.max_kv_size is not None else None
    own = own_cache_layout(spec)
    if max_kv and own:
        notes.append(
            f"max_kv_size {max_kv} is ignored: the model makes its own caches (make_cache)"
        )
    error: str | None = None
    refusal: Refusal | None = None
    if s.kv_bits is not None:
        rotating = any(layer.kind.bounded for layer in spec.layers) or (max_kv and not own)
        if rotating and length >= s.quantized_kv_start:
            # maybe_quantize_kv_cache calls to_quantized on every cache past the start offset.
            error = "RotatingKVCache Quantization NYI (kv_bits with a rotating cache)"
            refusal = Refusal.SETTING
        notes.append(
            f"kv_bits {s.kv_bits}: {dtype.bits_per_value:g} bits per value with the group "
            f"scales and biases, from token {s.quantized_kv_start:,}"
        )
    per_session = session_bytes(spec, length, dtype, state, max_kv)
    surplus = prefill_surplus(spec, length, s.prefill_step_size, dtype)
    weights, method = _bundle_bytes(s)
    notes.append(f"weights {weights / GiB:.2f} GiB ({method})")
    notes.append(f"one session at {length:,} tokens: {per_session / GiB:.2f} GiB of cache")
    if surplus:
        notes.append(
            f"a prefilling session's sliding caches hold {surplus / GiB:.2f} GiB more "
            f"(prefill step {s.prefill_step_size}) until its first token"
        )
    if s.prompt_cache_bytes is None:
        notes.append(
            f"no --prompt-cache-bytes: the prompt cache keeps up to {s.prompt_cache_size} "
            "finished sessions' caches beside the active ones, unbounded in bytes"
        )
    if gpu is None:
        return replace(
            base,
            weights_bytes=weights,
            needed_bytes_one_sequence=per_session,
            missing=("GPU type",),
            notes=tuple(notes),
            fits=False if error else None,
            error=error,
            refusal=refusal,
        )
    total = gpu.total_bytes
    if s.wired_limit is not None:
        wired = s.wired_limit.value
        notes.append(
            f"iogpu.wired_limit_mb {wired // D.WIRED_LIMIT_UNIT}: working set {wired / GiB:.2f} GiB"
        )
    else:
        wired = gpu.device_bytes
        if gpu.wired_limit_bytes is not None:
            notes.append(
                f"default GPU working set {wired / GiB:.2f} GiB of {total / GiB:.0f} GiB unified "
                "(iogpu.wired_limit_mb raises it)"
            )
    device = min(wired, total)
    reserved = reserved_bytes(s)
    held = reserved_note(s, "taken off the working set")
    if held is not None:
        notes.append(held)
    device -= reserved
    available = device - weights - surplus
    fits: bool | None = error is None
    if error is None and weights > device:
        fits, refusal = False, Refusal.WEIGHTS
        error = (
            f"the weights ({weights / GiB:.2f} GiB) exceed the {device / GiB:.2f} GiB GPU working "
            "set left to them: mlx-lm pages the model (slow) or Metal fails a command buffer "
            "(kIOGPUCommandBufferCallbackErrorOutOfMemory)"
        )
    elif error is None and available <= 0:
        fits, refusal = False, Refusal.NO_CACHE_MEMORY
        error = f"no working set left for a cache beside {weights / GiB:.2f} GiB of weights"
    elif error is None and per_session > available and not s.max_model_len.default:
        fits, refusal = False, Refusal.ONE_REQUEST
        error = (
            f"one session of {length:,} tokens needs {per_session / GiB:.2f} GiB of cache, more "
            f"than the {available / GiB:.2f} GiB left beside the weights"
        )
    sessions = max(0, available) // per_session if per_session else 0
    if per_session and fits and s.max_model_len.default and per_session > available:
        notes.append(f"a session past {available * length // per_session:,} tokens outgrows it")
    first = KvSize(spec, s.cache_types).tokens_fitting(max(0, available)) if available > 0 else 0
    return EngineEstimate(
        engine="mlx",
        version=version,
        max_model_len=length,
        gpu_total_bytes=total,
        # The share of unified memory left to the engine (working set less the residents).
        memory_fraction=round(device / total, 4),
        weights_bytes=weights,
        available_kv_bytes=available,
        bytes_per_token=per_session // max(1, length),
        block_size=D.CACHE_STEP,
        kv_cache_tokens=max(0, available) * length // per_session if per_session else None,
        # Not even one session of the model's length fits, yet the server runs shorter ones:
        # no concurrency to compare a cap with (a note says where sessions outgrow memory).
        max_concurrency=round(max(0, available) / per_session, 2) if sessions else None,
        admitted=sessions,
        fits=fits,
        needed_bytes_one_sequence=per_session,
        first_principles_tokens=first,
        error=error,
        refusal=refusal,
        defaults=tuple(filled),
        notes=tuple(notes),
    )
