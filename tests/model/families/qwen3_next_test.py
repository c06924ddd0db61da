"""Qwen3-Next: gated DeltaNet layers hold a fixed state; every 4th layer is full attention."""

from __future__ import annotations

from typing import Any

from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind

CONFIG: dict[str, Any] = {
    "model_type": "qwen3_next", "num_hidden_layers": 8, "hidden_size": 2048, "head_dim": 256,
    "num_attention_heads": 16, "num_key_value_heads": 2, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4, "vocab_size": 151936,
}  # fmt: skip


def test_default_interval_is_four() -> None:
    spec = spec_from_config(CONFIG, name="m")
    assert [layer.kind for layer in spec.layers[:4]] == [CacheKind.STATE] * 3 + [CacheKind.FULL]
    state = spec.layers[0].state_elements
    assert state == 3 * (128 * 16 * 2 + 128 * 32) + 32 * 128 * 128


def test_interval_and_layer_types() -> None:
    assert spec_from_config({**CONFIG, "full_attention_interval": 2}, name="m").layer_counts() == {
        "full": 4,
        "state": 4,
    }
    types = ["linear_attention"] * 7 + ["full_attention"]
    spec = spec_from_config({**CONFIG, "layer_types": types}, name="m")
    assert spec.layer_counts() == {"full": 1, "state": 7}
