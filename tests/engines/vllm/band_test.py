"""The 90% band on vLLM's figures and the three-valued verdict: shape, monotonicity, ambiguity.

The band's width is whatever the cross-validated residuals make it (kvlint/engines/vllm/
fitted.py); these tests pin what must hold whatever the corpus: the point inside the band, the
band growing with the budget, the verdict turning from starts to borderline to refuses as a
request grows, no band where the memory is stated, and a GPU name or a missing version that
leaves the memory open sized at every reading.
"""

from __future__ import annotations

import pytest

from kvlint.engines.sizer import size
from kvlint.engines.vllm import band as vllm_band
from kvlint.engines.vllm.band import BandTable
from kvlint.engines.vllm.band import weighted_quantile
from kvlint.estimate import BORDERLINE
from kvlint.estimate import REFUSES
from kvlint.estimate import STARTS
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from testing.builders import dense
from testing.builders import deployment

LLAMA_8B = dense()
BIGGER = dense(param_count=16_000_000_000)  # Llama-3.1-8B's cache, 32 GB of weights


def sized(spec: ModelSpec = LLAMA_8B, **values: object) -> EngineEstimate:
    sizing = size(deployment(**values), spec)
    assert sizing.engine is not None
    return sizing.engine


@pytest.mark.parametrize("version", ["0.7.3", "0.10.2", "0.11.0", "0.20.2", "0.33.0"])
def test_the_point_lies_inside_its_band_on_every_line(version: str) -> None:
    e = sized(engine_version=version, gpu="H100-80GB", max_model_len=8192)
    assert e.available_kv_bytes is not None
    assert e.available_kv_bytes_low is not None and e.available_kv_bytes_high is not None
    assert e.available_kv_bytes_low <= e.available_kv_bytes <= e.available_kv_bytes_high
    assert e.kv_cache_tokens_low is not None and e.kv_cache_tokens_high is not None
    assert e.kv_cache_tokens is not None
    assert e.kv_cache_tokens_low <= e.kv_cache_tokens <= e.kv_cache_tokens_high
    assert e.max_concurrency_low is not None and e.max_concurrency_high is not None
    assert e.max_concurrency is not None
    assert e.max_concurrency_low <= e.max_concurrency <= e.max_concurrency_high
    assert e.band_regime is not None and e.verdict == STARTS


def test_the_band_grows_with_the_budget() -> None:
    widths = []
    for fraction in (0.5, 0.7, 0.9):
        e = sized(engine_version="0.11.0", gpu="H100-80GB", memory_fraction=fraction)
        assert e.available_kv_bytes_low is not None and e.available_kv_bytes_high is not None
        widths.append((e.available_kv_bytes_low, e.available_kv_bytes_high))
    lows, highs = [w[0] for w in widths], [w[1] for w in widths]
    assert lows == sorted(lows) and highs == sorted(highs)
    spans = [high - low for low, high in widths]
    assert spans == sorted(spans)


def test_the_verdict_turns_from_starts_to_borderline_to_refuses() -> None:
    seen = []
    for length in (8_192, 32_768, 65_536, 131_072):
        e = sized(engine_version="0.11.0", gpu="L4", max_model_len=length)
        seen.append(e.verdict)
    order = {STARTS: 0, BORDERLINE: 1, REFUSES: 2}
    ranks = [order[v] for v in seen if v is not None]
    assert ranks == sorted(ranks)
    assert seen[0] == STARTS and seen[-1] in (BORDERLINE, REFUSES)


def test_a_stated_kv_memory_has_no_band() -> None:
    e = sized(engine_version="0.11.0", gpu="H100-80GB", kv_cache_memory_bytes=20 * GiB)
    assert e.available_kv_bytes == 20 * GiB
    assert e.available_kv_bytes_low is None and e.available_kv_bytes_high is None
    assert e.verdict == STARTS


