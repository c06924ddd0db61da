"""An MLX bundle's config.json: its `quantization` block (bits, group size, mode)."""

from __future__ import annotations

from kvlint.arith.weights import linear_bits
from testing.builders import model

LLAMA = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def test_the_quantization_block_and_its_hub_copy() -> None:
    block = {"group_size": 64, "bits": 4}
    spec = model({**LLAMA, "quantization": block, "quantization_config": block}, "mlx-4bit")
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.weight_bits) == ("mlx", 4.0)
    assert spec.quantization.group_size == 64
    assert linear_bits(spec, "mlx") == 4.5  # a bf16 scale and bias per 64 weights


def test_a_group_of_32_and_an_mxfp4_mode() -> None:
    spec = model({**LLAMA, "quantization": {"group_size": 32, "bits": 8}}, "mlx-8bit")
    assert linear_bits(spec, "mlx") == 9.0
    mx = model(
        {**LLAMA, "quantization": {"group_size": 32, "bits": 4, "mode": "mxfp4"}}, "mlx-mxfp4"
    )
    assert mx.quantization is not None and mx.quantization.method == "mlx-mxfp4"
    assert linear_bits(mx, "mlx-mxfp4") == 4.25  # one 8-bit scale per 32, no bias


def test_a_mixed_recipes_per_module_bits_are_charged_layer_by_layer() -> None:
    # mlx_lm's mixed recipes write the predicate's answer under each module's path: 6 bits for
    # one down_proj, one module left unquantised, the block's 4 bits for the rest.
    from kvlint.arith.weights import weight_breakdown

    block = {
        "group_size": 64,
        "bits": 4,
        "model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 6},
        "model.layers.1.self_attn.q_proj": False,
    }
    spec = model({**LLAMA, "quantization": block}, "mlx-mixed")
    assert spec.quantization is not None and spec.quantization.layout is not None
    layout = spec.quantization.layout
    assert layout.bits("mlp", 0) == (6.5 + 4.5 * 2) / 3  # down_proj at 6 bits, gate/up at 4
    assert layout.bits("mlp", 1) == 4.5
    assert layout.bits("mixer", 1) == (16 + 4.5 * 3) / 4
    assert layout.bits("embedding") == layout.bits("head") == 4.5  # MLX quantises them too
    uniform = model({**LLAMA, "quantization": {"group_size": 64, "bits": 4}}, "mlx-4bit")
    mixed, plain = weight_breakdown(spec), weight_breakdown(uniform)
    assert mixed.per_layer[0] > mixed.per_layer[2] and mixed.per_layer[1] > mixed.per_layer[2]
    assert mixed.embedding == plain.embedding
