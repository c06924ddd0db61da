"""llama.cpp's cache: cells from -c, slots from -np, padding, K and V types, SWA, buffer MiB."""

from __future__ import annotations

from kvlint.arith.dtypes import cache_types
from kvlint.engines import estimate
from kvlint.engines.llamacpp.accounting import kv_buffer
from kvlint.engines.llamacpp.accounting import settings_for
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.units import MiB
from testing.builders import dense
from testing.builders import deployment
from testing.builders import with_layers

LLAMA_31_8B = dense()


def test_explicit_np_splits_the_context_per_slot() -> None:
    est = estimate(deployment("llamacpp", max_model_len=16384, max_num_seqs=4), LLAMA_31_8B, None)
    assert est.kv_cache_tokens == 16384
    assert est.max_model_len == 4096  # each slot: 16384 / 4
    assert est.max_concurrency == 4.0
    assert est.kv_buffer_bytes == 16384 * 128 * 1024  # 2048 MiB of f16 K+V


def test_auto_np_is_four_unified_slots_each_seeing_all_cells() -> None:
    est = estimate(deployment("llamacpp", max_model_len=8192), LLAMA_31_8B, None)
    assert est.max_model_len == 8192 and est.kv_cache_tokens == 8192
    assert est.max_concurrency == 1.0
    assert "default -np auto: 4 slots, unified KV" in est.notes


def test_context_defaults_to_the_model_and_pads_to_256() -> None:
    est = estimate(deployment("llamacpp"), LLAMA_31_8B, None)
    assert est.kv_cache_tokens == 131072
    padded = estimate(deployment("llamacpp", max_model_len=5000, max_num_seqs=1), LLAMA_31_8B, None)
    assert padded.kv_cache_tokens == 5120  # GGML_PAD(5000, 256)


def test_q8_0_k_and_v_are_34_bytes_per_32_values() -> None:
    est = estimate(
        deployment(
            "llamacpp",
            max_model_len=8192,
            max_num_seqs=1,
            kv_cache_dtype="q8_0",
            kv_cache_dtype_v="q8_0",
        ),
        LLAMA_31_8B,
        None,
    )
    # per layer per cell: 1024 values of K and of V -> 32 blocks x 34 bytes each.
    assert est.kv_buffer_bytes == 32 * 8192 * 2 * 32 * 34
    assert f"{est.kv_buffer_bytes / MiB:.2f}" == "544.00"  # f16: 1024.00 MiB


def test_quantised_v_without_flash_attention_is_refused() -> None:
    est = estimate(
        deployment(
            "llamacpp",
            max_model_len=8192,
            kv_cache_dtype="q4_0",
            kv_cache_dtype_v="q4_0",
            flash_attention="off",
        ),
        LLAMA_31_8B,
        None,
    )
    assert est.fits is False
    assert est.error == "quantized V cache requires flash_attn to be enabled"


def test_deepseek_pre_mla_layout_matches_the_logged_cuda0_buffer() -> None:
    # llamacpp-deepseek-v3-family-8gpu-np8-q4_0-k (calibration log): n_ctx 16384, n_seq_max 8,
    # type_k q4_0, type_v f16, K 128 heads x 192, V 128 x 128 per layer (pre-MLA GGUF);
    # "CUDA0 KV buffer size = 5824.00 MiB" for the 8 layers on CUDA0.
    layer = LayerSpec(CacheKind.FULL, 128, 192, 128)
    spec = with_layers(dense(), (layer,) * 8)
    s = settings_for(
        spec,
        n_ctx=16384,
        n_parallel=8,
        unified=None,
        types=cache_types("q4_0", spec.dtype, "f16"),
        swa_full=False,
        flash_attention="auto",
    )
    assert s.n_ctx_seq == 2048  # n_ctx_per_seq = 2048
    k, v = kv_buffer(spec, s)
    assert (k + v) / MiB == 5824.00


