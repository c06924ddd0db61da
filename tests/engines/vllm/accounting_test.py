"""vLLM's accounting: pages, blocks, the capacity lines and the start-up check, by version."""

from __future__ import annotations

from kvlint.engines import estimate
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.units import GiB
from testing.builders import dense
from testing.builders import deployment
from testing.builders import with_layers

# Qwen2-7B-Instruct: 28 layers, 4 KV heads, head_dim 128, bf16 -> 56 KiB per token.
QWEN2_7B = dense(
    layers=28, kv_heads=4, head_dim=128, hidden=3584, heads=28, vocab=152064, max_len=32768
)


def test_design_reference_qwen2_7b_on_vllm_0_10() -> None:
    # DESIGN.md / dennislee22/vLLM-benchmarking@b474d1e log/vllm-7B-1gpuA10080GB-0.5GRAM.log:
    # "Available KV cache memory: 24.83 GiB" -> "GPU KV cache size: 464,848 tokens",
    # "Maximum concurrency for 16,384 tokens per request: 28.37x". The GiB is rounded.
    dep = deployment(
        engine_version="0.10.1.1",
        gpu="A100-80GB",
        max_model_len=16384,
        kv_cache_memory_bytes=round(24.83 * GiB),
    )
    est = estimate(dep, QWEN2_7B, None)
    assert est.bytes_per_token == 56 * 1024
    assert est.num_blocks == 29058  # 24.83 GiB // (16 x 56 KiB)
    assert est.kv_cache_tokens == 464_928
    assert abs(est.kv_cache_tokens - 464_848) / 464_848 < 0.0002
    assert est.max_concurrency == 28.38  # logged 28.37x: the same rounding of 24.83
    assert est.fits is True


def test_tp_above_kv_heads_replicates() -> None:
    # 4 KV heads at TP 8 (32 query heads divide by 8): each GPU keeps max(1, 4 // 8) = 1 head,
    # not half a head.
    spec = dense(layers=28, kv_heads=4, heads=32)
    dep = deployment(engine_version="0.11.0", tensor_parallel_size=8, kv_cache_memory_bytes=GiB)
    est = estimate(dep, spec, None)
    assert est.bytes_per_token == 28 * 1 * 256 * 2  # 14 KiB: one head per GPU
    assert est.num_blocks == GiB // (16 * 14336)


def test_tp_that_does_not_divide_the_heads_is_refused() -> None:
    # Qwen2-7B's 28 query heads over TP 8: vLLM refuses the parallel config at start.
    dep = deployment(engine_version="0.11.0", tensor_parallel_size=8, kv_cache_memory_bytes=GiB)
    est = estimate(dep, QWEN2_7B, None)
    assert est.fits is False and est.refusal is Refusal.LAYOUT
    assert est.error == "28 attention heads do not divide by TP 8"


def test_pp_uneven_layers_take_the_fullest_stage() -> None:
    # 30 layers over PP 4: get_pp_indices gives 7, 8, 8, 7 (the remainder goes to stages -2, -3).
    spec = dense(layers=30, vocab=32000, hidden=4096)
    dep = deployment(
        engine_version="0.11.0", pipeline_parallel_size=4, kv_cache_memory_bytes=8 * GiB
    )
    est = estimate(dep, spec, None)
    per_token = 8 * 8 * 128 * 2 * 2  # the 8-layer stage
    assert est.bytes_per_token == per_token
    assert est.num_blocks == 8 * GiB // (16 * per_token)


def test_fp8_cache_halves_the_page() -> None:
    dep = deployment(engine_version="0.11.0", kv_cache_dtype="fp8", kv_cache_memory_bytes=GiB)
    est = estimate(dep, QWEN2_7B, None)
    assert est.bytes_per_token == 28 * 1024
    assert est.kv_cache_tokens == GiB // (16 * 28 * 1024) * 16


def test_mla_keeps_one_latent_whatever_the_tp() -> None:
    mla = LayerSpec(CacheKind.MLA, 1, 576, 0)
    spec = with_layers(dense(), (mla,) * 61, model_type="deepseek_v3", num_key_value_heads=1)
    dep = deployment(
        engine_version="0.11.0",
        tensor_parallel_size=8,
        max_model_len=8192,
        kv_cache_memory_bytes=GiB,
    )
    est = estimate(dep, spec, None)
    assert est.block_size == 64  # FlashMLA's block size
    assert est.bytes_per_token == 61 * 576 * 2  # 70,272 B: not split by TP
    assert est.num_blocks == GiB // (64 * 61 * 576 * 2)