def test_a_refusal_the_memory_cannot_change_is_outside_any_band() -> None:
    e = sized(engine_version="0.11.0", gpu="H100-80GB", max_model_len=1_000_000)
    assert e.refusal is Refusal.BEYOND_POSITIONS and e.verdict == REFUSES


def test_an_a100_of_unstated_memory_is_sized_at_40_and_80_gb() -> None:
    # 32 GB of weights on an A100: at 40 GB with 0.9 one 131,072-token request of 16 GiB does
    # not fit, at 80 GB it does; so the verdict is borderline and says why.
    e = sized(BIGGER, engine_version="0.11.0", gpu="A100", max_model_len=131072)
    assert e.gpu_total_bytes is not None and e.gpu_total_bytes < 41 * GiB  # figures at 40 GB
    assert e.verdict == BORDERLINE
    assert e.caveat is not None and "A100-SXM-40GB" in e.caveat and "A100-SXM-80GB" in e.caveat
    # one short clause, what differs: the 80 GB card starts where the 40 GB one does not
    assert e.caveat.endswith("A100-SXM-80GB starts where A100-SXM-40GB refuses"), e.caveat
    assert any("GiB per GPU" in note for note in e.notes)  # every reading's figures: the notes
    assert e.available_kv_bytes_high is not None and e.available_kv_bytes_high > 40 * GiB
    pinned = sized(BIGGER, engine_version="0.11.0", gpu="A100-80GB", max_model_len=131072)
    assert pinned.verdict == STARTS and pinned.caveat is None


def test_no_version_keeps_the_band_of_the_line_the_figures_are_at() -> None:
    # A file naming no version is sized at 0.33.0 and at the older lines too; the figures and
    # the band stay 0.33.0's: a band spanning release lines is no band.
    named = sized(engine_version="0.33.0", gpu="H100-80GB", max_model_len=8192)
    unnamed = sized(gpu="H100-80GB", max_model_len=8192)
    assert named.verdict == unnamed.verdict == STARTS
    assert unnamed.version == "0.33.0"
    assert unnamed.available_kv_bytes == named.available_kv_bytes
    assert unnamed.available_kv_bytes_low == named.available_kv_bytes_low
    assert unnamed.available_kv_bytes_high == named.available_kv_bytes_high
    assert unnamed.band_regime == named.band_regime and unnamed.band_logs == named.band_logs
    # every line agrees: nothing to doubt, but each line sized is kept
    assert unnamed.version_doubt is None and unnamed.caveat is None
    assert [r.version for r in unnamed.readings] == ["0.33.0", "0.20.2", "0.10.2"]
    assert {r.verdict for r in unnamed.readings} == {STARTS}


def test_version_doubt_is_one_short_sentence_only_where_the_lines_differ() -> None:
    # Find a length where the lines' verdicts differ (the newest line charges CUDA graphs to
    # the budget, the older ones do not): the doubt names the lines and what each does.
    doubted = None
    for length in range(8_192, 131_073, 8_192):
        e = sized(gpu="L4", max_model_len=length)
        verdicts = {r.verdict for r in e.readings}
        if len(verdicts) > 1:
            doubted = e
            break
        assert e.version_doubt is None
    assert doubted is not None and doubted.version_doubt is not None
    doubt = doubted.version_doubt
    assert doubt.startswith("no vLLM version named: ") and "\n" not in doubt
    assert "0.33.0" in doubt and len(doubt) < 100
    assert doubted.verdict == BORDERLINE and doubted.caveat == doubt
    first = doubted.readings[0]
    assert first.version == "0.33.0"
    for reading in doubted.readings[1:]:
        assert (reading.version in doubt) == (reading.verdict != first.verdict)
    # the band is still the one line's
    pinned = sized(engine_version="0.33.0", gpu="L4", max_model_len=length)
    assert doubted.available_kv_bytes_low == pinned.available_kv_bytes_low
    assert doubted.available_kv_bytes_high == pinned.available_kv_bytes_high


