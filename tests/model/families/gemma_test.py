"""Gemma 1/2/3: implicit sliding patterns, and layer_types when listed."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind

BASE: dict[str, Any] = {"num_hidden_layers": 12, "hidden_size": 2304, "head_dim": 256,
                        "num_attention_heads": 8, "num_key_value_heads": 4,
                        "vocab_size": 256000, "torch_dtype": "bfloat16"}  # fmt: skip


def kinds(config: dict[str, Any]) -> str:
    spec = spec_from_config(config, name="m")
    return "".join("g" if layer.kind is CacheKind.FULL else "s" for layer in spec.layers)


def test_gemma_1_every_layer_global() -> None:
    assert kinds({**BASE, "model_type": "gemma"}) == "g" * 12


def test_gemma2_alternates_from_a_sliding_layer() -> None:
    assert kinds({**BASE, "model_type": "gemma2", "sliding_window": 4096}) == "sg" * 6


def test_gemma3_five_local_one_global() -> None:
    config = {**BASE, "model_type": "gemma3_text", "sliding_window": 1024}
    assert kinds(config) == "sssssg" * 2
    config["sliding_window_pattern"] = 4
    assert kinds(config) == "sssg" * 3


def test_gemma3_multimodal_reads_text_config() -> None:
    text = {**BASE, "model_type": "gemma3_text", "sliding_window": 1024}
    config = {"model_type": "gemma3", "torch_dtype": "bfloat16", "text_config": text}
    spec = spec_from_config(config, name="m")
    assert spec.layer_counts() == {"full": 2, "sliding": 10}
    assert spec.sliding_window == 1024
    assert spec.model_type == "gemma3"


def test_listed_layer_types_win() -> None:
    types = ["full_attention"] * 6 + ["sliding_attention"] * 6
    config = {**BASE, "model_type": "gemma3_text", "sliding_window": 512, "layer_types": types}
    assert kinds(config) == "g" * 6 + "s" * 6


def test_sliding_layers_need_a_window() -> None:
    from kvlint.errors import KvlintError

    types = ["sliding_attention"] * 12
    with pytest.raises(KvlintError, match="`sliding_window` is missing"):
        spec_from_config({**BASE, "model_type": "gemma3_text", "layer_types": types}, name="m")