def test_hybrid_padding_gemma3_27b() -> None:
    # 62 layers: 52 sliding (window 1024), 10 full. Groups of 10 layers: 6 sliding groups (8
    # padding layers) + 1 full group. The 0.19 log (llm-d-planner@d3121e0, gemma-3-27b-it, TP 1):
    # "Available KV cache memory: 19.53 GiB" -> "GPU KV cache size: 36,560 tokens",
    # "Maximum concurrency for 8,192 tokens per request: 4.46x".
    full = LayerSpec(CacheKind.FULL, 16, 128, 128)
    sliding = LayerSpec(CacheKind.SLIDING, 16, 128, 128, window=1024)
    layers = tuple(full if i % 6 == 5 else sliding for i in range(62))
    assert sum(1 for layer in layers if layer.kind is CacheKind.FULL) == 10
    spec = with_layers(
        dense(), layers, hidden_size=5376, vocab_size=262208, model_type="gemma3_text"
    )
    dep = deployment(
        engine_version="0.19.0",
        max_model_len=8192,
        max_num_batched_tokens=8192,
        kv_cache_memory_bytes=round(19.53 * GiB),
    )
    est = estimate(dep, spec, None)
    assert any("8 padding layers" in note for note in est.notes)
    assert est.num_blocks == 15998  # 19.53 GiB // (10 layers x 128 KiB)
    assert est.kv_cache_tokens == 36_560  # 15998 // 7 groups x 16
    assert est.max_concurrency == 4.46  # 15998 / (512 + 6 x 513) blocks


def test_refusal_with_vllm_error_numbers() -> None:
    # One 32,768-token request of Qwen2-7B needs 1.75 GiB; only 1 GiB is there.
    dep = deployment(engine_version="0.11.0", max_model_len=32768, kv_cache_memory_bytes=GiB)
    est = estimate(dep, QWEN2_7B, None)
    assert est.fits is False
    assert est.needed_bytes_one_sequence == 32768 * 56 * 1024
    assert est.estimated_max_model_len == GiB // (56 * 1024) // 16 * 16
    assert est.error is not None
    assert est.error.startswith(
        "To serve at least one request with the models's max seq len (32768), (1.75 GiB KV cache"
    )
    assert "the estimated maximum model length is 18720." in est.error


def test_mamba_hybrid_raises_the_attention_block_size() -> None:
    # Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers (548,864 state values each) + 12 full layers
    # (2 KV heads x 256). vLLM logs "Setting attention block size to 544 tokens to ensure that
    # attention page size is >= mamba page size": 16 x cdiv(1,097,728 B, 16 x 2,048 B).
    state = LayerSpec(CacheKind.STATE, state_elements=548_864)
    full = LayerSpec(CacheKind.FULL, 2, 256, 256)
    layers = tuple(full if i % 4 == 3 else state for i in range(48))
    spec = with_layers(dense(), layers, model_type="qwen3_next")
    dep = deployment(engine_version="0.11.0", max_model_len=32768, kv_cache_memory_bytes=20 * GiB)
    est = estimate(dep, spec, None)
    assert est.block_size == 544
    page = 544 * 2048
    # 12 layers per group: 3 state groups + 1 attention group, one page per layer per block.
    assert est.num_blocks == 20 * GiB // (12 * page)
    # A request: 1 block per state group + cdiv(32768, 544) attention blocks.
    assert est.blocks_per_request == 3 + 61
    assert est.kv_cache_tokens == est.num_blocks // 4 * 544  # type: ignore[operator]


def test_current_line_reports_concurrency_times_length_for_sliding_models() -> None:
    # gpt-oss style: 12 sliding (window 128) + 12 full layers.
    sliding = LayerSpec(CacheKind.SLIDING, 8, 64, 64, window=128)
    full = LayerSpec(CacheKind.FULL, 8, 64, 64)
    spec = with_layers(dense(), (sliding, full) * 12)
    old = estimate(
        deployment(
            engine_version="0.11.0",
            max_model_len=65536,
            max_num_batched_tokens=2048,
            kv_cache_memory_bytes=8 * GiB,
        ),
        spec,
        None,
    )
    new = estimate(
        deployment(
            engine_version="0.33.0",
            max_model_len=65536,
            max_num_batched_tokens=2048,
            kv_cache_memory_bytes=8 * GiB,
        ),
        spec,
        None,
    )
    assert old.num_blocks == new.num_blocks == 8 * GiB // (12 * 16 * 2048)
    # 0.11: num_blocks // 2 groups x 16; sliding blocks per request cdiv(127 + 2048, 16) + 1.
    assert old.kv_cache_tokens == old.num_blocks // 2 * 16  # type: ignore[operator]
    assert old.blocks_per_request == 4096 + 137
    # current: two batches in flight (async scheduling): cdiv(127 + 4096, 16) + 1 = 265.
    assert new.blocks_per_request == 4096 + 265
    assert new.kv_cache_tokens == int(new.num_blocks / (4096 + 265) * 65536)  # type: ignore[operator]
    assert new.kv_cache_tokens > old.kv_cache_tokens  # type: ignore[operator]


