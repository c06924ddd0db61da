"""Falcon: multi_query, n_head_kv and the new decoder architecture, old key names."""

from __future__ import annotations

from kvlint.model.hf import spec_from_config

FALCON_7B = {"model_type": "falcon", "n_layer": 32, "hidden_size": 4544, "n_head": 71,
             "multi_query": True, "vocab_size": 65024, "torch_dtype": "bfloat16"}  # fmt: skip


def test_falcon_7b_multi_query() -> None:
    spec = spec_from_config(FALCON_7B, name="falcon-7b")
    assert (spec.num_layers, spec.num_key_value_heads, spec.head_dim) == (32, 1, 64)
    assert spec.attention_kind == "MQA"


def test_falcon_40b_new_decoder_architecture() -> None:
    config = {**FALCON_7B, "n_layer": 60, "hidden_size": 8192, "n_head": 128,
              "n_head_kv": 8, "new_decoder_architecture": True}  # fmt: skip
    spec = spec_from_config(config, name="falcon-40b")
    assert (spec.num_key_value_heads, spec.head_dim) == (8, 64)


def test_refinedweb_model_type() -> None:
    config = {**FALCON_7B, "model_type": "RefinedWebModel"}
    assert spec_from_config(config, name="m").num_key_value_heads == 1
