"""Issue 18's open questions of first principles, each settled against vLLM's source and a public
start-up log, and the capacity and checkpoint terms those logs pinned.

Each real case states its inputs, the logged figures and the tolerance; the model comes from the
catalog (no network), the memory is pinned to the logged "Available KV cache memory".
"""

from __future__ import annotations

import pytest

from kvlint.arith.weights import weight_breakdown
from kvlint.engines import estimate
from kvlint.engines.vllm.accounting import SPARSE_MLA_INDEXER_BYTES
from kvlint.engines.vllm.defaults import VLLM_MERGED_CAPACITY_LINE_SINCE
from kvlint.estimate import EngineEstimate
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import dense
from testing.builders import deployment
from testing.builders import with_layers

# Michal1337/clinician-co-pilot@7b232e1f8fd6da5b4c7fce89dc137cc20b046e65 vllm.log: vLLM 0.20.2,
# google/gemma-4-26B-A4B-it on one H200, bf16, max_model_len 32,768, 8,192 batched tokens:
# "Available KV cache memory: 71.67 GiB", "GPU KV cache size: 984,297 tokens", "Maximum
# concurrency for 32,768 tokens per request: 30.04x".
GEMMA_4_26B_LOGGED_GIB = 71.67


def _gemma_4_26b(version: str) -> EngineEstimate:
    dep = deployment(
        engine_version=version,
        max_model_len=32768,
        max_num_batched_tokens=8192,
        kv_cache_memory_bytes=round(GEMMA_4_26B_LOGGED_GIB * GiB),
    )
    return estimate(dep, catalog_model("google/gemma-4-26B-A4B"), None)


