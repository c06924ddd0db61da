"""TGI: the inferred max_batch_total_tokens, block size by backend, memory fraction, wiggle room."""

from __future__ import annotations

from kvlint.engines import estimate
from kvlint.engines.tgi.defaults import tgi_block_size
from kvlint.gpus import lookup_gpu
from kvlint.units import GiB
from testing.builders import dense
from testing.builders import deployment

# Llama-3.1-70B: 80 layers, 8 KV heads, head_dim 128.
LLAMA_31_70B = dense(
    layers=80, kv_heads=8, hidden=8192, heads=64, param_count=70_553_706_496, max_len=131072
)


def test_llama_70b_on_two_a100_80gb_near_the_logged_30816() -> None:
    # tgi-llama-3.1-70b-2xa100-80g-30816 (calibration log): "Setting max batch total tokens to
    # 30816" for Llama-3.1-70B sharded over 2 A100 80GB.
    est = estimate(
        deployment("tgi", tensor_parallel_size=2, max_model_len=4096),
        LLAMA_31_70B,
        lookup_gpu("A100-80GB"),
    )
    assert est.bytes_per_token == 80 * 4 * 256 * 2  # 160 KiB per shard
    assert est.kv_cache_tokens is not None
    assert abs(est.kv_cache_tokens - 30816) / 30816 < 0.05
    assert est.fits is True


def test_max_total_tokens_above_the_budget_is_refused() -> None:
    est = estimate(
        deployment("tgi", tensor_parallel_size=2, max_model_len=131072),
        LLAMA_31_70B,
        lookup_gpu("A100-80GB"),
    )
    assert est.fits is False
    assert est.error == "Not enough memory to handle `max_total_tokens=131072`"


def test_memory_fraction_and_block_size() -> None:
    full = estimate(deployment("tgi"), dense(), lookup_gpu("H100"))
    half = estimate(deployment("tgi", memory_fraction=0.5), dense(), lookup_gpu("H100"))
    assert full.available_kv_bytes is not None and half.available_kv_bytes is not None
    assert full.available_kv_bytes - half.available_kv_bytes == round(0.5 * 0.9 * 81090 * 1024**2)
    assert full.block_size == 1  # flashinfer, TGI 3's default backend
    assert tgi_block_size("flashdecoding") == 256
    assert tgi_block_size("paged") == 16
    assert half.available_kv_bytes > 20 * GiB
