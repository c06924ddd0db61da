"""MLX (mlx_lm.server): unified memory, the wired limit, MLX bundles, rotating and quantised
caches, per-session growth; and the Mac Studio case of the source text
(``../shared/seeds/000_7b6018b6c19aca6e.txt``: an M3 Ultra 96 GB serving Gemma 4 31B from an
8-bit MLX bundle beside a TTS model and a 12 GB gateway cache, "19 sessions at 32K, 6 at
128K, 3 at 256K").
"""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.dtypes import cache_types
from kvlint.arith.kv import KvSize
from kvlint.engines import estimate
from kvlint.engines.mlx.effective import quantised_dtype
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from kvlint.model.resolve import resolve_model
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import dense
from testing.builders import deployment

MAC = catalog_gpu("M3-Ultra-96GB")
RESIDENTS = 16 * 10**9  # the text's TTS model (~4 GB) and its 12 GB gateway cache
# One session's cache at L tokens, as mlx-lm holds it: the 10 global layers keep K and V
# (4 heads x 512 x 2 B each: 8 KiB a token per layer, a KVCache in steps of 256), the 50
# sliding layers a RotatingKVCache of 1,024 tokens (16 heads x 256 x 2 x 2 B = 16 KiB).
SLIDING = 50 * 1024 * 16384  # 838,860,800 B, whatever the length
WEIGHTS = 32_614_514_688  # 30,696,013,824 parameters x 8.5 bits (8 + a bf16 scale and bias / 64)
SURPLUS = 50 * 2047 * 16384  # a prefilling session's 2,047 more tokens on each sliding layer


def gemma4_8bit() -> ModelSpec:
    return resolve_model("mlx-community/gemma-4-31b-it-8bit", offline=True).spec


def mac_studio(context: int, **fields: Any) -> EngineEstimate:
    dep = deployment(
        "mlx", claims={"context": context}, reserved_memory=RESIDENTS, gpu="M3-Ultra-96GB", **fields
    )
    return estimate(dep, gemma4_8bit(), MAC)


def test_the_8bit_bundle_carries_a_scale_and_a_bias_per_64_weights() -> None:
    est = mac_studio(32768)
    assert est.weights_bytes == WEIGHTS  # 30.37 GiB (32.6 GB), the text's "about 29 GB"
    assert "weights 30.37 GiB (parameters x 8.5 bits (mlx))" in est.notes


@pytest.mark.parametrize(
    ("context", "per_session", "sessions"),
    [
        (32768, 10 * 32768 * 8192 + SLIDING, 7),  # 3.28 GiB
        (131072, 10 * 131072 * 8192 + SLIDING, 2),  # 10.78 GiB
        (262144, 10 * 262144 * 8192 + SLIDING, 1),  # 20.78 GiB
    ],
)
def test_mac_studio_under_the_default_wired_limit(
    context: int, per_session: int, sessions: int
) -> None:
    est = mac_studio(context)
    wired = 72 * GiB  # 3/4 of 96 GiB: macOS's default GPU working set (recommendedMax...)
    assert MAC.wired_limit_bytes == wired
    assert est.available_kv_bytes == wired - RESIDENTS - WEIGHTS - SURPLUS  # 25.16 GiB
    assert est.needed_bytes_one_sequence == per_session
    assert est.admitted_sequences == sessions
    assert est.fits is True
    assert "reserved_memory 14.90 GiB held by other residents: taken off the working set" in (
        est.notes
    )


