"""Message helpers shared by the KV1xx-KV4xx rules: sizes, setting names, edits, in one place."""

from __future__ import annotations

import re
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Fix
from kvlint.model.spec import ModelSpec
from kvlint.settled import Settled
from kvlint.sizing import Sizing
from kvlint.units import format_bytes
from kvlint.units import format_decimal
from kvlint.versions import parse_version

from . import _stated


def _scaled(n: float, base: int) -> float:
    value = abs(float(n))
    while value >= base:
        value /= base
    return value


def gb(n: float) -> str:
    """Decimal units: only for a figure a file states in them ('5.37 GB', see ``like``); every
    figure kvlint computes is binary (``gib``)."""
    return format_decimal(n, 2 if _scaled(n, 1000) < 10 else 1)


def gib(n: float) -> str:
    """Binary units, as the engines' logs print memory: '320 KiB', '2.5 MiB', '28.5 GiB'."""
    return format_bytes(n)


def gib2(n: float) -> str:
    """GiB with two decimals, exactly as vLLM's ``format_gib`` prints memory in its errors."""
    return f"{n / 1024**3:.2f} GiB"


def like(raw: str | None, n: float) -> str:
    """``n`` bytes written in the unit system of ``raw`` (the figure as the user wrote it)."""
    text = raw or ""
    if "ib" in text.lower():
        return gib(n)
    if re.search(r"[kKMGT][bB]?\s*$", text):
        return gb(n)
    return str(round(n))


def count(n: int) -> str:
    return f"{n:,}"


def ratio(a: float, b: float) -> str:
    """'8x', '1.5x': how many times ``a`` is ``b``."""
    r = a / b
    return f"{r:.0f}x" if abs(r - round(r)) < 0.05 else f"{r:.1f}x"


def settled(sizing: Sizing) -> Settled:
    """What the engine runs with (the linter runs model rules only on a settled deployment)."""
    assert sizing.settled is not None, "a rule that needs the model ran without a settled one"
    return sizing.settled


def name(sizing: Sizing, field: str) -> str:
    """The setting's name as the deployment's engine spells it, in backticks."""
    facts = sizing.facts
    return f"`{facts.spelling(field) if facts is not None else field}`"


def engine_name(sizing: Sizing) -> str:
    return sizing.facts.display if sizing.facts is not None else "the engine"


def release(sizing: Sizing, dep: Deployment) -> tuple[int, ...] | None:
    """The engine release the deployment runs: the settled one (the newest kvlint models when
    the file names none), or the file's own when nothing is settled (the model unknown)."""
    if sizing.settled is not None:
        return sizing.settled.version_numbers
    return parse_version(str(dep.engine_version.value)) if dep.engine_version else None


def model_name(spec: ModelSpec) -> str:
    """The model as a message names it: the repository name without its organisation."""
    return spec.name.rsplit("/", 1)[-1]


def explicit(value: Sourced[Any] | None) -> bool:
    """True when a file states the value (not an engine default filled in by kvlint)."""
    return value is not None and not value.default


def fix(title: str, target: Sourced[Any] | None = None, replacement: str | None = None) -> Fix:
    """A behaviour-changing fix; with one edit when the value to change is written in a file."""
    edits: tuple[Edit, ...] = ()
    if target is not None and replacement is not None and explicit(target):
        edits = (Edit(target.span, replacement),)
    return Fix(title, edits, Applicability.UNSAFE)


def safe_fix(title: str, target: Sourced[Any], replacement: str) -> Fix:
    """A fix that corrects a stated figure and changes nothing the deployment does."""
    return Fix(title, (Edit(target.span, replacement),), Applicability.SAFE)


def truthy(value: Sourced[Any] | None) -> bool | None:
    """A switch as engines read it: true / on / 1 / yes; None when not set."""
    if value is None:
        return None
    if isinstance(value.value, bool):
        return value.value
    return str(value.value).strip().lower() in ("1", "true", "on", "yes", "enabled")


