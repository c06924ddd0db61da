"""Levers side by side and the engines compared, on Llama 3.1 70B from the catalog."""

from __future__ import annotations

import pytest

from kvlint.arith.parallel import Layout
from kvlint.engines import account
from kvlint.gpus import GpuSpec
from kvlint.gpus import lookup_gpu
from kvlint.model.catalog import lookup
from kvlint.model.spec import ModelSpec
from kvlint.solve import engines_compare
from kvlint.solve import levers
from kvlint.solve.levers import Lever
from testing.builders import settled

# The engines the solver's table compares, in its order (kvlint solve's --engine choices).
ENGINES = ("vllm", "sglang", "tgi", "llamacpp")

CONTEXT = 128_000


@pytest.fixture(scope="module")
def llama70b() -> ModelSpec:
    spec = lookup("meta-llama/Meta-Llama-3.1-70B")
    assert spec is not None
    return spec


@pytest.fixture(scope="module")
def h100() -> GpuSpec:
    gpu = lookup_gpu("H100-80GB")
    assert gpu is not None
    return gpu


@pytest.fixture(scope="module")
def rows(llama70b: ModelSpec, h100: GpuSpec) -> list[Lever]:
    deployment = settled("vllm", spec=llama70b, gpu=h100)
    return levers(deployment, context=CONTEXT, concurrency=32, layout=Layout(8), max_gpus=32)


def row(rows: list[Lever], group: str, label: str) -> Lever:
    found = [r for r in rows if r.group == group and r.label == label]
    assert len(found) == 1, (group, label, [(r.group, r.label) for r in rows])
    return found[0]


def test_every_group_is_there_and_the_current_settings_are_marked(rows: list[Lever]) -> None:
    groups = {r.group for r in rows}
    assert groups == {"cache dtype", "weights", "GPU", "memory fraction"}
    current = {(r.group, r.label) for r in rows if r.current}
    assert current == {
        ("cache dtype", "auto"),
        ("weights", "bf16"),
        ("GPU", "H100-SXM-80GB"),
        ("memory fraction", "0.92"),  # vLLM 0.33's default, not 0.9
    }
    fractions = [r.label for r in rows if r.group == "memory fraction"]
    assert fractions == ["0.85", "0.9", "0.92", "0.95"]


def test_fp8_cache_doubles_the_tokens_of_the_same_pool(rows: list[Lever]) -> None:
    bf16, fp8 = row(rows, "cache dtype", "auto"), row(rows, "cache dtype", "fp8")
    assert bf16.available_kv_bytes == fp8.available_kv_bytes
    assert bf16.available_kv_bytes is not None
    # TP 8: 40 KiB a token per GPU in bf16, 20 KiB in fp8; blocks of 16 tokens.
    assert bf16.kv_cache_tokens is not None and fp8.kv_cache_tokens is not None
    assert bf16.estimate is not None and fp8.estimate is not None
    assert bf16.estimate.num_blocks == bf16.available_kv_bytes // (16 * 40 * 1024)
    assert fp8.estimate.num_blocks == fp8.available_kv_bytes // (16 * 20 * 1024)
    assert bf16.admitted == (bf16.estimate.num_blocks - 1) // 8000
    assert fp8.admitted == (fp8.estimate.num_blocks - 1) // 8000
    assert bf16.plan is not None and fp8.plan is not None
    assert (bf16.plan.gpus, fp8.plan.gpus) == (24, 16)


def test_unsupported_levers_are_marked_not_offered(rows: list[Lever]) -> None:
    nvfp4 = row(rows, "cache dtype", "nvfp4")
    assert not nvfp4.offered and nvfp4.plan is None
    assert nvfp4.note == "a 4-bit float cache needs a Blackwell GPU"
    assert all(r.offered for r in rows if r.group != "cache dtype")


def test_weight_quantisation_frees_pool_but_not_cache_per_token(rows: list[Lever]) -> None:
    bf16, fp8, awq = (row(rows, "weights", name) for name in ("bf16", "fp8", "awq"))
    assert bf16.estimate is not None and fp8.estimate is not None and awq.estimate is not None
    # INT4 weights leave the 16-bit cache as it was: the same bytes a token, more pool.
    assert bf16.estimate.bytes_per_token == fp8.estimate.bytes_per_token
    assert fp8.estimate.bytes_per_token == awq.estimate.bytes_per_token == 40 * 1024
    assert bf16.estimate.weights_bytes is not None and fp8.estimate.weights_bytes is not None
    assert awq.estimate.weights_bytes is not None
    assert awq.estimate.weights_bytes < fp8.estimate.weights_bytes < bf16.estimate.weights_bytes
    assert bf16.available_kv_bytes is not None and fp8.available_kv_bytes is not None
    assert awq.available_kv_bytes is not None
    freed = bf16.estimate.weights_bytes - fp8.estimate.weights_bytes
    assert fp8.available_kv_bytes - bf16.available_kv_bytes == freed


