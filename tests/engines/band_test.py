"""The band machinery every engine shares, and the honest "no band" of the engines the corpora
hold too few cross-validated logs of (kvlint/engines/band.py, band_logs.py)."""

from __future__ import annotations

import pytest

from kvlint.engines import band
from kvlint.engines.band_logs import BANDS
from kvlint.engines.band_logs import POOL_LOGS
from kvlint.estimate import EngineEstimate
from kvlint.units import GiB
from testing.builders import LLAMA_31_8B
from testing.builders import deployment
from testing.builders import model
from testing.builders import sized

L8 = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")


def estimate(engine: str, gpu: str = "H100-80GB", **values: object) -> EngineEstimate:
    e = sized(deployment(engine, gpu=gpu, max_model_len=8192, **values), L8).engine
    assert e is not None
    return e


def test_an_engine_whose_logs_reach_the_floor_carries_its_fitted_band() -> None:
    e = estimate("trtllm")
    _, sources = POOL_LOGS["trtllm"]
    assert sources >= band.MIN_SOURCES  # what the corpora hold today
    rows = BANDS["trtllm"]
    assert e.band_regime in rows and e.band_note is None
    _, _, cases, from_sources = rows[e.band_regime]
    assert (e.band_logs, e.band_sources) == (cases, from_sources)
    assert e.available_kv_bytes_low is not None and e.available_kv_bytes_high is not None
    assert e.available_kv_bytes is not None
    assert e.available_kv_bytes_low <= e.available_kv_bytes <= e.available_kv_bytes_high


def test_every_band_table_stands_on_the_counted_residuals() -> None:
    # The engine-wide cell holds every residual of the engine, and a table ships only for an
    # engine whose residuals come from MIN_SOURCES sources: the count and the band agree.
    for engine, rows in BANDS.items():
        low, high, cases, sources = rows["*"]
        assert (cases, sources) == POOL_LOGS[engine]
        assert sources >= band.MIN_SOURCES and low <= high
        assert all(n <= cases and s <= sources for _, _, n, s in rows.values())


@pytest.mark.parametrize("engine", ["sglang", "tgi"])
def test_an_engine_with_too_few_sources_says_no_band_with_its_count(engine: str) -> None:
    e = estimate(engine)
    logs, sources = POOL_LOGS[engine]
    assert sources < band.MIN_SOURCES  # what the corpora hold today; else fit a band
    assert engine not in BANDS
    assert e.band_regime is None and e.available_kv_bytes_low is None
    assert e.band_note == band.no_band((logs, sources), cells=False)
    if logs:
        assert e.band_note.startswith(f"no band: {logs} log")
        assert f"from {sources} source" in e.band_note
        assert e.band_note.endswith(f"a band needs {band.MIN_SOURCES}")


def test_a_pool_of_allocated_cells_is_no_prediction_to_band() -> None:
    for engine in ("llamacpp", "ollama"):
        e = estimate(engine)
        assert (
            e.band_note == "no band: the cache is the cells the settings allocate, not a prediction"
        )


def test_vllm_has_its_own_band_and_no_note() -> None:
    e = estimate("vllm", engine_version="0.11.0")
    assert e.band_regime is not None and e.band_note is None
    stated = estimate("vllm", engine_version="0.11.0", kv_cache_memory_bytes=20 * GiB)
    assert stated.band_regime is None and stated.band_note is None  # the memory is stated


def test_no_band_wording() -> None:
    assert band.no_band((0, 0), cells=False) == (
        "no band: no start-up log of this engine to cross-validate"
    )
    assert band.no_band((1, 1), cells=False) == "no band: 1 log from 1 source, a band needs 6"
    assert band.no_band((7, 3), cells=False).startswith("no band: 7 logs from 3 sources")
    # enough sources, but the band tables were generated before the corpora grew
    assert band.no_band((8, 6), cells=False) == (
        "no band: 8 logs from 6 sources are enough for one, but the band tables predate them"
    )


def test_every_engine_without_a_band_table_is_counted() -> None:
    from kvlint.engines import NAMES

    assert set(POOL_LOGS) == set(NAMES) - {"vllm"}
    assert all(0 <= sources <= logs for logs, sources in POOL_LOGS.values())
