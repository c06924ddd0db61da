"""TensorRT-LLM's 90% band: the predicted pool memory plus the band's shares of total x fraction,
the pool and concurrency at both ends, and the three-valued verdict (kvlint/engines/band.py)."""

from __future__ import annotations

import pytest

from kvlint.engines import account
from kvlint.engines.band import BandTable
from kvlint.engines.band_logs import BANDS
from kvlint.engines.trtllm import accounting
from kvlint.engines.trtllm.effective import TrtllmSettled
from kvlint.estimate import BORDERLINE
from kvlint.estimate import REFUSES
from kvlint.estimate import STARTS
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from kvlint.units import GiB
from testing.builders import LLAMA_31_8B
from testing.builders import model
from testing.builders import settled

SPEC = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")
H100 = lookup_gpu("H100-SXM-80GB")
L4 = lookup_gpu("L4")
H100_TOTAL = H100.total_bytes if H100 is not None else 0
TOKEN = 128 * 1024  # Llama 3.1 8B, 16-bit cache: 32 layers x 8 KV heads x 128 x (K + V) x 2 B


def table(low: float, high: float, key: str = "*") -> BandTable:
    return BandTable({key: (low, high, 8, 6)})


def trtllm(**fields: object) -> TrtllmSettled:
    fields.setdefault("gpu", H100)
    s = settled("trtllm", spec=SPEC, **fields)  # type: ignore[arg-type]
    assert isinstance(s, TrtllmSettled)
    return s


def ends(e: EngineEstimate) -> tuple[int, int]:
    assert e.available_kv_bytes_low is not None and e.available_kv_bytes_high is not None
    return e.available_kv_bytes_low, e.available_kv_bytes_high


