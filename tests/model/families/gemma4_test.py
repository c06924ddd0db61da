"""Gemma 4: global layers with their own head shape, one K = V tensor."""

from __future__ import annotations

from typing import Any

from kvlint.model.hf import load_config_file
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from testing.shared import HF_CONFIGS
from testing.shared import shared_file

TEXT: dict[str, Any] = {
    "model_type": "gemma4_text", "num_hidden_layers": 12, "hidden_size": 2816,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
    "global_head_dim": 512, "num_global_key_value_heads": 2, "attention_k_eq_v": True,
    "sliding_window": 1024, "vocab_size": 262144, "dtype": "bfloat16",
}  # fmt: skip


def test_global_layers_k_eq_v() -> None:
    spec = spec_from_config(TEXT, name="m")
    assert spec.layers[5] == LayerSpec(CacheKind.FULL_KV_SHARED, 2, 512, 0)
    assert spec.layers[0] == LayerSpec(CacheKind.SLIDING, 8, 256, 256, 1024)
    assert spec.layer_counts() == {"full_kv_shared": 2, "sliding": 10}


def test_global_layers_without_k_eq_v_store_k_and_v() -> None:
    spec = spec_from_config({**TEXT, "attention_k_eq_v": False}, name="m")
    # Without K = V the global layers keep the ordinary KV head count, at the global head size.
    assert spec.layers[11] == LayerSpec(CacheKind.FULL, 8, 512, 512)


def test_fixture_26b() -> None:
    spec = load_config_file(shared_file(HF_CONFIGS / "google__gemma-4-26B-A4B.json"))
    assert spec.model_type == "gemma4"
    assert spec.dtype == "bfloat16"
    assert spec.tie_word_embeddings
    assert spec.max_position_embeddings == 262144
    assert spec.rope_scaling is not None and spec.rope_scaling.rope_type == "proportional"
    globals_ = [i for i, layer in enumerate(spec.layers) if layer.kind.grows]
    assert globals_ == [5, 11, 17, 23, 29]
    assert spec.num_experts == 128
