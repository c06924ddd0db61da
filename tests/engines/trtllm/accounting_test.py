"""TensorRT-LLM's pool: free memory after weights and buffers x free_gpu_memory_fraction (or a
budget), per rank, in whole blocks of tokens_per_block."""

from __future__ import annotations

from kvlint.engines import account
from kvlint.engines.trtllm.accounting import activation_bytes
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from kvlint.units import GiB
from testing.builders import LLAMA_31_8B
from testing.builders import catalog_model
from testing.builders import model
from testing.builders import settled

SPEC = model(LLAMA_31_8B, "meta-llama/Llama-3.1-8B-Instruct")
H100 = lookup_gpu("H100")


def test_given_budget_the_pool_is_whole_blocks_of_the_per_rank_token_size() -> None:
    # 16 GiB for an fp8 cache: 32 layers x 8 heads x 128 x (K + V) x 1 byte = 64 KiB a token,
    # 262,144 tokens, 8,192 blocks of 32.
    s = settled("trtllm", spec=SPEC, gpu=None, kv_cache_dtype="fp8", kv_cache_memory_bytes=16 * GiB)
    e = account(s)
    assert e.bytes_per_token == 64 * 1024
    assert e.num_blocks == 8192 and e.kv_cache_tokens == 262_144 and e.block_size == 32


def test_blocks_round_up_as_the_runtime_does() -> None:
    # ceilDiv(maxTokens, tokensPerBlock): one token past a block is one more block.
    budget = (100 * 32 + 1) * 128 * 1024
    e = account(settled("trtllm", spec=SPEC, gpu=None, kv_cache_memory_bytes=budget))
    assert e.num_blocks == 101 and e.kv_cache_tokens == 101 * 32


def test_pool_from_gpu_is_fraction_of_what_is_free_after_weights_and_buffers() -> None:
    assert H100 is not None
    s = settled("trtllm", spec=SPEC, gpu=H100, memory_fraction=0.9)
    e = account(s)
    assert e.weights_bytes is not None and e.available_kv_bytes is not None
    held = round(0.6 * GiB) + activation_bytes(SPEC, 8192, 1)
    assert e.available_kv_bytes == int((H100.total_bytes - held - e.weights_bytes) * 0.9)
    assert e.fits is True and e.block_size == 32


def test_max_tokens_caps_the_pool() -> None:
    assert H100 is not None
    s = settled("trtllm", spec=SPEC, gpu=H100, extras={"kv-cache-config.max-tokens": 10_000})
    e = account(s)
    assert e.kv_cache_tokens == 10_016  # 313 blocks of 32


def test_one_request_that_does_not_fit_is_shortened_not_refused() -> None:
    # 82 blocks of 64 tokens: "they are reduced to 5185" ((82 - 1) x 64 + 1), as published.
    budget = 82 * 64 * 128 * 1024
    s = settled(
        "trtllm",
        spec=SPEC,
        gpu=None,
        kv_cache_memory_bytes=budget,
        block_size=64,
        max_model_len=131072,
    )
    e = account(s)
    assert e.fits is True and e.num_blocks == 82 and e.shortened_max_model_len == 5185
    fail = settled(
        "trtllm",
        spec=SPEC,
        gpu=None,
        kv_cache_memory_bytes=budget,
        block_size=64,
        max_model_len=131072,
        extras={"fail-fast": True},
    )
    refused = account(fail)
    assert refused.fits is False and refused.refusal is Refusal.ONE_REQUEST


def test_heads_below_tp_are_duplicated_per_rank() -> None:
    # 8 KV heads at TP 16: each rank still holds one whole head (ceil(8 / 16) = 1).
    s = settled("trtllm", spec=SPEC, gpu=None, kv_cache_memory_bytes=GiB, tensor_parallel_size=16)
    e = account(s)
    assert e.refusal is Refusal.LAYOUT or e.bytes_per_token == 32 * 2 * 128 * 2


def test_engines_of_older_trtllm_build_page_in_64() -> None:
    s = settled(
        "trtllm",
        spec=SPEC,
        gpu=None,
        engine_version="0.13.0",
        extras={"backend": "tensorrt"},
        kv_cache_memory_bytes=GiB,
    )
    assert s.block_size is not None and s.block_size.value == 64
    assert settled("trtllm", spec=SPEC, gpu=None).block_size.value == 32  # type: ignore[union-attr]


def test_sliding_window_layers_share_the_pool_by_their_window() -> None:
    # Gemma 3 27B in an engine built by trtllm-build: 52 of 62 layers keep a 1,024-token window.
    # At max_seq_len 32,768 a token of the full-attention pool costs the global layers' bytes
    # plus 1,024 / 32,768 of the local layers' (the pools split memory by window x per-token
    # size).
    from kvlint.engines.trtllm.accounting import layer_bytes
    from testing.builders import catalog_model

    spec = catalog_model("google/gemma-3-27b-it")
    s = settled(
        "trtllm",
        spec=spec,
        gpu=None,
        max_model_len=32768,
        kv_cache_memory_bytes=GiB,
        extras={"backend": "tensorrt"},
    )
    e = account(s)
    assert s.cache_types is not None
    full = sum(layer_bytes(x, s.cache_types, 1) for x in spec.layers if not x.kind.bounded)
    local = sum(layer_bytes(x, s.cache_types, 1) for x in spec.layers if x.kind.bounded)
    windows = {x.window for x in spec.layers if x.kind.bounded}
    assert windows == {1024}
    assert e.bytes_per_token == round(full + local * 1024 / 32768)