def test_the_band_holds_the_point_and_is_the_shares_of_total_times_fraction() -> None:
    assert H100 is not None
    e = accounting.estimate(trtllm(memory_fraction=0.9, max_model_len=8192), table(-0.1, 0.05))
    assert e.available_kv_bytes is not None and e.kv_cache_tokens is not None
    budget = H100.total_bytes * 0.9
    assert ends(e) == (
        round(e.available_kv_bytes - 0.1 * budget),
        round(e.available_kv_bytes + 0.05 * budget),
    )
    low, high = ends(e)
    assert low < e.available_kv_bytes < high
    assert e.kv_cache_tokens_low is not None and e.kv_cache_tokens_high is not None
    assert e.kv_cache_tokens_low < e.kv_cache_tokens < e.kv_cache_tokens_high
    # each end is the engine's own paging of that memory: whole blocks of 32 tokens
    assert e.kv_cache_tokens_low == -(-(low // TOKEN) // 32) * 32
    assert e.max_concurrency_low is not None and e.max_concurrency_high is not None
    assert e.max_concurrency is not None
    assert e.max_concurrency_low < e.max_concurrency < e.max_concurrency_high
    assert (e.band_regime, e.band_logs, e.band_sources) == ("*", 8, 6)
    assert e.verdict == STARTS and e.band_refusal is None


def test_a_wider_band_has_ends_no_narrower() -> None:
    s = trtllm(max_model_len=8192)
    narrow = accounting.estimate(s, table(-0.05, 0.02))
    wide = accounting.estimate(s, table(-0.10, 0.05))
    assert ends(wide)[0] <= ends(narrow)[0] and ends(wide)[1] >= ends(narrow)[1]
    for figure in ("kv_cache_tokens", "max_concurrency"):
        assert getattr(wide, f"{figure}_low") <= getattr(narrow, f"{figure}_low")
        assert getattr(wide, f"{figure}_high") >= getattr(narrow, f"{figure}_high")


@pytest.mark.parametrize("end", [0, 1])
def test_more_of_the_gpu_raises_each_end(end: int) -> None:
    band = table(-0.1, 0.05)
    figures = [
        accounting.estimate(trtllm(memory_fraction=f, max_model_len=8192), band)
        for f in (0.5, 0.7, 0.9)
    ]
    memory = [ends(e)[end] for e in figures]
    tokens = [(e.kv_cache_tokens_low, e.kv_cache_tokens_high)[end] for e in figures]
    assert memory == sorted(memory) and len(set(memory)) == 3
    assert tokens == sorted(tokens)  # type: ignore[type-var]


def test_the_finest_regime_the_table_holds_is_taken() -> None:
    rows = BandTable({"pytorch/dense/tp1": (-0.02, 0.01, 7, 6), "*": (-0.2, 0.1, 9, 7)})
    assert accounting.estimate(trtllm(), rows).band_regime == "pytorch/dense/tp1"
    # an engine built ahead (the C++ runtime) is another backend: the engine-wide cell
    built = accounting.estimate(trtllm(extras={"backend": "tensorrt"}), rows)
    assert built.band_regime == "*"
    assert accounting.regime_keys(trtllm(tensor_parallel_size=2, gpu_count=2))[0] == (
        "pytorch/dense/tp>1"
    )


def _fail_fast(length: int) -> TrtllmSettled:
    return trtllm(gpu=L4, max_model_len=length, extras={"fail-fast": True})


def test_one_request_inside_the_band_is_borderline() -> None:
    # The point holds one request of the length, the band's low end does not: borderline, and
    # what refuses at the low end is the one-request check (KV302's).
    point = accounting.estimate(_fail_fast(8192), table(0.0, 0.0))
    assert point.available_kv_bytes is not None
    length = int(point.available_kv_bytes * 0.95) // TOKEN // 32 * 32
    e = accounting.estimate(_fail_fast(length), table(-0.1, 0.05))
    assert e.fits is True and e.verdict == BORDERLINE
    assert e.band_refusal is Refusal.ONE_REQUEST and e.refusal_at_risk is Refusal.ONE_REQUEST


def test_one_request_beyond_the_band_refuses_and_well_inside_it_starts() -> None:
    band = table(-0.1, 0.05)
    beyond = accounting.estimate(_fail_fast(131072), band)
    assert beyond.available_kv_bytes is not None and beyond.available_kv_bytes_high is not None
    assert beyond.available_kv_bytes_high < 131072 * TOKEN  # the high end is short too
    assert beyond.verdict == REFUSES and beyond.refusal is Refusal.ONE_REQUEST
    inside = accounting.estimate(_fail_fast(8192), band)
    assert inside.verdict == STARTS and inside.band_refusal is None


def test_weights_close_to_the_gpu_are_borderline_and_far_beyond_it_refuse() -> None:
    # A GPU whose whole memory is just above or well below the weights and buffers: with the
    # band's high end at +10% of the budget, the first may start, the second cannot.
    assert L4 is not None
    point = accounting.estimate(trtllm(gpu=L4, max_model_len=8192), table(0.0, 0.0))
    assert point.weights_bytes is not None and point.available_kv_bytes is not None
    from dataclasses import replace

    band = table(-0.1, 0.1)
    held = L4.total_bytes - point.weights_bytes - round(point.available_kv_bytes / 0.9)
    near = replace(L4, total_bytes=point.weights_bytes + held - GiB // 2)
    e = accounting.estimate(trtllm(gpu=near, max_model_len=8192), band)
    assert e.fits is False and e.refusal is Refusal.WEIGHTS and e.verdict == BORDERLINE
    assert ends(e)[0] == 0 and ends(e)[1] > 0
    far = replace(L4, total_bytes=point.weights_bytes // 2)
    f = accounting.estimate(trtllm(gpu=far, max_model_len=8192), band)
    assert f.verdict == REFUSES and f.refusal is Refusal.WEIGHTS


def test_a_stated_ceiling_on_the_pool_caps_the_high_end() -> None:
    # kv_cache_config.max_gpu_total_bytes below the predicted memory: the point and the high
    # end are the ceiling, the low end is the prediction's (below the ceiling).
    predicted = accounting.estimate(trtllm(max_model_len=8192), table(0.0, 0.0))
    assert predicted.available_kv_bytes is not None
    ceiling = predicted.available_kv_bytes - 2 * GiB
    e = accounting.estimate(
        trtllm(max_model_len=8192, kv_cache_memory_bytes=ceiling), table(-0.1, 0.05)
    )
    assert e.available_kv_bytes == ceiling and ends(e)[1] == ceiling
    assert ends(e)[0] == round(predicted.available_kv_bytes - 0.1 * 0.9 * H100_TOTAL)


def test_a_stated_budget_without_a_gpu_has_no_band_and_no_note() -> None:
    # No GPU: the budget is the pool's memory, no prediction to band; the engine has a table,
    # so no "no band" note either.
    e = account(trtllm(gpu=None, kv_cache_memory_bytes=16 * GiB, max_model_len=8192))
    assert e.band_regime is None and e.available_kv_bytes_low is None and e.band_note is None
    assert e.verdict == STARTS


def test_a_layout_refusal_has_no_band() -> None:
    e = accounting.estimate(trtllm(tensor_parallel_size=3, gpu_count=3), table(-0.1, 0.05))
    assert e.refusal is Refusal.LAYOUT and e.verdict == REFUSES
    assert e.available_kv_bytes_low is None


@pytest.mark.skipif("trtllm" not in BANDS, reason="the corpora hold too few TensorRT-LLM logs")
def test_the_shipped_band_is_an_interval_around_zero() -> None:
    for low, high, cases, sources in BANDS["trtllm"].values():
        assert low <= 0 <= high and sources <= cases
    e = account(trtllm(max_model_len=8192))
    assert e.band_regime in BANDS["trtllm"]