def test_gemma_4_global_layers_store_v_beside_k() -> None:
    # Question 1: Gemma 4's global layers with attention_k_eq_v. vLLM's AttentionSpec keeps
    # head_size_v = head_size, so a K = V layer still stores a V tensor: 2 KV heads x 512 x 2
    # (K and V) x 2 bytes = 4 KiB a token, a 32-token block at the sliding layers' 128 KiB page
    # (8 heads x 256 x 2 x 2 bytes x 16 tokens). Grouped five layers a group (25 sliding, 5
    # global: six groups), one request of 32,768 takes 5 x (cdiv(1023 + 8192, 16) + 1) + 32768 /
    # 32 = 3,909 blocks, and the log's 30.04x is exactly that. K stored once (64-token blocks,
    # 3,397 a request) would be 34.57x, 15% more than the engine admits.
    est = _gemma_4_26b("0.20.2")
    assert est.blocks_per_request == 5 * 577 + 32768 // 32 == 3909
    assert est.max_concurrency == 30.04
    assert est.num_blocks is not None
    assert abs(est.num_blocks / (5 * 577 + 32768 // 64) - 30.04) > 4


def test_the_capacity_line_is_concurrency_times_length_from_0_20_2() -> None:
    # The same log: 984,297 tokens = int(30.04 x 32,768), not num_blocks // 6 groups x 16
    # (313,120), which the 0.19 line printed (vllm-project/vllm#40691).
    assert VLLM_MERGED_CAPACITY_LINE_SINCE == (0, 20, 2)
    new, old = _gemma_4_26b("0.20.2"), _gemma_4_26b("0.19.0")
    assert new.kv_cache_tokens == pytest.approx(984_297, rel=1e-3)
    assert old.num_blocks is not None
    assert old.kv_cache_tokens == old.num_blocks // 6 * 16
    # One full-attention group prints the same figure on both lines.
    plain = {
        v: estimate(deployment(engine_version=v, kv_cache_memory_bytes=8 * GiB), dense(), None)
        for v in ("0.19.0", "0.20.2")
    }
    assert plain["0.19.0"].kv_cache_tokens == plain["0.20.2"].kv_cache_tokens == 65536


def test_kimi_k2_thinking_int4_experts_with_16_bit_attention() -> None:
    # vllm-project/recipes@8959cf64 moonshotai/Kimi-K2-Think.md: 8 x H200, TP 8: "Available KV
    # cache memory: 46.80 GiB", "GPU KV cache size: 715,072 tokens". The checkpoint's
    # compressed-tensors config quantises the routed experts to INT4 in groups of 32 (a bf16
    # scale each: 4.5 bits) and ignores self_attn, the shared experts and the dense MLP (bf16).
    spec = catalog_model("moonshotai/Kimi-K2-Thinking")
    assert spec.quantization is not None and spec.quantization.attention_kept
    weights = weight_breakdown(spec)
    # charged module by module from its ignore list and config group (kvlint.model.layout)
    assert weights.method == "per-module precisions of the checkpoint"
    # about 594 GB in all (the checkpoint's size), 74.3 GB on each of 8 GPUs
    assert 580e9 < weights.total < 610e9
    dep = deployment(gpu="H200", tensor_parallel_size=8, kv_cache_memory_bytes=round(46.80 * GiB))
    est = estimate(dep, spec, catalog_gpu("H200"))
    assert est.kv_cache_tokens == 715_072
    free = estimate(deployment(gpu="H200", tensor_parallel_size=8), spec, catalog_gpu("H200"))
    assert free.fits is True  # sized as bf16 it was 256 GB a GPU: "refuses", on a recipe that ran


def test_kimi_k2_5_keeps_its_attention_at_16_bits_as_k2_thinking_does() -> None:
    # aiconfigurator's Kimi-K2.5 copy ignores self_attn, the shared experts and the dense MLP
    # and groups the INT4 experts by 32, as K2 Thinking's checkpoint does; the catalog's entry
    # had been written before those keys were kept, and weighed attention at 4 bits.
    k25 = catalog_model("moonshotai/Kimi-K2.5")
    thinking = catalog_model("moonshotai/Kimi-K2-Thinking")
    assert k25.quantization is not None and k25.quantization.attention_kept
    assert k25.quantization.group_size == 32
    assert abs(weight_breakdown(k25).total - weight_breakdown(thinking).total) < 0.02 * 600e9


def test_the_linear_attention_state_is_stored_in_the_model_dtype() -> None:
    # Question 2: vLLM's mamba_ssm_cache_dtype "auto" takes the conv state's dtype (the model's,
    # or --mamba-cache-dtype), so kvlint stores states in the model dtype. Left open: a config
    # that declares a float32 SSM state (Nemotron-H's mamba_ssm_cache_dtype, Qwen3.5/3.6's
    # mamba_ssm_dtype); the one such log in the corpora (Qwen3.6-35B-A3B NVFP4 on an RTX 5090,
    # 4.33x at 131,072) fits neither bf16 (4.63x) nor a float32 temporal state (4.53x).
    state = LayerSpec(CacheKind.STATE, 0, 0, 0, state_elements=1_000_000)
    spec = with_layers(dense(), (state,) * 4 + (LayerSpec(CacheKind.FULL, 8, 128, 128),) * 4)
    est = estimate(deployment(kv_cache_memory_bytes=8 * GiB), spec, None)
    assert est.num_blocks is not None and est.block_size is not None
    # The attention block grows until its page holds one state: 2,000,000 bytes of bf16 state
    # over 8 x 128 x 2 x 2 bytes a token.
    assert est.block_size * 8 * 128 * 2 * 2 >= 2 * 1_000_000


def test_deepseek_sparse_attention_keeps_an_indexer_key_cache() -> None:
    # Question 3: DeepSeek V3.2's indexer keys are counted: vLLM's sparse MLA layers carry an
    # indexer cache of 128 fp8 values and a 4-byte scale per token beside the fp8_ds_mla latent
    # (656 bytes). No public V3.2 start-up log on vLLM outside the reserved sources was found to
    # pin the figure; the term is the source's, per layer and token.
    assert SPARSE_MLA_INDEXER_BYTES == 132
    spec = catalog_model("deepseek-ai/DeepSeek-V3.2")
    # No cache dtype named: vLLM stores the sparse model's latent as fp8_ds_mla.
    dep = deployment(kv_cache_memory_bytes=8 * GiB, tensor_parallel_size=8)
    est = estimate(dep, spec, None)
    assert est.bytes_per_token == spec.num_layers * (656 + 132)


def test_decode_context_parallel_splits_a_request_over_its_ranks() -> None:
    # The same recipe with --decode-context-parallel-size 8: the same 46.80 GiB a GPU, and
    # "Multiplying the GPU KV cache size by the dcp_world_size 8. GPU KV cache size: 5,721,088
    # tokens". Each rank keeps cdiv(max_model_len, 8) of a request: eight times the requests.
    spec = catalog_model("moonshotai/Kimi-K2-Thinking")
    by_dcp = {}
    for dcp in (1, 8):
        dep = deployment(
            engine_version="0.11.0",
            tensor_parallel_size=8,
            kv_cache_memory_bytes=round(46.80 * GiB),
            settings={"decode-context-parallel-size": dcp},
        )
        by_dcp[dcp] = estimate(dep, spec, None)
    assert by_dcp[1].kv_cache_tokens == 715_072
    assert by_dcp[8].kv_cache_tokens == pytest.approx(5_721_088, rel=1e-3)
    one, eight = by_dcp[1].max_concurrency, by_dcp[8].max_concurrency
    assert one is not None and eight is not None and eight == pytest.approx(8 * one, rel=0.02)
