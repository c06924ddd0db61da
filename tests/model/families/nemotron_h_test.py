"""Nemotron-H: M / * / - / E layers from hybrid_override_pattern."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.errors import KvlintError
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind

CONFIG: dict[str, Any] = {
    "model_type": "nemotron_h", "num_hidden_layers": 6, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "attention_head_dim": 128,
    "hybrid_override_pattern": "M-M*-E", "mamba_num_heads": 128, "mamba_head_dim": 64,
    "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4, "vocab_size": 131072,
}  # fmt: skip


def test_pattern() -> None:
    spec = spec_from_config(CONFIG, name="m")
    assert [layer.kind for layer in spec.layers] == [
        CacheKind.STATE, CacheKind.NONE, CacheKind.STATE, CacheKind.FULL, CacheKind.NONE,
        CacheKind.NONE,
    ]  # fmt: skip
    assert spec.layers[3].head_dim_k == 128
    assert spec.layers[0].state_elements == 3 * (128 * 64 + 2 * 8 * 128) + 128 * 64 * 128


@pytest.mark.parametrize("pattern", ["M-M*", "M-M*-X"])
def test_bad_pattern(pattern: str) -> None:
    with pytest.raises(KvlintError, match="hybrid_override_pattern"):
        spec_from_config({**CONFIG, "hybrid_override_pattern": pattern}, name="m")


def test_layers_block_type_names() -> None:
    config = {k: v for k, v in CONFIG.items() if k != "hybrid_override_pattern"}
    config["layers_block_type"] = ["mamba", "mlp", "mamba", "attention", "mlp", "moe"]
    assert spec_from_config(config, name="m").layer_counts() == {"full": 1, "state": 2, "none": 3}
