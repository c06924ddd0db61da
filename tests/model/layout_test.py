"""Per-module precisions of quantised checkpoints (kvlint.model.layout) and the weights they
charge layer by layer (kvlint.arith.weights)."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.weights import weight_breakdown
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.model.catalog import lookup
from kvlint.model.hf import spec_from_config
from kvlint.model.layout import NVFP4_BITS
from kvlint.model.layout import compact_names
from kvlint.model.layout import compact_quantization
from kvlint.model.layout import role_of
from kvlint.model.spec import WeightLayout

GiB = 1 << 30

# A Qwen3-MoE shaped model small enough to count by hand: 4 layers, hidden 256, 8 experts of 64.
_MOE: dict[str, Any] = {
    "model_type": "qwen3_moe",
    "hidden_size": 256,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "intermediate_size": 512,
    "moe_intermediate_size": 64,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def _layout(quantization: dict[str, Any], config: dict[str, Any] = _MOE) -> WeightLayout:
    spec = spec_from_config({**config, "quantization_config": quantization}, name="t")
    assert spec.quantization is not None and spec.quantization.layout is not None
    return spec.quantization.layout


def _mixed(layers: dict[str, str]) -> dict[str, Any]:
    return {
        "quant_method": "modelopt",
        "quant_algo": "MIXED_PRECISION",
        "quantized_layers": {name: {"quant_algo": algo} for name, algo in layers.items()},
    }


@pytest.mark.parametrize(
    ("name", "role", "layer"),
    [
        ("model.language_model.layers.3.self_attn.q_proj", "mixer", 3),
        ("model.language_model.layers.0.linear_attn.in_proj_qkv", "mixer", 0),
        ("backbone.layers.6.mixer.in_proj", "mixer", 6),
        ("backbone.layers.1.mixer.experts.511.up_proj", "experts", 1),
        ("model.layers.2.mlp.experts", "experts", 2),
        ("backbone.layers.1.mixer.shared_experts.down_proj", "shared", 1),
        ("model.layers.0.mlp.shared_expert.gate_proj", "shared", 0),
        ("backbone.layers.3.mixer.fc2_latent_proj", "latent", 3),
        ("model.layers.5.mlp.gate", "router", 5),
        ("model.layers.5.mlp.gate_proj", "mlp", 5),
        ("lm_head", "head", None),
        ("mtp*", "mtp", None),
        ("re:.*self_attn.*", "mixer", None),
        ("re:.*mlp.gate$", "router", None),
        ("model.visual.blocks.0.attn.qkv", "vision", None),
    ],
)
def test_a_module_name_gives_its_role_and_layer(name: str, role: str, layer: int | None) -> None:
    found, at, _ = role_of(name)
    assert (found, at) == (role, layer)


def test_a_modelopt_layer_map_keeps_every_module_it_does_not_name_at_16_bits() -> None:
    # nvidia/Qwen3.6-35B-A3B-NVFP4's recipe in small: NVFP4 experts, shared experts and
    # lm_head, FP8 attention (ai-dynamo/aiconfigurator@90f7fc0fc, its hf_quant_config.json).
    layers = {"lm_head": "W4A16_NVFP4"}
    for i in range(4):
        layers[f"model.layers.{i}.mlp.experts"] = "W4A16_NVFP4"
        for leaf in ("q_proj", "k_proj", "v_proj", "o_proj"):
            layers[f"model.layers.{i}.self_attn.{leaf}"] = "FP8"
    layout = _layout(_mixed(layers))
    assert layout.default is None
    assert layout.bits("experts", 2) == NVFP4_BITS
    assert layout.bits("mixer", 0) == 8.0
    assert layout.bits("head") == NVFP4_BITS
    assert layout.bits("embedding") is None
    assert layout.bits("router", 1) is None
    assert layout.bits("mtp") is None


def test_a_role_named_in_part_charges_the_rest_at_16_bits() -> None:
    # Nemotron 3 Super NVFP4's layer 69: only o_proj is FP8, q/k/v stay BF16.
    layout = _layout(_mixed({"model.layers.1.self_attn.o_proj": "FP8"}))
    assert layout.bits("mixer", 1) == (8 + 16 * 3) / 4
    assert layout.bits("mixer", 0) is None


def test_an_exclude_list_keeps_its_modules_at_16_bits_and_quantises_the_rest() -> None:
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4's form: one quant_algo, exclude_modules.
    quantization = {
        "quant_method": "modelopt",
        "quant_algo": "NVFP4",
        "exclude_modules": ["lm_head", "model.layers.1.self_attn.q_proj", *[
            f"model.layers.1.self_attn.{p}" for p in ("k_proj", "v_proj", "o_proj")
        ], "model.layers.0.mixer.conv1d"],
    }  # fmt: skip
    layout = _layout(quantization)
    assert layout.default == NVFP4_BITS
    assert layout.bits("mixer", 1) == 16.0
    assert layout.bits("mixer", 0) == NVFP4_BITS  # a conv weight excluded is no projection
    assert layout.bits("head") == 16.0
    assert layout.bits("experts", 3) == NVFP4_BITS


def test_compressed_tensors_groups_and_ignore_give_each_role_its_scheme() -> None:
    # llm-compressor's mixed scheme: FP8 attention, NVFP4 experts, lm_head and routers ignored.
    quantization = {
        "quant_method": "compressed-tensors",
        "config_groups": {
            "group_0": {
                "targets": ["re:.*self_attn.*"],
                "weights": {"num_bits": 8, "type": "float"},
            },
            "group_1": {
                "targets": ["re:.*mlp.experts.*"],
                "weights": {"num_bits": 4, "type": "float", "group_size": 16},
            },
        },
        "ignore": ["lm_head", "re:.*mlp.gate$"],
    }
    layout = _layout(quantization)
    assert layout.bits("mixer", 3) == 8.0
    assert layout.bits("experts", 0) == NVFP4_BITS
    assert layout.bits("head") == 16.0
    assert layout.bits("router", 0) == 16.0


def test_an_int4_linear_group_with_attention_ignored_keeps_attention_at_16_bits() -> None:
    # Kimi K2 Thinking's form: Linear INT4 in groups of 32, self_attn and shared experts ignored.
    quantization = {
        "quant_method": "compressed-tensors",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {"num_bits": 4, "type": "int", "group_size": 32, "symmetric": True},
            }
        },
        "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_expert.*"],
    }
    layout = _layout(quantization)
    assert layout.default == 4 + 16 / 32
    assert layout.bits("experts", 1) == 4 + 16 / 32
    assert layout.bits("mixer", 1) == 16.0
    assert layout.bits("shared", 2) == 16.0


def test_gptq_dynamic_skips_and_overrides_modules() -> None:
    quantization = {
        "quant_method": "gptq",
        "bits": 4,
        "group_size": 128,
        "dynamic": {"-:.*self_attn.*": {}, "+:.*mlp.experts.*": {"bits": 8}},
    }
    layout = _layout(quantization)
    assert layout.bits("mixer", 0) == 16.0
    assert layout.bits("experts", 2) == 8 + (16 + 8) / 128
    assert layout.default == 4 + 16 / 128


def test_a_checkpoint_of_one_precision_has_no_layout() -> None:
    spec = spec_from_config(
        {**_MOE, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3"}}, name="t"
    )
    assert spec.quantization is not None and spec.quantization.layout is None


def test_a_compacted_layer_map_reads_back_to_the_same_layout() -> None:
    names = {f"model.layers.{i}.mlp.experts.{e}.{leaf}": "NVFP4" for i in (1, 3)
             for e in range(8) for leaf in ("up_proj", "down_proj")}  # fmt: skip
    names |= {"model.layers.0.self_attn.o_proj": "FP8", "model.layers.2.self_attn.o_proj": "FP8"}
    full = _mixed(names)
    compact = compact_quantization(full)
    assert len(compact["quantized_layers"]) == 3
    assert _layout(compact) == _layout(full)


def test_compact_names_folds_layers_and_expert_indexes() -> None:
    folded = compact_names(
        ["backbone.layers.0.mixer.in_proj", "backbone.layers.2.mixer.in_proj", "lm_head"]
    )
    assert folded == ["lm_head", r"re:backbone\.layers\.(0|2)\.mixer\.in_proj"]


def test_weights_are_charged_role_by_role_at_each_layers_bits() -> None:
    layers = {f"model.layers.{i}.mlp.experts": "NVFP4" for i in range(4)}
    layers["model.layers.0.self_attn.q_proj"] = "FP8"
    spec = spec_from_config({**_MOE, "quantization_config": _mixed(layers)}, name="t")
    hidden, vocab = 256, 1000
    attention = hidden * 4 * 64 * 2 + hidden * 2 * 64 * 2  # q, o and k, v
    experts = 8 * 3 * hidden * 64
    router = hidden * 8
    breakdown = weight_breakdown(spec)
    assert breakdown.embedding == breakdown.head == vocab * hidden * 2
    layer0 = round(attention * (8 + 16 * 3) / 4 / 8) + round(experts * NVFP4_BITS / 8)
    assert breakdown.per_layer[0] == layer0 + router * 2
    assert breakdown.per_layer[1] == attention * 2 + round(experts * NVFP4_BITS / 8) + router * 2
    assert breakdown.experts_per_layer[3] == round(experts * NVFP4_BITS / 8)


@pytest.mark.parametrize("checkpoint", ["nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4"])
def test_nemotron_3_super_nvfp4_with_its_mtp_drafter_is_the_logged_weight(checkpoint: str) -> None:
    # djangodevreng/dgx-spark-benchmarks@5636536 nemotron-3-super-120b-a12b/nvfp4/_bootlog.txt
    # (the engine-log corpus): vLLM 0.19.2, MTP speculative decoding, "Model loading took
    # 75.03 GiB". Before the layer map was read kvlint charged 64.65 GiB (every linear NVFP4,
    # no MTP layers); the 16-bit Mamba, attention and MTP modules are the difference.
    spec = lookup(checkpoint)
    assert spec is not None
    with_mtp = weight_bytes_per_gpu(spec, mtp=True) / GiB
    assert abs(with_mtp - 75.03) / 75.03 < 0.01
    assert weight_bytes_per_gpu(spec) < weight_bytes_per_gpu(spec, mtp=True)


def test_the_qwen36_nvfp4_head_is_nvfp4_and_its_attention_fp8() -> None:
    spec = lookup("nvidia/Qwen3.6-35B-A3B-NVFP4")
    assert spec is not None and spec.quantization is not None
    layout = spec.quantization.layout
    assert layout is not None
    assert layout.bits("head") == NVFP4_BITS
    assert layout.bits("mixer", 5) == 8.0
    breakdown = weight_breakdown(spec)
    assert breakdown.head < breakdown.embedding  # the embedding stays BF16


def test_a_known_checkpoint_size_is_shared_out_as_the_layout_weighs_the_layers() -> None:
    # The checkpoint's bytes win over the parameter count; the layout says which layer holds
    # which share, and the MTP layers (which load only with an MTP drafter) are kept apart.
    from dataclasses import replace

    spec = lookup("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4")
    assert spec is not None
    counted = weight_breakdown(spec)
    stored = replace(spec, weight_bytes=counted.total + counted.mtp + 10 * GiB)
    sized = weight_breakdown(stored)
    assert sized.method == "checkpoint size"
    assert sized.mtp == counted.mtp
    assert (sized.embedding, sized.head) == (counted.embedding, counted.head)
    assert abs(sized.total - (counted.total + 10 * GiB)) < 1000  # rounding of 88 layers
    # a Mamba layer and a MoE layer keep their ratio
    assert sized.per_layer[1] / sized.per_layer[0] == pytest.approx(
        counted.per_layer[1] / counted.per_layer[0], rel=1e-6
    )
