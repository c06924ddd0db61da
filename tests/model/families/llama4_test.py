"""Llama 4: chunked local attention on RoPE layers, global on NoPE layers."""

from __future__ import annotations

from typing import Any

from kvlint.arith.kv import kv_size
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind

TEXT: dict[str, Any] = {
    "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
    "attention_chunk_size": 8192, "vocab_size": 202048, "torch_dtype": "bfloat16",
    "max_position_embeddings": 10485760,
}  # fmt: skip


def test_default_every_fourth_layer_global() -> None:
    spec = spec_from_config({"model_type": "llama4", "text_config": TEXT}, name="scout")
    assert spec.layer_counts() == {"full": 12, "chunked": 36}
    assert [i for i, layer in enumerate(spec.layers) if layer.kind is CacheKind.FULL] == list(
        range(3, 48, 4)
    )
    size = kv_size(spec)
    assert size.per_token_bytes == 12 * 2 * 8 * 128 * 2
    assert size.bounded_bytes(1_000_000) == 36 * 8192 * 2 * 8 * 128 * 2


def test_listed_no_rope_layers() -> None:
    flags = [1] * 47 + [0]
    spec = spec_from_config({**TEXT, "no_rope_layers": flags}, name="m")
    assert spec.layer_counts() == {"full": 1, "chunked": 47}
    assert spec.layers[0].window == 8192


def test_no_chunk_size_means_global() -> None:
    config = {k: v for k, v in TEXT.items() if k != "attention_chunk_size"}
    assert spec_from_config(config, name="m").layer_counts() == {"full": 48}
