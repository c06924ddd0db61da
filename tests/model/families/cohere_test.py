"""Cohere: Command R (every layer global) and Cohere 2 (three sliding to one global)."""

from __future__ import annotations

from typing import Any

from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind

COMMAND_R7B: dict[str, Any] = {
    "model_type": "cohere2", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "sliding_window": 4096,
    "max_position_embeddings": 8192, "vocab_size": 256000, "torch_dtype": "bfloat16",
}  # fmt: skip


def test_cohere2_three_local_one_global() -> None:
    spec = spec_from_config(COMMAND_R7B, name="r7b")
    assert spec.layer_counts() == {"full": 8, "sliding": 24}
    assert [i for i, layer in enumerate(spec.layers) if layer.kind is CacheKind.FULL][:2] == [3, 7]
    assert spec.sliding_window == 4096


def test_command_r_every_layer_global() -> None:
    config = {**COMMAND_R7B, "model_type": "cohere", "model_max_length": 131072}
    del config["sliding_window"]  # Command R has none
    spec = spec_from_config(config, name="command-r")
    assert spec.layer_counts() == {"full": 32}
    assert (spec.max_position_embeddings, spec.max_length_key) == (131072, "model_max_length")
