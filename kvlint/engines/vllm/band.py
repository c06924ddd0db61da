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

from kvlint.engines.band import FLOOR as FLOOR
from kvlint.engines.band import LEVEL as LEVEL
from kvlint.engines.band import MIN_SOURCES as MIN_SOURCES
from kvlint.engines.band import Band as Band
from kvlint.engines.band import BandTable as GenericTable
from kvlint.engines.band import model_class as model_class
from kvlint.engines.band import regime_chain
from kvlint.engines.band import weighted_quantile as weighted_quantile
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.engines.vllm.memory import memory_line


def regime_keys(s: VllmSettled) -> tuple[str, ...]:
    """The regimes a deployment belongs to, most specific first: its release line's (by model
    class and TP, by TP, the line), then the pools across lines (class and TP, class, TP, every
    case) for a line whose logs come from too few sources (kvlint.engines.band.regime_chain)."""
    return regime_chain(memory_line(s.numbers), s.spec, s.tp * s.pp)


class BandTable(GenericTable):
    """The generic table, asked with a settled vLLM deployment's regimes."""

    def band(self, s: VllmSettled) -> Band | None:
        return self.band_of(regime_keys(s))


EMPTY = BandTable({})


def shipped() -> BandTable:
    """The table fitted on the corpora (imported only when vLLM's accounting runs)."""
    from kvlint.engines.vllm.fitted import BAND

    return BandTable(BAND)