@pytest.mark.parametrize(("context", "sessions", "as_the_text"), [
    (32768, 12, 20), (131072, 3, 7), (262144, 1, 3),
])  # fmt: skip
def test_mac_studio_with_the_wired_limit_raised(
    context: int, sessions: int, as_the_text: int
) -> None:
    # sudo sysctl iogpu.wired_limit_mb=90112: 88 GiB to the GPU, 8 GiB to macOS.
    est = mac_studio(context, settings={"iogpu.wired_limit_mb": 90112})
    pool = 88 * GiB - RESIDENTS - WEIGHTS - SURPLUS
    assert est.available_kv_bytes == pool  # 41.16 GiB: the text's "roughly 40 GB for KV"
    assert est.admitted_sequences == sessions
    # The text's per-session cost (one tensor on the K = V layers: 40 KiB a token, 800 MB of
    # windows) on the same pool gives its 19 / 6 / 3 within a session.
    spec = gemma4_8bit()
    first_principles = KvSize(spec, cache_types("auto", spec.dtype)).per_sequence_bytes(context)
    assert pool // first_principles == as_the_text


def test_a_limit_above_the_memory_is_the_memory() -> None:
    est = mac_studio(32768, settings={"iogpu.wired_limit_mb": 200_000})
    assert est.available_kv_bytes == 96 * GiB - RESIDENTS - WEIGHTS - SURPLUS


def test_without_reserved_memory_nothing_is_subtracted() -> None:
    dep = deployment("mlx", claims={"context": 32768})
    est = estimate(dep, gemma4_8bit(), MAC)
    assert est.available_kv_bytes == 72 * GiB - WEIGHTS - SURPLUS
    assert not any("reserved_memory" in note for note in est.notes)


def test_decode_concurrency_is_the_cap_and_the_model_length_the_default() -> None:
    est = estimate(deployment("mlx"), gemma4_8bit(), MAC)
    assert est.max_model_len == 262144
    assert ("max_num_seqs", 32) in est.defaults
    assert "no context limit in mlx_lm.server: sized at the model's 262,144" in est.notes
    assert est.fits is True  # no length is set: a session grows until memory ends, no refusal


def test_full_attention_caches_grow_in_steps_of_256() -> None:
    spec = dense()  # Llama 3.1 8B shape: 128 KiB a token
    est = estimate(deployment("mlx", max_model_len=1000), spec, MAC)
    assert est.needed_bytes_one_sequence == 1024 * 128 * 1024


def test_max_kv_size_bounds_every_layer_of_a_model_without_its_own_caches() -> None:
    spec = dense()
    est = estimate(
        deployment("mlx", max_model_len=32768, settings={"max-kv-size": 4096}), spec, MAC
    )
    assert est.needed_bytes_one_sequence == 4096 * 128 * 1024
    gemma = mac_studio(32768, settings={"max-kv-size": 4096})
    assert "max_kv_size 4096 is ignored: the model makes its own caches (make_cache)" in (
        gemma.notes
    )


def test_quantised_cache_stores_a_scale_and_a_bias_per_group() -> None:
    q8 = quantised_dtype(8, 64)
    assert q8.block_bytes == 64 + 4 and q8.bits_per_value == 8.5
    spec = dense()
    est = estimate(
        deployment("mlx", max_model_len=8192, kv_cache_dtype="8", carrier="plan"), spec, MAC
    )
    # 32 layers x 8 heads x 128 values x 2 (K, V) x 68/64 bytes
    assert est.needed_bytes_one_sequence == 8192 * 32 * 8 * 2 * 2 * 68
    assert est.fits is True


def test_quantised_cache_with_a_rotating_cache_fails_past_the_start() -> None:
    est = mac_studio(32768, kv_cache_dtype="4")
    assert est.fits is False and est.refusal is Refusal.SETTING
    assert est.error is not None and "RotatingKVCache Quantization NYI" in est.error


def test_weights_beyond_the_working_set() -> None:
    small = lookup_gpu("M2-16GB")
    assert small is not None
    est = estimate(deployment("mlx", claims={"context": 8192}), gemma4_8bit(), small)
    assert est.fits is False and est.refusal is Refusal.WEIGHTS
    assert est.error is not None and "exceed the 11.84 GiB GPU working set" in est.error


def test_an_explicit_length_one_session_cannot_hold() -> None:
    est = mac_studio(32768, max_model_len=1_048_576)
    assert est.fits is False and est.refusal is Refusal.ONE_REQUEST