def test_a_bigger_gpu_needs_fewer(rows: list[Lever]) -> None:
    h100, h200 = row(rows, "GPU", "H100-SXM-80GB"), row(rows, "GPU", "H200-141GB")
    assert h100.plan is not None and h200.plan is not None
    assert h100.plan.gpus is not None and h200.plan.gpus is not None
    assert h200.plan.gpus < h100.plan.gpus
    assert h200.admitted is not None and h100.admitted is not None
    assert h200.admitted > h100.admitted


def test_blackwell_offers_the_nvfp4_cache(llama70b: ModelSpec) -> None:
    b200 = lookup_gpu("B200")
    assert b200 is not None
    deployment = settled("vllm", spec=llama70b, gpu=b200)
    found = levers(deployment, context=CONTEXT, concurrency=8, layout=Layout(8))
    nvfp4 = row(found, "cache dtype", "nvfp4")
    assert nvfp4.offered and nvfp4.estimate is not None
    # head_dim 128 in nvfp4: 64 data bytes + 8 scale bytes a head, K and V: 144 B a layer.
    assert nvfp4.estimate.bytes_per_token == 80 * 144


def test_llamacpp_offers_neither_awq_nor_a_memory_fraction(llama70b: ModelSpec) -> None:
    deployment = settled("llamacpp", spec=llama70b, gpu=lookup_gpu("H100-80GB"))
    found = levers(deployment, context=8192, concurrency=1, layout=Layout(1), gpu_choices=())
    assert [r.offered for r in found if r.group == "weights"] == [False, False, False]
    fraction = row(found, "memory fraction", "-")
    assert not fraction.offered and fraction.note == "llamacpp has none"
    assert [r.label for r in found if r.group == "cache dtype"] == ["f16", "q8_0", "q4_0"]


def test_engines_side_by_side(llama70b: ModelSpec, h100: GpuSpec) -> None:
    deployment = settled("vllm", spec=llama70b, gpu=h100)
    found = engines_compare(deployment, context=CONTEXT, layout=Layout(8), engines=ENGINES)
    assert [r.label for r in found] == ["vLLM (current)", "vLLM 0.11", "SGLang", "TGI", "llama.cpp"]
    current, old = found[0], found[1]
    assert current.estimate is not None and old.estimate is not None
    assert (current.estimate.version, old.estimate.version) == ("0.33.0", "0.11.0")
    # The first-principles pool: eight whole GPUs less their weights, at 320 KiB a token.
    assert current.estimate.weights_bytes is not None
    expected = 8 * (h100.total_bytes - current.estimate.weights_bytes) // (320 * 1024)
    assert current.hardware_tokens == expected
    assert current.share == pytest.approx(current.estimate.kv_cache_tokens / expected)
    assert current.share is not None and 0.5 < current.share < 1
    # vLLM current charges CUDA graphs against the pool and uses 0.92; 0.11 uses 0.9.
    assert current.estimate.memory_fraction == 0.92 and old.estimate.memory_fraction == 0.9
    # llama.cpp has no tensor parallelism: the same 8 GPUs split the layers.
    assert found[4].layout == Layout(1, 8)


def test_engines_keep_the_cache_precision(llama70b: ModelSpec, h100: GpuSpec) -> None:
    deployment = settled("vllm", spec=llama70b, gpu=h100, kv_cache_dtype="fp8")
    found = engines_compare(deployment, context=CONTEXT, layout=Layout(8), engines=ENGINES)
    vllm_row = found[0]
    assert vllm_row.estimate is not None
    assert vllm_row.estimate.bytes_per_token == 20 * 1024
    direct = account(
        settled(
            "vllm",
            spec=llama70b,
            gpu=h100,
            kv_cache_dtype="fp8",
            tensor_parallel_size=8,
            max_model_len=CONTEXT,
        )
    )
    assert vllm_row.estimate.kv_cache_tokens == direct.kv_cache_tokens


def test_fp8_cache_on_ampere_is_offered_as_storage_only(llama70b: ModelSpec) -> None:
    a100 = lookup_gpu("A100-80GB")
    assert a100 is not None and a100.supports_fp8 is False
    deployment = settled("vllm", spec=llama70b, gpu=a100)
    found = levers(deployment, context=CONTEXT, concurrency=8, layout=Layout(8), gpu_choices=())
    fp8 = row(found, "cache dtype", "fp8")
    assert fp8.offered and fp8.note == "stored, not computed, in fp8 on A100-SXM-80GB"
    assert fp8.estimate is not None and fp8.estimate.bytes_per_token == 20 * 1024
