"""llama.cpp's KV cache (``llama-server``): cells from ``-c``, slots from ``-np``, K and V types.

Mirrors ``src/llama-context.cpp`` (padding to 256, the split of ``n_ctx`` across slots),
``src/llama-kv-cache.cpp`` (bytes per layer: ``ggml_row_size(type, n_embd_gqa) x cells``),
``src/llama-kv-cache-iswa.cpp`` (the SWA cache size) and ``tools/server/server.cpp`` (``-np``
auto = 4 slots with a unified cache); ``research/engines.md`` section 3 quotes each. Ollama
runs the same code: ``kvlint.engines.ollama.accounting`` maps its variables onto this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace

from kvlint.arith.kv import KvSize
from kvlint.arith.weights import weight_breakdown
from kvlint.engines.common import ceil_div
from kvlint.engines.common import head_dims
from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import without_storage
from kvlint.engines.llamacpp import defaults as D
from kvlint.engines.llamacpp.effective import LlamaCppSettled
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.gpus import GpuSpec
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheDtype
from kvlint.storage import CacheTypes
from kvlint.units import GiB
from kvlint.units import MiB


def pad(value: int, to: int = D.LLAMACPP_PAD) -> int:
    """``GGML_PAD``: round up to a multiple of ``to``."""
    return ceil_div(value, to) * to


@dataclass(frozen=True)
class LlamaCppSettings:
    """The settings the cache depends on, with llama.cpp's defaults filled in."""

    n_ctx: int  # -c after padding (all slots)
    n_ctx_seq: int  # what one slot may use
    n_parallel: int  # -np
    unified: bool
    type_k: CacheDtype
    type_v: CacheDtype
    swa_full: bool
    flash_attention: str  # on, off, auto
    n_ubatch: int
    defaulted: tuple[str, ...]
    ctx_defaulted: bool = False  # -c not given: llama_params_fit may lower it


