"""Gemma 3n: the last num_kv_shared_layers layers reuse an earlier layer's cache."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import KvlintError
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind

TEXT: dict[str, Any] = {
    "model_type": "gemma3n_text", "num_hidden_layers": 30, "hidden_size": 2048,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "sliding_window": 512,
    "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 6,
    "num_kv_shared_layers": 10, "vocab_size": 262400, "torch_dtype": "bfloat16",
}  # fmt: skip


def test_shared_layers_store_nothing() -> None:
    spec = spec_from_config({"model_type": "gemma3n", "text_config": TEXT}, name="e2b")
    assert spec.num_layers == 30
    assert spec.layer_counts() == {"full": 4, "sliding": 16, "shared": 10}
    assert all(layer.kind is CacheKind.SHARED for layer in spec.layers[20:])
    # 4 full layers of the first 20 grow: 4 x 2 x 2 x 256 x 2 bytes.
    assert kv_size(spec).per_token_bytes == 4 * 2 * 2 * 256 * 2


def test_more_shared_layers_than_layers() -> None:
    with pytest.raises(KvlintError, match="num_kv_shared_layers"):
        spec_from_config({**TEXT, "num_kv_shared_layers": 31}, name="m")
