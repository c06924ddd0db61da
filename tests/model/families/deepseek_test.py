"""MLA families: the latent width, and the errors a broken MLA config raises."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.errors import KvlintError
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec

V2_LITE: dict[str, Any] = {
    "model_type": "deepseek_v2", "num_hidden_layers": 27, "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512,
    "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "vocab_size": 102400,
}  # fmt: skip


def test_latent_layer() -> None:
    spec = spec_from_config(V2_LITE, name="v2-lite")
    assert spec.layers[0] == LayerSpec(CacheKind.MLA, 1, 576, 0)
    assert (spec.num_key_value_heads, spec.head_dim) == (1, 576)


def test_kimi_k2_model_type() -> None:
    spec = spec_from_config({**V2_LITE, "model_type": "kimi_k2"}, name="m")
    assert spec.layer_counts() == {"mla": 27}


def test_missing_rope_dim() -> None:
    config = {k: v for k, v in V2_LITE.items() if k != "qk_rope_head_dim"}
    with pytest.raises(KvlintError, match="qk_rope_head_dim"):
        spec_from_config(config, name="m")


def test_without_kv_lora_rank_is_ordinary_attention() -> None:
    config = {k: v for k, v in V2_LITE.items() if k != "kv_lora_rank"}
    assert spec_from_config(config, name="m").layer_counts() == {"full": 27}
