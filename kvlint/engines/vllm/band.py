"""The uncertainty band on vLLM's available KV memory, from cross-validated residuals.

``benchmarks/fidelity.py`` predicts every real start-up log of the calibration corpora with the
memory model's constants fitted without the log's source, and keeps the residual
``(logged - predicted) / budget`` (the budget is ``total x gpu_memory_utilization``). Per
regime (release line x model class x tensor parallelism) the 5th and 95th percentiles of those
residuals bound a 90% band; ``fitted.py`` holds them (``--write-band`` regenerates it). Each
source weighs the same (its cases share one weight): a sweep of forty runs is one setup, and
its residuals move together. A regime with residuals from fewer than ``MIN_SOURCES`` sources
borrows the band of the next coarser one: the release line and TP, then the line, then every
case.

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

MIN_SOURCES = 5  # fewer sources than this and a regime borrows a coarser one's band
LEVEL = 0.90  # the band's nominal coverage


class Band(NamedTuple):
    """A residual interval, as shares of the budget, and what it was built from."""

    low: float  # the 5th percentile of (logged - predicted) / budget (negative: less memory)
    high: float  # the 95th percentile
    regime: str  # the key it came from: "v1-0.11/dense/tp1", "v1-0.11/*/tp>1", "*"
    cases: int  # residuals behind it


def model_class(spec: ModelSpec) -> str:
    """The classes whose memory the model misses in different ways."""
    kinds = {layer.kind for layer, _ in spec.layer_shapes}
    if spec.vision_param_count:
        return "vision"
    if CacheKind.STATE in kinds:
        return "hybrid"
    if CacheKind.MLA in kinds:
        return "mla"
    if spec.num_experts:
        return "moe"
    return "dense"


def regime_keys(s: VllmSettled) -> tuple[str, ...]:
    """The regimes a deployment belongs to, most specific first."""
    line = memory_line(s.numbers)
    tp = "tp1" if s.tp * s.pp == 1 else "tp>1"
    return (f"{line}/{model_class(s.spec)}/{tp}", f"{line}/*/{tp}", line, "*")


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
    """Regime key -> (low, high, cases)."""

    rows: Mapping[str, tuple[float, float, int]]

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
            rows[key] = (low, high, len(pairs))
        return cls(rows)

    def band(self, s: VllmSettled) -> Band | None:
        for key in regime_keys(s):
            row = self.rows.get(key)
            if row is not None:
                low, high, cases = row
                return Band(min(low, 0.0), max(high, 0.0), key, cases)
        return None


EMPTY = BandTable({})


def shipped() -> BandTable:
    """The table fitted on the corpora (imported only when vLLM's accounting runs)."""
    from kvlint.engines.vllm.fitted import BAND

    return BandTable(BAND)
