"""Granite 4.0 hybrid: mamba / attention layer_types."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import KvlintError
from kvlint.model.hf import spec_from_config

CONFIG: dict[str, Any] = {
    "model_type": "granitemoehybrid", "num_hidden_layers": 4, "hidden_size": 1536,
    "num_attention_heads": 12, "num_key_value_heads": 4,
    "layer_types": ["mamba", "mamba", "mamba", "attention"], "mamba_expand": 2,
    "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128,
    "mamba_d_conv": 4, "vocab_size": 100352, "torch_dtype": "bfloat16",
}  # fmt: skip


def test_layers_and_state() -> None:
    spec = spec_from_config(CONFIG, name="granite")
    assert spec.layer_counts() == {"full": 1, "state": 3}
    size = kv_size(spec)
    assert size.per_token_bytes == 2 * 4 * 128 * 2
    assert size.state_bytes == 3 * (3 * (3072 + 2 * 128) + 48 * 64 * 128) * 2


def test_unknown_layer_type() -> None:
    with pytest.raises(KvlintError, match="'conv'"):
        spec_from_config({**CONFIG, "layer_types": ["conv"] * 4}, name="m")
