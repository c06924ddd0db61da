"""The figures a plan states, each matched against every way to compute it (KV101, KV102, KV201).

One classification for the three rules, so a stated figure gets exactly one finding: the
cancelled formula (KV101), the weights' precision taken for the cache's (KV201), or no correct
computation at all (KV102).
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from kvlint.arith.dtypes import cache_dtype
from kvlint.arith.kv import KvSize
from kvlint.arith.kv import layer_token_bytes
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.sizing import Sizing
from kvlint.storage import CacheDtype
from kvlint.storage import CacheTypes
from kvlint.storage import is_weight_format as is_weight_format

# Weight formats by the bits a weight takes. None of them is a cache dtype in any engine.
_WEIGHT_BITS = (
    (re.compile(r"awq|gptq|marlin|int4|w4a|nf4|fp4|4bit|4-bit|bnb|bitsandbytes|q4_k|iq4_xs"), 4),
    (re.compile(r"q5_k"), 5),
    (re.compile(r"q6_k"), 6),
    (re.compile(r"fp8|int8|w8a|8bit|8-bit|eetq|q8_0"), 8),
)


@lru_cache(maxsize=1024)
def _named_bits(text: str) -> tuple[float, str] | None:
    """The nominal bits and name of the first weight format ``text`` names (remembered: a
    repository names a few models and methods many times)."""
    lowered = text.lower()
    for pattern, bits in _WEIGHT_BITS:
        found = pattern.search(lowered)
        if found:
            # The format's nominal bits: a plan that took Q4_K_M (4.85 bits a weight) for its
            # cache wrote 4 bits, not 4.85.
            return float(bits), found.group(0).upper()
    return None


class Kind(enum.Enum):
    CORRECT = "correct"
    CANCELLED = "cancelled"  # 2 x layers x d_model x bytes (KV101)
    WEIGHT_QUANT = "weight-quant"  # the cache at the weights' precision (KV201)
    MISMATCH = "mismatch"  # no correct computation (KV102)


class Verdict(NamedTuple):
    """One stated figure and what it matched."""

    claim: str  # kv_per_token, kv_per_sequence, kv_pool_tokens, gpus_needed
    stated: Sourced[int]
    kind: Kind
    correct: int  # the right figure at the deployment's cache dtype
    matched: int  # the figure the stated one equals (the correct one for MISMATCH)
    dtype: str  # the cache dtype behind ``matched``
    context: int | None = None  # tokens per sequence, for per-sequence figures and GPU counts


def weight_bits(dep: Deployment, sizing: Sizing) -> tuple[float, str] | None:
    """The weights' bits per value and the format's name (AWQ, FP8, Q4_K ...), when quantised.

    The bits and name come from the first weight format found in the method, the engine's
    `quantization` or the model id (a compressed-tensors checkpoint is better named by its `FP8`
    id than by its method), else from the checkpoint's quantization_config.
    """
    spec, settled = sizing.spec, sizing.settled
    quant = spec.quantization if spec is not None else None
    names = [quant.method] if quant is not None else []
    if settled is not None and settled.quantization is not None:
        names.append(str(settled.quantization.value))
    if dep.model is not None:
        names.append(str(dep.model.value))
    for text in names:
        named = _named_bits(text)
        if named is not None:
            return named
    if quant is not None and quant.weight_bits:
        return quant.weight_bits, quant.method.upper()
    return None


def weight_label(weights: tuple[float, str]) -> str:
    """'AWQ 4-bit', 'FP8', 'INT4': the bits only when the format's name does not carry them."""
    bits, label = weights
    return label if f"{bits:g}" in label else f"{label} {bits:g}-bit"


def bits_dtype(bits: float, label: str) -> CacheDtype:
    """A storage type of ``bits`` per value (4 bits: two values a byte)."""
    values = 8 if bits < 8 else 1
    return CacheDtype(label, values, round(bits * values / 8), quantised=bits < 16)


def claimed_dtype(dep: Deployment, spec: ModelSpec) -> CacheDtype | None:
    """The cache dtype a plan assumed, as a storage type (a weight format by its bits)."""
    claim = dep.claims.kv_cache_dtype
    if claim is None:
        return None
    text = str(claim.value)
    if is_weight_format(text):
        for pattern, bits in _WEIGHT_BITS:
            if pattern.search(text.lower()):
                return bits_dtype(bits, text)
        return None
    try:
        return cache_dtype(text, spec.dtype)
    except ValueError:
        return None