def with_context(s: LlamaCppSettings, n_ctx: int) -> LlamaCppSettings:
    """``s`` with another total context, padded and split across slots as llama.cpp does."""
    n_ctx = pad(n_ctx)
    if s.unified:
        return replace(s, n_ctx=n_ctx, n_ctx_seq=n_ctx)
    seq = pad(n_ctx // s.n_parallel)
    return replace(s, n_ctx=seq * s.n_parallel, n_ctx_seq=seq)


def settings_for(
    spec: ModelSpec,
    *,
    n_ctx: int | None,
    n_parallel: int | None,
    unified: bool | None,
    types: CacheTypes,
    swa_full: bool,
    flash_attention: str | None,
    n_ubatch: int | None = None,
    old_build: bool = False,
) -> LlamaCppSettings:
    """Resolve llama-server's settings as ``llama_context`` does."""
    defaulted: list[str] = []
    train = spec.max_position_embeddings or D.LLAMACPP_DEFAULT_CTX_OLD
    ctx_defaulted = not n_ctx
    if not n_ctx:
        n_ctx = D.LLAMACPP_DEFAULT_CTX_OLD if old_build else train
        defaulted.append(f"-c {n_ctx} ({'the old default' if old_build else 'the model'})")
    auto = n_parallel is None or n_parallel < 0
    if auto:
        n_parallel = D.LLAMACPP_AUTO_PARALLEL
        defaulted.append("-np auto: 4 slots, unified KV")
    assert n_parallel is not None
    if unified is None:
        unified = auto
    n_ctx = pad(n_ctx)
    if unified:
        n_ctx_seq = n_ctx
    else:
        n_ctx_seq = pad(n_ctx // n_parallel)
        n_ctx = n_ctx_seq * n_parallel
    return LlamaCppSettings(
        n_ctx=n_ctx,
        n_ctx_seq=n_ctx_seq,
        n_parallel=n_parallel,
        unified=unified,
        type_k=types.k,
        type_v=types.v,
        swa_full=swa_full,
        flash_attention=(flash_attention or "auto").lower(),
        n_ubatch=n_ubatch or D.LLAMACPP_UBATCH,
        defaulted=tuple(defaulted),
        ctx_defaulted=ctx_defaulted,
    )


def layer_cells(layer: LayerSpec, s: LlamaCppSettings) -> int:
    """Cells the layer's cache holds: ``n_ctx``, or the SWA size for windowed layers."""
    if layer.kind.bounded and layer.window and not s.swa_full:
        seqs = s.n_parallel if s.unified else 1
        return min(s.n_ctx, pad(min(s.n_ctx, layer.window * seqs + s.n_ubatch)))
    return s.n_ctx


def layer_bytes(layer: LayerSpec, s: LlamaCppSettings) -> tuple[int, int]:
    """(K bytes, V bytes) of one layer: ``ggml_row_size(type, n_embd_gqa) x cells``.

    Recurrent (Mamba / linear-attention) layers keep one f32 state per slot instead.
    """
    if layer.kind in (CacheKind.SHARED, CacheKind.NONE):
        return 0, 0
    if layer.kind is CacheKind.STATE:
        return 4 * layer.state_elements * s.n_parallel, 0
    cells = layer_cells(layer, s)
    head_k, head_v = head_dims(layer)
    k = s.type_k.bytes_for(layer.kv_heads * head_k, layer.kv_heads) * cells
    if layer.kind is CacheKind.MLA:
        head_v = 0  # the latent serves as K and V (current builds; older ones stored full K/V)
    v = s.type_v.bytes_for(layer.kv_heads * head_v, layer.kv_heads if head_v else 0) * cells
    return k, v


def kv_buffer(spec: ModelSpec, s: LlamaCppSettings) -> tuple[int, int]:
    """(K, V) bytes of the whole cache, all devices."""
    k = v = 0
    for layer in spec.layers:
        lk, lv = layer_bytes(layer, s)
        k += lk
        v += lv
    return k, v


def fit_context(
    spec: ModelSpec, s: LlamaCppSettings, budget: int, devices: int
) -> LlamaCppSettings | None:
    """``llama_params_fit``: the largest context (a multiple of 256, at least ``--fit-ctx``
    4096) whose cache fits ``budget`` bytes per device; None when not even that fits."""
    lo, hi = D.LLAMACPP_FIT_MIN_CTX // D.LLAMACPP_PAD, s.n_ctx // D.LLAMACPP_PAD
    if sum(kv_buffer(spec, with_context(s, lo * D.LLAMACPP_PAD))) // devices > budget:
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(kv_buffer(spec, with_context(s, mid * D.LLAMACPP_PAD))) // devices <= budget:
            lo = mid
        else:
            hi = mid - 1
    return with_context(s, lo * D.LLAMACPP_PAD)


def estimate_with(
    spec: ModelSpec,
    s: LlamaCppSettings,
    gpu: GpuSpec | None,
    *,
    engine: str,
    version: str,
    gpu_count: int,
    quantization: str | None,
    notes: list[str],
    auto_fit: bool = True,
    layers_pinned: bool = False,
    defaults: tuple[tuple[str, object], ...] = (),
    reserved: int = 0,
) -> EngineEstimate:
    """The cache llama.cpp allocates, and whether it fits beside the weights on ``gpu``.

    ``auto_fit``: ``llama_params_fit`` (``--fit``, on by default since llama.cpp PR #16653,
    Dec 2025) first lowers a context the user did not set, down to ``--fit-ctx`` 4096, keeping a
    1 GiB margin per device, then moves weights to system memory unless ``-ngl`` is pinned
    (``layers_pinned``): the server starts, slower. Without it, a cache that does not fit
    fails to allocate.
    """
    notes = [*notes, *(f"default {d}" for d in s.defaulted)]
    error: str | None = None
    refusal: Refusal | None = None
    if s.type_v.quantised and s.flash_attention == "off":
        error = "quantized V cache requires flash_attn to be enabled"
        refusal = Refusal.SETTING
    elif s.type_v.quantised and s.flash_attention == "auto":
        notes.append("enabling flash_attn since it is required for quantized V cache")
    weights = weight_breakdown(spec, quantization).total
    devices = max(1, gpu_count)
    available: int | None = None
    fits: bool | None = None if error is None else False
    if gpu is not None:
        device = gpu.total_bytes
        if gpu.wired_limit_bytes is not None:
            # Metal reports recommendedMaxWorkingSetSize (kvlint.gpus: measured where a log
            # gives it, else 3/4 of unified memory) as the device's memory (ggml-metal).
            device = gpu.device_bytes
            notes.append(
                f"Metal working set: {device / GiB:.2f} of {gpu.total_bytes / GiB:.0f} GiB unified"
            )
        if reserved:
            device -= reserved
            notes.append(
                f"reserved_memory {reserved / GiB:.2f} GiB held by other residents: "
                "taken off the device's free memory"
            )
        available = device - weights // devices
        budget = available - D.LLAMACPP_FIT_MARGIN
        needed = sum(kv_buffer(spec, s)) // devices
        if error is None and needed <= budget:
            fits = True
        elif error is None and auto_fit and s.ctx_defaulted:
            fitted = fit_context(spec, s, budget, devices)
            if fitted is not None:
                notes.append(
                    f"llama_params_fit: context size reduced from {s.n_ctx} to {fitted.n_ctx}"
                )
                s = fitted
            else:
                s = with_context(s, D.LLAMACPP_FIT_MIN_CTX)
                notes.append(
                    f"llama_params_fit: context size reduced from the model's to {s.n_ctx}, "
                    "and weights move to system memory (slower)"
                )
            fits = True
        elif error is None and auto_fit and not layers_pinned:
            fits = True
            notes.append(
                "llama_params_fit keeps -c and moves weights to system memory (slower): "
                f"{needed / MiB:.0f} MiB of cache per device beside "
                f"{weights / devices / MiB:.0f} MiB of weights on a "
                f"{gpu.total_bytes / MiB:.0f} MiB {gpu.display}"
            )
        elif error is None:
            fits = False
            refusal = Refusal.CACHE_ALLOCATION
            error = (
                f"failed to allocate the KV buffer: {needed / MiB:.2f} MiB per device beside "
                f"{weights / devices / MiB:.0f} MiB of weights on a "
                f"{gpu.total_bytes / MiB:.0f} MiB {gpu.display}"
            )
    k, v = kv_buffer(spec, s)
    total_kv = k + v
    notes.append(
        f"KV buffer size = {total_kv / MiB:.2f} MiB (K ({s.type_k.name}): {k / MiB:.2f} MiB, "
        f"V ({s.type_v.name}): {v / MiB:.2f} MiB), {s.n_ctx} cells"
    )
    train = spec.max_position_embeddings
    if train and s.n_ctx_seq > train:
        notes.append(
            f"the slot context ({s.n_ctx_seq}) exceeds the training context of the model "
            f"({train}) - capping"
        )
    per_token = total_kv // max(1, s.n_ctx)
    first_principles = (
        KvSize(spec, CacheTypes(s.type_k, s.type_v, s.type_k)).tokens_fitting(total_kv)
        if total_kv
        else None
    )
    return EngineEstimate(
        engine=engine,
        version=version,
        max_model_len=s.n_ctx_seq,
        gpu_total_bytes=gpu.total_bytes if gpu is not None else None,
        weights_bytes=weights // devices,
        available_kv_bytes=available,
        bytes_per_token=per_token,
        block_size=1,
        kv_cache_tokens=s.n_ctx,
        max_concurrency=round(s.n_ctx / s.n_ctx_seq, 2) if s.n_ctx_seq else None,
        fits=fits,
        needed_bytes_one_sequence=per_token * s.n_ctx_seq,
        first_principles_tokens=first_principles,
        error=error,
        refusal=refusal,
        kv_buffer_bytes=total_kv,
        notes=tuple(notes),
        defaults=tuple(
            (name, s.n_ctx if name == "max_model_len" and s.ctx_defaulted else value)
            for name, value in defaults
        ),
    )


def estimate(s: LlamaCppSettled) -> EngineEstimate:
    """What ``llama-server`` allocates for the settled deployment."""
    spec = s.spec
    version = str(s.version.value)
    if s.cache_types is None:
        base = EngineEstimate(
            engine="llamacpp", version=version, max_model_len=s.max_model_len.value
        )
        return without_storage(s, base)
    cells = settings_for(
        spec,
        n_ctx=s.ctx_size,
        n_parallel=s.parallel,
        unified=s.unified,
        types=s.cache_types,
        swa_full=s.swa_full,
        flash_attention=s.flash_attention.value if s.flash_attention is not None else None,
    )
    notes = [f"llama.cpp {version}" + ("" if not s.version.default else " (newest known)")]
    filled: list[tuple[str, object]] = []
    if s.version.default:
        filled.append(("engine_version", version))
    if not s.ctx_size:
        filled.append(("max_model_len", cells.n_ctx))
    if s.parallel is None or s.parallel < 0:
        filled.append(("max_num_seqs", cells.n_parallel))
    if s.cache_dtype.default:
        filled.append(("kv_cache_dtype", "f16"))
    return estimate_with(
        spec,
        cells,
        s.gpu,
        engine="llamacpp",
        version=version,
        gpu_count=s.gpu_count.value if s.gpu_count is not None and s.gpu_count.value > 0 else 1,
        quantization=s.quantization.value if s.quantization is not None else None,
        notes=notes,
        auto_fit=s.auto_fit,
        layers_pinned=s.layers_pinned,
        defaults=tuple(filled),
        reserved=reserved_bytes(s),
    )
