"""SGLang's accounting takes a band table as TensorRT-LLM's does (kvlint/engines/band.py): with
one, the ends are the predicted pool memory plus the band's shares of total x mem_fraction_static;
without one (the corpora's SGLang logs come from too few sources) the estimate says "no band"."""

from __future__ import annotations

from kvlint.engines import account
from kvlint.engines.band import BandTable
from kvlint.engines.band_logs import BANDS
from kvlint.engines.sglang import accounting
from kvlint.engines.sglang.effective import SglangSettled
from kvlint.estimate import BORDERLINE
from kvlint.estimate import STARTS
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from testing.builders import LLAMA_31_8B
from testing.builders import model
from testing.builders import settled

SPEC = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")
H100 = lookup_gpu("H100-SXM-80GB")
BAND = BandTable({"*": (-0.1, 0.05, 8, 6)})


def sglang(fraction: float) -> SglangSettled:
    s = settled("sglang", spec=SPEC, gpu=H100, max_model_len=8192, memory_fraction=fraction)
    assert isinstance(s, SglangSettled)
    return s


def test_the_ends_hold_the_point_in_order() -> None:
    assert H100 is not None
    e = accounting.estimate(sglang(0.85), BAND)
    low, high, point = e.available_kv_bytes_low, e.available_kv_bytes_high, e.available_kv_bytes
    assert low is not None and high is not None and point is not None
    budget = H100.total_bytes * 0.85
    assert (low, high) == (round(point - 0.1 * budget), round(point + 0.05 * budget))
    assert e.kv_cache_tokens_low is not None and e.kv_cache_tokens_high is not None
    assert e.kv_cache_tokens is not None
    assert e.kv_cache_tokens_low < e.kv_cache_tokens < e.kv_cache_tokens_high
    assert e.verdict == STARTS and e.band_regime == "*"


def test_a_pool_the_low_end_leaves_nothing_of_is_borderline() -> None:
    # mem_fraction_static just above the weights: the point keeps a sliver for the cache, the
    # band's low end none.
    point = accounting.estimate(sglang(0.85), BandTable({}))
    assert point.weights_bytes is not None and H100 is not None
    fraction = (point.weights_bytes + 0.8 * 2**30) / (H100.total_bytes - 0.5 * 2**30)
    e = accounting.estimate(sglang(fraction), BAND)
    assert e.fits is True and e.verdict == BORDERLINE
    assert e.available_kv_bytes_low == 0 and e.band_refusal is Refusal.NO_CACHE_MEMORY


def test_without_a_table_the_estimate_says_no_band() -> None:
    if "sglang" in BANDS:  # the corpora reached the floor: the shipped band applies
        assert account(sglang(0.85)).band_regime in BANDS["sglang"]
        return
    e = account(sglang(0.85))
    assert e.band_regime is None and e.available_kv_bytes_low is None
    assert e.band_note is not None and e.band_note.startswith("no band: ")
    assert e.verdict == STARTS