def test_the_pytorch_backend_sizes_sliding_window_layers_for_max_seq_len() -> None:
    # trtllm-serve 1.1.0rc3, gpt-oss-120b on a DGX Spark (jeansblog/trt_llm README): "kv size is
    # 73728" -- 36 layers x 8 KV heads x 64 x K and V x 2 bytes, the 18 sliding-window layers at
    # full length -- and one window in max_attention_window_vec. With no
    # kv_cache_config.max_attention_window the PyTorch backend keeps [max_seq_len] for every layer.
    from testing.builders import catalog_model

    spec = catalog_model("openai/gpt-oss-120b")
    assert any(x.kind.bounded and x.window for x in spec.layers)
    s = settled("trtllm", spec=spec, gpu=None, max_model_len=131072, kv_cache_memory_bytes=GiB)
    e = account(s)
    assert e.bytes_per_token == 73728
    assert e.blocks_per_request == 131072 // 32
    assert any("max_attention_window" in n for n in e.notes)


def test_one_window_for_every_layer_is_one_pool_of_whole_tokens() -> None:
    # Mistral 7B v0.1 keeps 4,096 tokens in every layer: nothing to split, a token costs the
    # full 128 KiB (32 layers x 8 heads x 128 x K and V x 2 bytes), as the 0.9 runtime printed
    # 5,167,382,528 bytes for 39,424 tokens; a request holds at most its window.
    from testing.builders import catalog_model

    spec = catalog_model("mistralai/Mistral-7B-v0.1")
    s = settled(
        "trtllm",
        spec=spec,
        gpu=None,
        max_model_len=32768,
        kv_cache_memory_bytes=GiB,
        extras={"backend": "tensorrt"},
    )
    e = account(s)
    assert e.bytes_per_token == 128 * 1024
    assert e.blocks_per_request == 4096 // 32


def test_attention_data_parallelism_gives_each_rank_requests_of_its_own() -> None:
    # DeepSeek-V2-Lite at TP 4: an MLA latent is one head on every rank, so plain TP keeps the
    # same tokens four times; with enable_attention_dp the four pools hold different requests.
    from testing.builders import catalog_model

    spec = catalog_model("deepseek-ai/DeepSeek-V2-Lite-Chat")
    common = {"spec": spec, "gpu": None, "kv_cache_memory_bytes": GiB, "tensor_parallel_size": 4}
    plain_tp = account(settled("trtllm", **common))
    dp = account(settled("trtllm", extras={"enable-attention-dp": True}, **common))
    assert plain_tp.bytes_per_token == dp.bytes_per_token
    assert plain_tp.num_blocks is not None and dp.num_blocks == 4 * plain_tp.num_blocks
    assert dp.kv_cache_tokens == 4 * (plain_tp.kv_cache_tokens or 0)


def test_the_c_plus_plus_runtimes_buffers_are_per_sequence_slot() -> None:
    # Llama 3.1 8B (vocabulary 128,256), 2,048 slots of 2,048 tokens: float32 logits, the
    # decoder state's four int32/float32 rows of max_seq_len and its 16-bit embedding bias,
    # and the top-P workspace's float32 probabilities + int32 ids + int32 id values.
    from kvlint.engines.trtllm.accounting import decoder_bytes

    slots, vocab, length = 2048, 128_256, 2048
    expected = slots * vocab * 4 + slots * 16 * length + slots * vocab * 2 + slots * vocab * 12
    assert decoder_bytes(SPEC, slots, 1, length) == expected
    assert decoder_bytes(SPEC, slots, 2, length) > expected  # beams are slots of their own


def test_auto_follows_a_modelopt_checkpoints_cache_quantisation() -> None:
    # javiercancela/javiercancela.github.io@6d019e8 _posts/2025-11-22-tensorrt-llm.md:
    # nvidia/Qwen3-8B-FP8 through the LLM API of 1.2.0rc2, no kv_cache_config.dtype:
    # "Allocated 3.17 GiB for max tokens in paged KV cache (46208)", primary blocks=1444.
    fp8 = catalog_model("nvidia/Qwen3-8B-FP8")
    budget = round(3.17 * GiB)
    e = account(settled("trtllm", spec=fp8, gpu=None, kv_cache_memory_bytes=budget))
    assert e.bytes_per_token == 36 * 8 * 128 * 2  # 72 KiB: one byte per value
    assert e.num_blocks == 1443  # the log's 1,444 less the 0.005 GiB its rounding hides
    assert any("the checkpoint's fp8_e4m3 cache" in note for note in e.notes)
    # A dtype the file states wins over the checkpoint's.
    wide = account(
        settled("trtllm", spec=fp8, gpu=None, kv_cache_memory_bytes=budget, kv_cache_dtype="bf16")
    )
    assert wide.bytes_per_token == 2 * e.bytes_per_token


def test_only_modelopt_checkpoints_make_auto_quantised() -> None:
    declared = {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}
    scheme = {
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 8}}},
        "kv_cache_scheme": {"num_bits": 8, "type": "float"},
    }
    per_token = {}
    for name, quant in (("modelopt", declared), ("compressed", scheme), ("none", None)):
        config = {**LLAMA_31_8B, "quantization_config": quant}
        spec = model(config, f"test/{name}")
        s = settled("trtllm", spec=spec, gpu=None, kv_cache_memory_bytes=GiB)
        per_token[name] = account(s).bytes_per_token
    assert per_token["modelopt"] == 64 * 1024
    assert per_token["compressed"] == per_token["none"] == 128 * 1024