def test_current_line_charges_cuda_graphs_and_defaults_to_0_92() -> None:
    h100 = lookup_gpu("H100")
    old = estimate(deployment(engine_version="0.20.0", max_model_len=8192), QWEN2_7B, h100)
    new = estimate(deployment(engine_version="0.21.0", max_model_len=8192), QWEN2_7B, h100)
    assert old.memory_fraction == 0.9 and new.memory_fraction == 0.92
    assert old.cudagraph_bytes == 0
    assert new.cudagraph_bytes is not None and new.cudagraph_bytes > 0
    eager = estimate(
        deployment(engine_version="0.21.0", max_model_len=8192, enforce_eager=True), QWEN2_7B, h100
    )
    assert eager.cudagraph_bytes == 0


def test_kv_cache_memory_bytes_ignores_gpu_memory_utilization() -> None:
    h100 = lookup_gpu("H100")
    a = estimate(deployment(memory_fraction=0.5, kv_cache_memory_bytes=10 * GiB), QWEN2_7B, h100)
    b = estimate(deployment(memory_fraction=0.9, kv_cache_memory_bytes=10 * GiB), QWEN2_7B, h100)
    assert a.available_kv_bytes == b.available_kv_bytes == 10 * GiB
    assert "kv_cache_memory_bytes set: gpu_memory_utilization is ignored" in a.notes


def test_null_block_is_reserved_before_the_check_in_the_current_line() -> None:
    # Exactly one request's worth of memory: 0.11 starts, the current line (one block kept
    # back as the null block) refuses.
    exact = 2048 * 56 * 1024
    old = estimate(
        deployment(engine_version="0.11.0", max_model_len=2048, kv_cache_memory_bytes=exact),
        QWEN2_7B,
        None,
    )
    new = estimate(
        deployment(engine_version="0.33.0", max_model_len=2048, kv_cache_memory_bytes=exact),
        QWEN2_7B,
        None,
    )
    assert old.fits is True
    assert new.fits is False and new.estimated_max_model_len == 2032
    assert new.error is not None and new.error.startswith(
        "To serve at least one request with the model's max seq len (2048), (0.11 GiB"
    )


def test_weights_beyond_the_budget_leave_no_memory() -> None:
    est = estimate(
        deployment(max_model_len=4096), dense(param_count=70_000_000_000), lookup_gpu("L4")
    )
    assert est.fits is False
    assert est.error is not None and est.error.startswith(
        "No available memory for the cache blocks."
    )


def test_max_model_len_beyond_the_model_is_refused() -> None:
    est = estimate(deployment(max_model_len=65536, kv_cache_memory_bytes=GiB), QWEN2_7B, None)
    assert est.fits is False
    assert est.error is not None and est.error.startswith(
        "User-specified max_model_len (65536) is greater than the derived max_model_len "
        "(max_position_embeddings=32768"
    )
    allowed = estimate(
        deployment(
            max_model_len=65536,
            kv_cache_memory_bytes=8 * GiB,
            env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"},
        ),
        QWEN2_7B,
        None,
    )
    assert allowed.fits is True


def test_no_gpu_means_no_available_memory_but_still_the_page() -> None:
    est = estimate(deployment(max_model_len=8192), QWEN2_7B, None)
    assert est.available_kv_bytes is None
    assert est.missing == ("GPU type",)


def test_utilization_above_the_free_memory_refuses_at_startup() -> None:
    # 0.99 of an RTX 4090's 23.99 GiB is more than the 23.48 GiB free after the CUDA context.
    est = estimate(
        deployment(engine_version="0.11.0", memory_fraction=0.99, max_model_len=4096),
        QWEN2_7B,
        lookup_gpu("RTX 4090"),
    )
    assert est.fits is False
    assert est.error == (
        "Free memory on device (23.48/23.99 GiB) on startup is less than desired GPU memory "
        "utilization (0.99, 23.75 GiB). Decrease GPU memory utilization or reduce GPU memory "
        "used by other processes."
    )


