"""Weight bytes per GPU: checkpoint size, parameters x bits, quantisation, TP and PP splits."""

from __future__ import annotations

from dataclasses import replace

from kvlint.arith.weights import pp_layer_ranges
from kvlint.arith.weights import weight_breakdown
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.model.catalog import lookup
from kvlint.model.spec import Quantization
from kvlint.units import GiB
from testing.builders import dense

LLAMA_31_8B = dense()  # 8,030,261,248 parameters, 128,256 x 4096 embedding, untied


def test_bf16_is_two_bytes_per_parameter() -> None:
    # The calibration logs load Llama-3.1-8B in 14.99 GiB ("Model loading took").
    total = weight_breakdown(LLAMA_31_8B).total
    assert abs(total - 2 * 8_030_261_248) < 32 * 4  # per-layer rounding only
    assert f"{total / GiB:.2f}" == "14.96"


def test_tp_divides_everything() -> None:
    one = weight_bytes_per_gpu(LLAMA_31_8B)
    assert weight_bytes_per_gpu(LLAMA_31_8B, tp=2) == one // 2
    assert weight_bytes_per_gpu(LLAMA_31_8B, tp=4) == one // 4


def test_pp_stages_hold_their_layers_plus_embedding_or_head() -> None:
    # Logged at PP 4: stage 0 4.26 GiB, a middle stage 3.28 GiB (the 0.98 GiB embedding apart).
    stage0 = weight_bytes_per_gpu(LLAMA_31_8B, pp=4, stage=0)
    stage2 = weight_bytes_per_gpu(LLAMA_31_8B, pp=4, stage=2)
    embedding = 128256 * 4096 * 2
    assert stage0 - stage2 == embedding
    assert f"{stage2 / GiB:.2f}" == "3.25"


def test_uneven_pp_split_follows_get_pp_indices() -> None:
    assert pp_layer_ranges(30, 4) == [(0, 7), (7, 15), (15, 23), (23, 30)]
    assert pp_layer_ranges(32, 4) == [(0, 8), (8, 16), (16, 24), (24, 32)]
    assert pp_layer_ranges(61, 8)[-1] == (54, 61)  # the last stage never gets an extra layer


def test_checkpoint_size_wins_when_known() -> None:
    # model.safetensors.index.json metadata.total_size of Llama-3.1-8B-Instruct.
    spec = replace(LLAMA_31_8B, weight_bytes=16_060_522_496)
    breakdown = weight_breakdown(spec)
    assert breakdown.method == "checkpoint size"
    assert 0 <= 16_060_522_496 - breakdown.total < 32  # the per-layer split drops a remainder
    assert breakdown.embedding == 128256 * 4096 * 2


def test_quantisation_shrinks_the_linear_layers_only() -> None:
    embed_and_head = 2 * 128256 * 4096 * 2
    body = 8_030_261_248 - 2 * 128256 * 4096
    awq = weight_breakdown(LLAMA_31_8B, "awq").total
    assert abs(awq - (embed_and_head + body * 4.25 / 8)) < 64
    fp8 = weight_breakdown(LLAMA_31_8B, "fp8").total
    assert abs(fp8 - (embed_and_head + body)) < 64
    nvfp4 = weight_breakdown(LLAMA_31_8B, "nvfp4").total
    assert abs(nvfp4 - (embed_and_head + body * 4.5 / 8)) < 64


def test_the_checkpoints_own_quantisation_applies() -> None:
    spec = replace(LLAMA_31_8B, quantization=Quantization("gptq", weight_bits=4))
    body = 8_030_261_248 - 2 * 128256 * 4096
    total = weight_breakdown(spec).total
    assert abs(total - (2 * 128256 * 4096 * 2 + body * 4.25 / 8)) < 64


def test_mxfp4_quantises_only_the_experts() -> None:
    # gpt-oss-20b's shape: 24 layers, 32 experts; attention stays 16 bit.
    spec = dense(
        layers=24,
        kv_heads=8,
        head_dim=64,
        hidden=2880,
        heads=64,
        vocab=201088,
        param_count=20_914_757_184,
    )
    spec = replace(spec, num_experts=32, quantization=Quantization("mxfp4", 4.25))
    total = weight_breakdown(spec).total
    assert 11 * GiB < total < 14 * GiB  # the checkpoint is 13.8 GB; bf16 would be 39 GiB


def test_dtype_override_float32_doubles() -> None:
    bf16 = weight_breakdown(LLAMA_31_8B).total
    assert weight_breakdown(LLAMA_31_8B, dtype="float32").total == 2 * bf16


def test_expert_shards_split_only_the_routed_experts() -> None:
    spec = lookup("deepseek-ai/DeepSeek-R1")
    assert spec is not None and spec.expert_param_count is not None
    # 58 MoE layers x 256 routed experts x 3 x 7168 x 2048.
    assert spec.expert_param_count == 58 * 256 * 3 * 7168 * 2048
    breakdown = weight_breakdown(spec)
    per_layer = breakdown.experts_per_layer[0]
    assert per_layer == spec.expert_param_count // spec.num_layers  # FP8: a byte each
    whole = weight_bytes_per_gpu(spec)
    sharded = weight_bytes_per_gpu(spec, expert_shards=32)
    # Only the routed experts shrink: 1/32 of them stay on each rank.
    routed = spec.num_layers * per_layer
    assert whole - sharded == routed - routed // 32
    assert round(sharded / 1e9, 1) == 39.4
    assert weight_bytes_per_gpu(dense(), expert_shards=32) == weight_bytes_per_gpu(dense())


def test_the_vision_tower_is_on_the_first_stage_at_the_model_dtype() -> None:
    spec = lookup("google/gemma-3-27b-it")
    assert spec is not None and spec.vision_param_count is not None
    vision = spec.vision_param_count * 2  # bfloat16
    text_only = replace(spec, vision_param_count=None)
    assert weight_breakdown(spec).vision == vision
    assert weight_breakdown(spec).total == weight_breakdown(text_only).total + vision
    # Tensor parallelism shards it; only the first pipeline stage holds it.
    tp2 = weight_bytes_per_gpu(spec, tp=2) - weight_bytes_per_gpu(text_only, tp=2)
    assert tp2 == vision // 2
    first, last = (weight_bytes_per_gpu(spec, pp=2, stage=s) for s in (0, 1))
    assert first - weight_bytes_per_gpu(text_only, pp=2, stage=0) == vision
    assert last == weight_bytes_per_gpu(text_only, pp=2, stage=1)
    # AWQ quantises the language model's linear layers, not the vision tower.
    assert weight_breakdown(spec, quantization="awq").vision == vision
    # A checkpoint size includes the tower: the layers share what is left.
    sized = weight_breakdown(replace(spec, weight_bytes=60 * 10**9))
    assert (sized.vision, sized.method) == (vision, "checkpoint size")
    assert 0 <= 60 * 10**9 - sized.total < len(spec.layers)  # only the division's remainder
