"""The solver's searches against a small engine whose numbers are known in closed form.

The fake sizes like vLLM with its overheads fixed: 72 GiB per GPU less its share of 16-bit
weights, blocks of 16 tokens, ``max(1, kv_heads // tp)`` heads and the largest pipeline stage's
layers per GPU, the null block held back. Every expected answer below is worked by hand from those
rules, so a failure is the search's, not the engine accounting's.
"""

from __future__ import annotations

import math

import pytest

from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import stage_layers
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.catalog import lookup
from kvlint.model.spec import ModelSpec
from kvlint.settled import Settled
from kvlint.solve.capacity import admitted
from kvlint.solve.capacity import max_model_len_at
from kvlint.solve.capacity import max_num_seqs_at
from kvlint.solve.fleet import min_gpus
from kvlint.units import GiB
from testing.builders import settled

GPU = GpuSpec("TEST-80GB", "test", 80 * GiB)
BUDGET = 72 * GiB  # per GPU, before the weights


def pool(spec: ModelSpec, tp: int, pp: int) -> int:
    assert spec.param_count is not None
    return BUDGET - 2 * spec.param_count // (tp * pp)


def fake_estimate(deployment: Settled) -> EngineEstimate:
    spec = deployment.model
    tp = deployment.tensor_parallel_size.value
    pp = deployment.pipeline_parallel_size.value
    length = deployment.max_model_len.value
    width = 1 if deployment.cache_dtype.value == "fp8" else 2
    heads = max(1, spec.num_key_value_heads // tp)
    per_token = max(stage_layers(spec.num_layers, pp)) * heads * 2 * spec.head_dim * width
    available = pool(spec, tp, pp)
    blocks = max(0, available) // (16 * per_token)
    per_request = math.ceil(length / 16)
    return EngineEstimate(
        engine="vllm",
        version="fake",
        blocks_per_request=per_request,
        max_model_len=length,
        available_kv_bytes=available,
        bytes_per_token=per_token,
        num_blocks=blocks,
        block_size=16,
        kv_cache_tokens=blocks * 16,
        max_concurrency=blocks / per_request,
        fits=blocks - 1 >= per_request,
    )


@pytest.fixture
def llama70b() -> ModelSpec:
    spec = lookup("meta-llama/Meta-Llama-3.1-70B")
    assert spec is not None
    return spec


def on_test_gpu(spec: ModelSpec, **fields: object) -> Settled:
    """vLLM serving ``spec`` on the test GPU (what the fake sizes is read from it)."""
    return settled("vllm", spec=spec, gpu=GPU, **fields)


def test_admitted_is_the_engines_own_count_else_the_concurrency() -> None:
    # The engine's accounting counts what its scheduler admits (vLLM: its blocks less the null
    # block, tests/engines/vllm/accounting_test.py); without a count, the whole concurrency.
    counted = EngineEstimate("vllm", "x", 1600, admitted=2, max_concurrency=3.0)
    assert admitted(counted) == 2
    assert admitted(EngineEstimate("sglang", "x", 1600, max_concurrency=3.0)) == 3
    assert admitted(EngineEstimate("vllm", "x", 1600, fits=False, max_concurrency=3.0)) == 0


WEIGHTS = 2 * 70_552_387_584  # Llama 3.1 70B in 16 bit


def brute_force_min_gpus(
    concurrency: int, context: int, tps: tuple[int, ...], stage_tp: int | None = None
) -> int | None:
    """The fewest GPUs over every TP x PP x replicas, worked from the fake's rules; with
    ``stage_tp``, pipeline stages only of that TP (the default search)."""
    best = None
    for tp in tps:
        for pp in range(1, 64 // tp + 1):
            if pp > 1 and stage_tp is not None and tp != stage_tp:
                continue
            per_token = max(stage_layers(80, pp)) * max(1, 8 // tp) * 512
            available = BUDGET - WEIGHTS // (tp * pp)
            if available <= 0:
                continue
            seqs = (available // (16 * per_token) - 1) // math.ceil(context / 16)
            if seqs < 1:
                continue
            gpus = tp * pp * math.ceil(concurrency / seqs)
            if gpus <= 64 and (best is None or gpus < best):
                best = gpus
    return best


def test_max_num_seqs_at_128k_tp8(llama70b: ModelSpec) -> None:
    dep = on_test_gpu(llama70b, tensor_parallel_size=8)
    answer = max_num_seqs_at(dep, max_model_len=128_000, estimator=fake_estimate)
    # TP 8: one KV head per GPU, 80 layers x 256 values x 2 bytes = 40 KiB a token per GPU;
    # the pool is 72 GiB less an eighth of 141.1 GB of weights.
    blocks = (72 * GiB - WEIGHTS // 8) // (16 * 40 * 1024)
    assert blocks == 91_051
    assert answer.max_num_seqs == (blocks - 1) // (128_000 // 16) == 11


def test_max_model_len_at_matches_closed_form(llama70b: ModelSpec) -> None:
    dep = on_test_gpu(llama70b, tensor_parallel_size=8)
    answer = max_model_len_at(dep, concurrency=32, limit=131_072, estimator=fake_estimate)
    # 32 requests of b blocks each beside the null block: the largest b, times 16 tokens.
    assert answer.max_model_len == (91_051 - 1) // 32 * 16 == 45_520
    assert not answer.at_limit
    one = max_model_len_at(dep, concurrency=1, limit=10**9, estimator=fake_estimate)
    assert one.max_model_len == (91_051 - 1) * 16
    capped = max_model_len_at(dep, concurrency=2, limit=8192, estimator=fake_estimate)
    assert capped.max_model_len == 8192 and capped.at_limit


def test_min_gpus_needs_pipeline_stages_for_32_at_128k(llama70b: ModelSpec) -> None:
    plan = min_gpus(on_test_gpu(llama70b), context=128_000, concurrency=32, estimator=fake_estimate)
    # TP within a node (up to 8), pipeline stages of TP 8 beyond it.
    assert plan.gpus == brute_force_min_gpus(32, 128_000, (1, 2, 4, 8), stage_tp=8) == 24
    # TP 8 x PP 3: stages of 27, 27 and 26 layers, 13.5 KiB a token per GPU.
    assert plan.layout == Layout(8, 3, 1)
    assert plan.replica is not None and plan.replica.estimate.bytes_per_token == 27 * 512
    blocks = (72 * GiB - WEIGHTS // 24) // (16 * 27 * 512)
    assert plan.admitted == (blocks - 1) // 8000 == 40


def test_min_gpus_any_layout_finds_fewer(llama70b: ModelSpec) -> None:
    plan = min_gpus(
        on_test_gpu(llama70b),
        context=128_000,
        concurrency=32,
        any_layout=True,
        estimator=fake_estimate,
    )
    assert plan.gpus == brute_force_min_gpus(32, 128_000, (1, 2, 4, 8)) == 20
    # 20 GPUs three ways (TP 4 x PP 5, TP 2 x PP 10, TP 1 x PP 20), each 16 KiB a token per GPU
    # and 33 sequences: the fewest pipeline stages wins.
    assert plan.layout == Layout(4, 5, 1)
    assert plan.admitted == 33


def test_min_gpus_without_replicas(llama70b: ModelSpec) -> None:
    plan = min_gpus(
        on_test_gpu(llama70b),
        context=128_000,
        concurrency=12,
        replicas=False,
        estimator=fake_estimate,
    )
    # TP 8 holds 11; without a second replica the answer is two stages of TP 8.
    assert plan.layout == Layout(8, 2, 1)


def test_tp16_replicates_and_buys_no_cache(llama70b: ModelSpec) -> None:
    per_gpu = {
        tp: max_num_seqs_at(
            on_test_gpu(llama70b, tensor_parallel_size=tp),
            max_model_len=128_000,
            estimator=fake_estimate,
        )
        for tp in (8, 16)
    }
    # 8 KV heads: at TP 16 each GPU still holds one (replicated), so a token costs the same
    # 40 KiB per GPU; only the halved weights add a little pool (11 -> 13 sequences).
    assert per_gpu[8].estimate.bytes_per_token == per_gpu[16].estimate.bytes_per_token == 40_960
    assert (per_gpu[8].max_num_seqs, per_gpu[16].max_num_seqs) == (11, 13)
    plan = min_gpus(
        on_test_gpu(llama70b),
        context=128_000,
        concurrency=24,
        max_tp=64,
        replicas=False,
        estimator=fake_estimate,
    )
    # 24 sequences in one replica: TP 16, 32, 64 (13, 14, 14 sequences) cannot; two pipeline
    # stages of TP 8 (no replicated heads) can, on 16 GPUs.
    assert plan.layout == Layout(8, 2, 1)
    assert plan.admitted == 26