def test_gemma4_windows_are_paged_as_windows_on_the_0_11_line() -> None:
    # huggingface.co/LargitData/gemma-4-31b-it-fp8 (model card, "Observed runtime capacity"):
    # the vllm/vllm-openai:gemma4 image on an H200 NVL, fp8 cache, max_model_len 32768, 8192
    # batched tokens: "available KV cache memory: 55.22 GiB", "GPU KV cache size: 120,624
    # tokens", "maximum concurrency at 32,768 tokens/request: 11.57x". Gemma 4 31B: 50 sliding
    # layers of 16 x 256 (window 1024), 10 global K = V layers of 4 x 512 (V stored beside K).
    sliding = LayerSpec(CacheKind.SLIDING, 16, 256, 256, window=1024)
    glob = LayerSpec(CacheKind.FULL_KV_SHARED, 4, 512, 0)
    layers = tuple(glob if i % 6 == 5 else sliding for i in range(60))
    spec = with_layers(dense(), layers, model_type="gemma4", max_position_embeddings=262144)
    dep = deployment(
        engine_version="0.20.0",
        kv_cache_dtype="fp8",
        max_model_len=32768,
        max_num_batched_tokens=8192,
        kv_cache_memory_bytes=round(55.22 * GiB),
    )
    est = estimate(dep, spec, None)
    # Grouped by the hybrid allocator: 5 sliding groups + 1 global (its block doubled to 32
    # tokens to match the page), 10 layers x 16 tokens x 8 KiB a block: 45,236 blocks.
    assert est.num_blocks == round(55.22 * GiB) // (10 * 16 * 8192) == 45_236
    # The 0.11 capacity line: num_blocks // 6 groups x 16, and blocks over one request's
    # 5 x (cdiv(1023 + 8192, 16) + 1) + 32768 / 32 = 3909 blocks.
    assert est.kv_cache_tokens == 45_236 // 6 * 16 == 120_624
    assert est.blocks_per_request == 5 * 577 + 1024
    assert est.max_concurrency == 11.57
    # Every layer at full length would log 131,590 tokens and 4.02x instead.
    assert est.windowed_tokens is not None and est.windowed_tokens > est.kv_cache_tokens


def test_auto_max_model_len_fits_instead_of_refusing() -> None:
    # -1 / auto on the current line: _auto_fit_max_model_len shrinks the length to what fits.
    dep = deployment(engine_version="0.33.0", max_model_len=-1, kv_cache_memory_bytes=GiB)
    est = estimate(dep, QWEN2_7B, None)
    assert est.fits is True
    assert est.max_model_len == (GiB - 16 * 56 * 1024) // (56 * 1024) // 16 * 16 == 18704
    assert "Auto-fit max_model_len: reduced from 32768 to 18704" in " ".join(est.notes)
    # 0.11 has no auto-fit: the model's length, and the refusal.
    old = estimate(
        deployment(engine_version="0.11.0", max_model_len=-1, kv_cache_memory_bytes=GiB),
        QWEN2_7B,
        None,
    )
    assert old.fits is False and old.max_model_len == 32768


def test_cpu_offload_moves_weights_off_the_gpu() -> None:
    h100 = lookup_gpu("H100")
    plain = estimate(deployment(max_model_len=8192), QWEN2_7B, h100)
    offloaded = estimate(
        deployment(max_model_len=8192, settings={"cpu-offload-gb": 4}), QWEN2_7B, h100
    )
    assert plain.weights_bytes is not None and offloaded.weights_bytes is not None
    assert plain.weights_bytes - offloaded.weights_bytes == 4 * GiB
    assert offloaded.available_kv_bytes - plain.available_kv_bytes == 4 * GiB  # type: ignore[operator]


def test_admitted_holds_back_the_null_block() -> None:
    # 20,480 blocks of 16 tokens (40 GiB at 128 KiB a token); one 8,192-token request takes
    # 512 blocks: vLLM prints 40.00x, its scheduler holds (20,480 - 1) // 512 = 39.
    dep = deployment(max_model_len=8192, kv_cache_memory_bytes=40 * GiB)
    est = estimate(dep, dense(), None)
    assert (est.num_blocks, est.blocks_per_request, est.max_concurrency) == (20480, 512, 40.0)
    assert est.admitted_sequences == 39
