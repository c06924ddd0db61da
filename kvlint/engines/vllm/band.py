"""The uncertainty band on vLLM's available KV memory, from cross-validated residuals.

``benchmarks/fidelity.py`` predicts every real start-up log of the calibration corpora with the
memory model's constants fitted without the log's source, and keeps the residual
``(logged - predicted) / budget`` (the budget is ``total x gpu_memory_utilization``). Per
regime (release line x model class x tensor parallelism) the 5th and 95th percentiles of those
residuals bound a 90% band; ``fitted.py`` holds them (``--write-band`` regenerates it). Each
source weighs the same (its cases share one weight): a sweep of forty runs is one setup, and
its residuals move together. A regime with residuals from fewer than ``MIN_SOURCES`` sources
borrows the band of the next coarser one: the release line and TP, then the line, then every
case (``*``, the one pool that spans release lines, named as such).

A band is one release line's: a file that names no version is sized on several lines, and each
line's figures keep their own band (kvlint.estimate.across_versions says where the lines'
verdicts differ, apart from the band).

The pool and concurrency bands follow from the memory band through vLLM's own paging, so they
are as wide as the memory band makes them and no wider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kvlint.engines.vllm.effective import VllmSettled
from kvlint.engines.vllm.memory import memory_line
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec

LEVEL = 0.90  # the band's nominal coverage
# The lowest coverage the band may have and still be quoted as a 90% band (the calibration the
# benchmark reports: 85-95% of the held-out cases inside their band).
FLOOR = 0.85


def _min_sources(floor: float) -> int:
    """The fewest sources whose band a new source falls inside often enough: below 19 sources
    the split-conformal band is the whole range of their residuals, which holds a new
    exchangeable source with probability n / (n + 1); below ``floor`` that is no 90% band."""
    n = 1
    while n / (n + 1) < floor:
        n += 1
    return n


MIN_SOURCES = _min_sources(FLOOR)  # 6: fewer sources and a regime borrows a coarser one's band


class Band(NamedTuple):
    """A residual interval, as shares of the budget, and what it was built from."""

    low: float  # the 5th percentile of (logged - predicted) / budget (negative: less memory)
    high: float  # the 95th percentile
    regime: str  # the key it came from: "v1-0.11/dense/tp1", "v1-0.11/*/tp>1", "*"
    cases: int  # residuals (start-up logs) behind it
    sources: int  # the distinct sources those logs come from


# Multimodal model types whose vision tower kvlint does not count (kvlint/model/params.py reads
# only SigLIP's and Llama 4's): their memory is missed the way a vision model's is, so their
# residuals belong with the vision class, not with the text models.
_MULTIMODAL_TYPES = frozenset(
    {
        "qwen2_vl",
        "qwen2_5_vl",
        "qwen3_vl",
        "qwen3_vl_moe",
        "llava",
        "llava_next",
        "llava_onevision",
        "mllama",
        "idefics3",
        "internvl_chat",
        "phi3_v",
        "phi4mm",
        "pixtral",
        "mistral3",
        "paligemma",
        "gemma3n",
        "kimi_vl",
        "glm4v",
        "minicpmv",
    }
)


def model_class(spec: ModelSpec) -> str:
    """The classes whose memory the model misses in different ways."""
    kinds = {layer.kind for layer, _ in spec.layer_shapes}
    if spec.vision_param_count or spec.model_type in _MULTIMODAL_TYPES:
        return "vision"
    if CacheKind.STATE in kinds:
        return "hybrid"
    if CacheKind.MLA in kinds:
        return "mla"
    if spec.num_experts:
        return "moe"
    return "dense"


def regime_keys(s: VllmSettled) -> tuple[str, ...]:
    """The regimes a deployment belongs to, most specific first: its release line's (by model
    class and TP, by TP, the line), then the pools across lines (class and TP, class, TP, every
    case) for a line whose logs come from too few sources: the class before the TP, since the
    model's memory is missed by class (a vision tower, a hybrid's state) more than by TP."""
    line = memory_line(s.numbers)
    tp = "tp1" if s.tp * s.pp == 1 else "tp>1"
    cls = model_class(s.spec)
    return (
        f"{line}/{cls}/{tp}",
        f"{line}/*/{tp}",
        line,
        f"*/{cls}/{tp}",
        f"*/{cls}/*",
        f"*/*/{tp}",
        "*",
    )


def weighted_quantile(values: list[tuple[float, float]], q: float) -> float:
    """The ``q`` quantile of (value, weight) pairs: the value where the cumulative weight,
    each point counted at the middle of its weight, reaches ``q`` (linear in between)."""
    ordered = sorted(values)
    total = sum(w for _, w in ordered)
    if total <= 0:
        return 0.0
    mids, acc = [], 0.0
    for _, w in ordered:
        mids.append((acc + w / 2) / total)
        acc += w
    if q <= mids[0]:
        return ordered[0][0]
    if q >= mids[-1]:
        return ordered[-1][0]
    for i in range(1, len(ordered)):
        if mids[i] >= q:
            span = mids[i] - mids[i - 1]
            t = (q - mids[i - 1]) / span if span > 0 else 0.0
            return ordered[i - 1][0] + (ordered[i][0] - ordered[i - 1][0]) * t
    return ordered[-1][0]  # pragma: no cover


class BandTable(NamedTuple):
    """Regime key -> (low, high, cases, sources)."""

    rows: Mapping[str, tuple[float, float, int, int]]

    @classmethod
    def from_residuals(cls, residuals: Mapping[str, list[tuple[float, str]]]) -> BandTable:
        """From (residual, source) pairs per regime key: each source's cases share one weight."""
        tail = (1 - LEVEL) / 2
        rows = {}
        for key, pairs in residuals.items():
            counts: dict[str, int] = {}
            for _, source in pairs:
                counts[source] = counts.get(source, 0) + 1
            if len(counts) < MIN_SOURCES and key != "*":
                continue
            weighted = [(value, 1 / counts[source]) for value, source in pairs]
            # Split-conformal levels: with n sources, the (1 - tail)(n + 1)/n quantile covers a
            # new source's residual at the nominal level (a plain quantile of n undercovers).
            n = len(counts)
            upper = min(1.0, (1 - tail) * (n + 1) / n)
            low = weighted_quantile(weighted, 1 - upper)
            high = weighted_quantile(weighted, upper)
            rows[key] = (low, high, len(pairs), n)
        return cls(rows)

    def band(self, s: VllmSettled) -> Band | None:
        """The band of the most specific regime of ``s`` that has one; the interval always
        holds the point (a residual range wholly on one side is widened to zero)."""
        return self.band_of(regime_keys(s))

    def band_of(self, keys: tuple[str, ...]) -> Band | None:
        for key in keys:
            row = self.rows.get(key)
            if row is not None:
                low, high, cases, sources = row
                return Band(min(low, 0.0), max(high, 0.0), key, cases, sources)
        return None


EMPTY = BandTable({})


def shipped() -> BandTable:
    """The table fitted on the corpora (imported only when vLLM's accounting runs)."""
    from kvlint.engines.vllm.fitted import BAND

    return BandTable(BAND)
