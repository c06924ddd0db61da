"""The tokens vLLM holds ahead of a sliding window, by release: one batch of
``max_num_batched_tokens`` through the 0.25 line (two real Gemma 4 logs), the in-flight batches
(async scheduling: 2, or the pipeline depth) in the source of 0.33, taken from 0.26.

Each real case: its inputs, the logged "Available KV cache memory" as the budget, the logged
tokens (within 2%) and concurrency (to the two decimals printed).
"""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.engines import estimate
from kvlint.engines import settle
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.units import GiB
from testing.builders import catalog_model
from testing.builders import deployment

# (source, model, version, fields, available GiB, logged tokens, logged concurrency)
REAL: list[tuple[str, str, str, dict[str, Any], float, int, float]] = [
    (
        # jethac/dgx-spark-hijinks: 256 global blocks of 32 + 5 x (cdiv(1023 + 2048, 16) + 1);
        # 2,048 batched tokens is vLLM's default on the GB10 (the log runs with defaults)
        "https://github.com/jethac/dgx-spark-hijinks/blob/"
        "19de9ad6f9b9f6ec16acaa029e4d6710b9549648/results/claude_anchor_trio_20260611/results/"
        "claude_row0_bf16_server.log",
        "google/gemma-4-31B-it",
        "0.22.1rc1.dev281+gad2337814",
        {"max_model_len": 8192, "max_num_batched_tokens": 2048},
        22.46,
        61_711,
        7.53,
    ),
    (
        # sostrowsk/dgx-spark-local-llm: 8,192 global blocks + 5 x (cdiv(1023 + 2496, 16) + 1)
        "https://github.com/sostrowsk/dgx-spark-local-llm/blob/"
        "a30decd7f6de661dac6971b785159d92b2d3d2dd/gemma4-nvfp4.log",
        "google/gemma-4-26B-A4B",
        "0.25.1",
        {"max_model_len": 262144, "max_num_seqs": 32, "max_num_batched_tokens": 2496},
        84.68,
        3_912_140,
        14.92,
    ),
]


@pytest.mark.parametrize(
    ("source", "model", "version", "fields", "gib", "tokens", "concurrency"),
    REAL,
    ids=[case[2] for case in REAL],
)
def test_one_batch_ahead_of_the_window_through_0_25(
    source: str,
    model: str,
    version: str,
    fields: dict[str, Any],
    gib: float,
    tokens: int,
    concurrency: float,
) -> None:
    dep = deployment(engine_version=version, kv_cache_memory_bytes=round(gib * GiB), **fields)
    est = estimate(dep, catalog_model(model), None)
    assert est.kv_cache_tokens is not None
    assert abs(est.kv_cache_tokens - tokens) / tokens < 0.02, source
    assert est.max_concurrency == pytest.approx(concurrency, abs=0.005), source


@pytest.mark.parametrize(
    ("version", "pp", "batches"),
    [("0.25.1", 1, 1), ("0.25.1", 2, 1), ("0.26.0", 1, 2), ("0.33.0", 1, 2), ("0.33.0", 4, 4)],
)
def test_in_flight_tokens_by_release(version: str, pp: int, batches: int) -> None:
    dep = deployment(
        engine_version=version,
        max_model_len=32768,
        max_num_batched_tokens=4096,
        pipeline_parallel_size=pp,
    )
    s = settle(dep, catalog_model("google/gemma-4-26B-A4B"), None)
    assert isinstance(s, VllmSettled)
    assert s.in_flight == batches * 4096
