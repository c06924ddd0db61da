"""Jamba: one attention layer per attn_layer_period, Mamba-1 state elsewhere."""

from __future__ import annotations

from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind


def test_attention_every_eighth_layer_at_offset_four() -> None:
    config = {"model_type": "jamba", "num_hidden_layers": 32, "hidden_size": 4096,
              "num_attention_heads": 32, "num_key_value_heads": 8, "attn_layer_period": 8,
              "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4,
              "mamba_expand": 2, "vocab_size": 65536}  # fmt: skip
    spec = spec_from_config(config, name="jamba")
    assert [i for i, layer in enumerate(spec.layers) if layer.kind is CacheKind.FULL] == [
        4, 12, 20, 28,
    ]  # fmt: skip
    assert spec.layers[0].state_elements == 8192 * 3 + 8192 * 16