def shape(spec: ModelSpec) -> str:
    """The layers behind a per-token figure: '80 layers x 8 KV heads x head_dim 128'."""
    growing = [layer for layer in spec.layers if layer.kind.grows]
    if len(growing) == len(spec.layers) and len({(g.kv_heads, g.head_dim_k) for g in growing}) == 1:
        first = growing[0]
        return f"{len(growing)} layers x {first.kv_heads} KV heads x head_dim {first.head_dim_k}"
    bounded = [layer for layer in spec.layers if layer.kind.bounded]
    if not growing and bounded:
        return f"{len(bounded)} layers, each windowed at {max(b.window or 0 for b in bounded)}"
    return f"{len(growing)} of {len(spec.layers)} layers growing with context"


def percent_off(stated: float, correct: float) -> str:
    """'25% more' / '20% less' / '3.1x the computed': the stated figure against the correct one."""
    if correct <= 0:
        return "not zero"
    diff = (stated - correct) / correct
    if diff >= 1:
        return f"{ratio(stated, correct)} the computed"
    return f"{abs(diff):.0%} {'more' if diff > 0 else 'less'}"


def cache_8bit(sizing: Sizing) -> str:
    """The engine's own spelling of an 8-bit cache: what a fix sets."""
    return sizing.facts.cache_8bit if sizing.facts is not None else "fp8"


def cache_setting(sizing: Sizing) -> str:
    """The cache dtype as the deployment sets it, or the engine's default spelling."""
    return str(settled(sizing).cache_dtype.value)


def pool_bytes(sizing: Sizing) -> int | None:
    """The KV pool of one model copy, the one figure every rule quotes: the engine's memory
    for the cache on each GPU of the copy (tensor x pipeline parallel), or the cells an engine
    allocates up front (llama.cpp's ``-c``) at the model's bytes per token."""
    engine, kv = sizing.engine, sizing.kv
    if engine is None or sizing.settled is None:
        return None
    if sizing.settled.facts.pool_is_cells:
        if not engine.kv_cache_tokens or kv is None:
            return None
        return engine.kv_cache_tokens * _stated.per_token(kv)
    if engine.available_kv_bytes is None:
        return None
    return engine.available_kv_bytes * sizing.settled.model_gpus


def pool_text(sizing: Sizing, pool: int | None = None, tokens: int | None = None) -> str:
    """'40 GiB (327,680 tokens)' on one GPU, '144 GiB (36 GiB per GPU x 4, 471,856 tokens)' on
    several: the pool as every rule quotes it."""
    pool = pool if pool is not None else pool_bytes(sizing) or 0
    engine, gpus = sizing.engine, settled(sizing).model_gpus
    details = []
    per_gpu = engine.available_kv_bytes if engine is not None else None
    if gpus > 1 and per_gpu and not settled(sizing).facts.pool_is_cells and pool == per_gpu * gpus:
        details.append(f"{gib(per_gpu)} per GPU x {gpus}")
    if tokens:
        details.append(f"{count(tokens)} tokens")
    return f"{gib(pool)} ({', '.join(details)})" if details else gib(pool)


def band(engine: Any) -> str | None:
    """``38.00-43.50 GiB``: the 90% band on the available KV memory per GPU, as vLLM prints
    memory (two decimals), or None without a band (or with one wholly at zero)."""
    low, high = engine.available_kv_bytes_low, engine.available_kv_bytes_high
    if low is None or high is None or high <= 0:
        return None  # no band, or none of it leaves memory for the cache: nothing to quote
    return f"{low / 1024**3:.2f}-{high / 1024**3:.2f} GiB"


def may_refuse(sizing: Sizing) -> str:
    """``vLLM may refuse to start``: a borderline verdict, as a finding says it."""
    return f"{engine_name(sizing)} may refuse to start"