def test_the_band_says_its_regime_and_how_many_logs() -> None:
    e = sized(engine_version="0.11.0", gpu="H100-80GB", max_model_len=8192)
    assert e.band_regime in vllm_band.shipped().rows
    logs, sources = vllm_band.shipped().rows[e.band_regime][2:]
    assert (e.band_logs, e.band_sources) == (logs, sources)
    assert e.band_sources is not None and e.band_sources >= vllm_band.MIN_SOURCES


def test_weighted_quantile_weighs_each_source_once() -> None:
    # Ten cases of one source at 0.0 and one case each of two sources at 1.0: by source the
    # median is the 1.0 side's, by case it would be 0.0.
    pairs = [(0.0, 0.1)] * 10 + [(1.0, 1.0), (1.0, 1.0)]
    assert weighted_quantile(pairs, 0.5) == pytest.approx(1.0)
    assert weighted_quantile([(v, 1.0) for v in (1.0, 2.0, 3.0)], 0.5) == pytest.approx(2.0)
    assert weighted_quantile([(v, 1.0) for v in (1.0, 2.0, 3.0)], 0.0) == 1.0


def test_a_regime_with_few_sources_borrows_a_coarser_band() -> None:
    residuals = {
        "v1-0.11/dense/tp1": [(0.01, f"s{i}") for i in range(3)],  # three sources: too few
        "v1-0.11/*/tp1": [(0.01 * i, f"s{i}") for i in range(6)],
        "*": [(0.0, "s0")],
    }
    table = BandTable.from_residuals(residuals)
    assert "v1-0.11/dense/tp1" not in table.rows and "v1-0.11/*/tp1" in table.rows
    band = table.band_of(("v1-0.11/dense/tp1", "v1-0.11/*/tp1", "v1-0.11", "*"))
    assert band is not None and band.regime == "v1-0.11/*/tp1"
    assert (band.cases, band.sources) == (6, 6)


def test_the_fewest_sources_a_band_needs_follows_from_the_coverage_floor() -> None:
    # Below 19 sources the band is their residuals' whole range, which holds a new source with
    # probability n / (n + 1): six is the fewest for which that reaches 85%.
    assert vllm_band.MIN_SOURCES == 6
    assert 5 / 6 < vllm_band.FLOOR <= 6 / 7


def test_a_line_with_too_few_sources_borrows_the_pool_across_lines() -> None:
    residuals = {
        "v1-0.21/dense/tp1": [(0.2, "a"), (0.1, "b")],
        "v1-0.21": [(0.2, "a"), (0.1, "b")],
        "*/dense/tp1": [(0.01 * i, f"s{i}") for i in range(8)],
        "*": [(0.01 * i, f"s{i}") for i in range(8)],
    }
    table = BandTable.from_residuals(residuals)
    keys = ("v1-0.21/dense/tp1", "v1-0.21/*/tp1", "v1-0.21", "*/dense/tp1", "*/*/tp1", "*")
    band = table.band_of(keys)
    assert band is not None and band.regime == "*/dense/tp1"
    assert band.low == 0.0 and band.high == pytest.approx(0.07)


def test_the_band_widens_monotonically_with_the_residuals() -> None:
    # More spread in the residuals never narrows the band; the band always holds zero.
    narrow = BandTable.from_residuals({"*": [(0.01 * (i - 5), f"s{i}") for i in range(11)]})
    wide = BandTable.from_residuals({"*": [(0.02 * (i - 5), f"s{i}") for i in range(11)]})
    n, w = narrow.rows["*"], wide.rows["*"]
    assert w[0] <= n[0] < 0 < n[1] <= w[1]
    skewed = BandTable.from_residuals({"*": [(0.01 * i + 0.01, f"s{i}") for i in range(11)]})
    b = skewed.band_of(("*",))
    assert b is not None and b.low == 0.0 and b.high > 0