def at(kv: KvSize, dtype: CacheDtype) -> KvSize:
    return KvSize(kv.spec, CacheTypes(k=dtype, v=dtype, state=kv.types.state))


def token_bytes(kv: KvSize) -> int:
    """One token in every layer that caches it, windowed or not: the figure a calculator
    gives, and the growing figure too on a dense model."""
    return sum(
        layer_token_bytes(layer, kv.types)
        for layer in kv.spec.layers
        if layer.kind not in (CacheKind.SHARED, CacheKind.STATE)
    )


def per_token(kv: KvSize) -> int:
    """The per-token figure to quote: the growing layers', or every layer's when none grows
    (Mistral 7B v0.1: all 32 windowed)."""
    return kv.per_token_bytes or token_bytes(kv)


def token_figures(kv: KvSize) -> list[int]:
    """Every per-token figure a plan may rightly state: growing layers only, or every layer."""
    return sorted({f for f in (kv.per_token_bytes, token_bytes(kv)) if f}, reverse=False)


def _near(stated: float, figure: float, tolerance: float) -> bool:
    return figure > 0 and abs(stated - figure) <= tolerance * figure


def contexts(context: int) -> tuple[int, ...]:
    """A context and its other reading: '32k' may mean 32,000 or 32,768 tokens."""
    # A round thousand is read as decimal k first (128,000 is "128k", not 125 x 1024).
    if context % 1000 == 0:
        return (context, context // 1000 * 1024)
    if context % 1024 == 0:
        return (context, context // 1024 * 1000)
    return (context,)


def _written(value: Sourced[int] | None) -> int | None:
    return value.value if value is not None and not value.default else None


def plan_context(dep: Deployment, sizing: Sizing) -> int | None:
    """The context a plan's per-sequence figures are at: its claim, else max_model_len."""
    for value in (
        dep.claims.context.value if dep.claims.context else None,
        _written(sizing.settled.max_model_len if sizing.settled else None),  # -1: vLLM's auto
        sizing.engine.max_model_len if sizing.engine else None,
    ):
        if isinstance(value, int) and value > 0:
            return value
    return None


def verdicts(
    dep: Deployment, sizing: Sizing, tolerance: float = 0.05, pool_tolerance: float = 0.15
) -> Iterator[Verdict]:
    """Every stated figure of the plan, classified."""
    kv = sizing.kv
    if kv is None or sizing.spec is None:
        return
    actual = kv.types.k
    weights = weight_bits(dep, sizing)
    claimed = claimed_dtype(dep, sizing.spec)
    cancel_at = [actual] + ([claimed] if claimed is not None else [])
    quant: list[CacheDtype] = []
    if weights is not None and weights[0] < 16 and not actual.quantised:
        quant.append(bits_dtype(weights[0], weight_label(weights)))
        cancel_at.append(quant[0])
    if claimed is not None and claimed.quantised and not actual.quantised and weights is not None:
        quant.append(claimed)
    # Figures that hold at the plan's own stated cache dtype answer to that claim (reported
    # once, on the dtype), not each on its own.
    consistent = [claimed] if claimed is not None and claimed != actual else []

    stated_token = dep.claims.kv_per_token
    if stated_token is not None:
        yield _classify(
            "kv_per_token",
            stated_token,
            [(per_token(kv), actual.name)] + [(f, actual.name) for f in token_figures(kv)],
            [(at(kv, d).cancelled_per_token_bytes, d.name) for d in cancel_at],
            [(f, d.name) for d in consistent for f in token_figures(at(kv, d))],
            [(f, d.name) for d in quant for f in token_figures(at(kv, d))],
            tolerance,
        )
    per_seq = dep.claims.kv_per_sequence
    context = plan_context(dep, sizing)
    if per_seq is not None and context:
        readings = contexts(context)
        verdict = _classify(
            "kv_per_sequence",
            per_seq,
            [(kv.per_sequence_bytes(c), actual.name) for c in readings],
            [
                (at(kv, d).cancelled_per_token_bytes * c, d.name)
                for d in cancel_at
                for c in readings
            ],
            [(at(kv, d).per_sequence_bytes(c), d.name) for d in consistent for c in readings],
            [(at(kv, d).per_sequence_bytes(c), d.name) for d in quant for c in readings],
            tolerance,
        )
        yield verdict._replace(context=context)
    pool = dep.claims.kv_pool_tokens
    engine = sizing.engine
    if pool is not None and engine is not None and engine.kv_cache_tokens and per_token(kv):
        tokens = [t for t in (engine.kv_cache_tokens, engine.first_principles_tokens) if t]
        scale = per_token(kv)
        yield _classify(
            "kv_pool_tokens",
            pool,
            [(t, actual.name) for t in tokens],
            [
                (t * scale // at(kv, d).cancelled_per_token_bytes, d.name)
                for d in cancel_at
                for t in tokens
            ],
            [(t * scale // per_token(at(kv, d)), d.name) for d in consistent for t in tokens],
            [(t * scale // per_token(at(kv, d)), d.name) for d in quant for t in tokens],
            pool_tolerance,
        )
    gpus = dep.claims.gpus_needed
    if gpus is not None:
        right = gpus_needed(dep, sizing, kv.per_sequence_bytes)
        wrong = gpus_needed(dep, sizing, lambda tokens: kv.cancelled_per_token_bytes * tokens)
        if right is not None and wrong is not None and wrong != right and gpus.value == wrong:
            yield Verdict("gpus_needed", gpus, Kind.CANCELLED, right, wrong, actual.name, context)
        # Fewer GPUs than even their whole memory needs is wrong whatever overheads the plan
        # assumed; more is a margin, not a mistake (unless it is the cancelled count above).
        floor = gpus_needed(dep, sizing, kv.per_sequence_bytes, fraction=1.0)
        if right is not None and floor is not None and gpus.value < floor:
            yield Verdict("gpus_needed", gpus, Kind.MISMATCH, right, floor, actual.name, context)


def _classify(
    claim: str,
    stated: Sourced[int],
    correct: list[tuple[int, str]],
    cancelled: list[tuple[int, str]],
    consistent: list[tuple[int, str]],
    quant: list[tuple[int, str]],
    tolerance: float,
) -> Verdict:
    value = stated.value
    right = correct[0][0]
    for figure, dtype in correct + consistent:
        if _near(value, figure, tolerance):
            return Verdict(claim, stated, Kind.CORRECT, right, figure, dtype)
    for figure, dtype in cancelled:
        if _near(value, figure, tolerance):
            return Verdict(claim, stated, Kind.CANCELLED, right, figure, dtype)
    for figure, dtype in quant:
        if _near(value, figure, tolerance):
            return Verdict(claim, stated, Kind.WEIGHT_QUANT, right, figure, dtype)
    return Verdict(claim, stated, Kind.MISMATCH, right, right, correct[0][1])


def gpus_needed(
    dep: Deployment,
    sizing: Sizing,
    per_sequence: Callable[[int], int],
    fraction: float | None = None,
) -> int | None:
    """GPUs that hold the weights plus the plan's concurrency at its context, a sequence of
    ``n`` tokens costing ``per_sequence(n)``, each GPU filled to the engine's memory fraction."""
    engine, gpu = sizing.engine, sizing.gpu
    settled = sizing.settled
    users = dep.claims.concurrency or (
        settled.max_num_seqs
        if settled is not None and settled.max_num_seqs and not settled.max_num_seqs.default
        else None
    )
    context = plan_context(dep, sizing)
    if engine is None or gpu is None or users is None or not context:
        return None
    weights = sizing.spec.weight_bytes if sizing.spec is not None else None
    if weights is None and engine.weights_bytes is not None and settled is not None:
        weights = engine.weights_bytes * settled.model_gpus
    if weights is None:
        return None
    # llama.cpp and Ollama have no memory fraction: they plan with the whole of the GPU.
    usable = gpu.total_bytes * (fraction or engine.memory_fraction or 1.0)
    return math.ceil((weights + users.value * per_sequence(context)) / usable)