def test_sliding_layers_get_the_smaller_swa_cache() -> None:
    sliding = LayerSpec(CacheKind.SLIDING, 8, 128, 128, window=4096)
    full = LayerSpec(CacheKind.FULL, 8, 128, 128)
    spec = with_layers(dense(), (sliding, full) * 4)
    s = settings_for(
        spec,
        n_ctx=32768,
        n_parallel=1,
        unified=False,
        types=cache_types("f16", spec.dtype),
        swa_full=False,
        flash_attention=None,
    )
    k, v = kv_buffer(spec, s)
    # SWA cells: GGML_PAD(min(32768, 4096 x 1 + 512), 256) = 4608.
    assert k + v == 4 * 32768 * 4096 + 4 * 4608 * 4096
    full_s = settings_for(
        spec,
        n_ctx=32768,
        n_parallel=1,
        unified=False,
        types=cache_types("f16", spec.dtype),
        swa_full=True,
        flash_attention=None,
    )
    assert sum(kv_buffer(spec, full_s)) == 8 * 32768 * 4096


def test_explicit_context_and_pinned_layers_that_do_not_fit_are_refused() -> None:
    from kvlint.gpus import lookup_gpu

    dep = deployment(
        "llamacpp", max_model_len=131072, max_num_seqs=1, quantization="q4_k_m", n_gpu_layers=99
    )
    small = estimate(dep, LLAMA_31_8B, lookup_gpu("RTX 4070 8GB"))
    assert small.fits is False  # 16 GiB of f16 cache on an 8 GB card, -ngl pinned
    assert small.error is not None and small.error.startswith("failed to allocate the KV buffer")


def test_fit_moves_weights_when_only_the_context_is_given() -> None:
    from kvlint.gpus import lookup_gpu

    dep = deployment("llamacpp", max_model_len=131072, max_num_seqs=1, quantization="q4_k_m")
    est = estimate(dep, LLAMA_31_8B, lookup_gpu("RTX 4070 8GB"))
    assert est.fits is True and est.kv_cache_tokens == 131072
    assert any(n.startswith("llama_params_fit keeps -c") for n in est.notes)
    # A build from before --fit: the allocation fails.
    old = estimate(
        deployment(
            "llamacpp",
            engine_version="b6500",
            max_model_len=131072,
            max_num_seqs=1,
            quantization="q4_k_m",
        ),
        LLAMA_31_8B,
        lookup_gpu("RTX 4070 8GB"),
    )
    assert old.fits is False


def test_fit_lowers_an_unset_context() -> None:
    from kvlint.gpus import lookup_gpu

    gpu = lookup_gpu("RTX 4070")  # 12 GB: 16 GiB of cache for 131,072 tokens does not fit
    assert gpu is not None
    est = estimate(deployment("llamacpp", quantization="q4_k_m"), LLAMA_31_8B, gpu)
    assert est.fits is True
    # 4 unified slots over one pool: the largest 256-multiple whose cache leaves 1 GiB free.
    assert est.available_kv_bytes is not None and est.kv_buffer_bytes is not None
    budget = est.available_kv_bytes - 1024 * 2**20
    assert est.kv_buffer_bytes <= budget < est.kv_buffer_bytes + 256 * 128 * 1024
    assert est.kv_cache_tokens is not None and est.kv_cache_tokens % 256 == 0
    assert any(
        n.startswith("llama_params_fit: context size reduced from 131072 to") for n in est.notes
    )


def test_apple_unified_memory_uses_the_metal_working_set() -> None:
    from kvlint.gpus import lookup_gpu
    from kvlint.units import GiB

    mac = lookup_gpu("M3 Ultra 96GB")
    est = estimate(deployment("llamacpp", max_model_len=32768, max_num_seqs=1), LLAMA_31_8B, mac)
    assert est.available_kv_bytes == 72 * GiB - est.weights_bytes  # type: ignore[operator]
    assert "Metal working set: 72.00 of 96 GiB unified" in est.notes
