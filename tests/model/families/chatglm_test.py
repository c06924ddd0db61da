"""ChatGLM / GLM-4 remote-code configs: num_layers, kv_channels, multi_query_group_num."""

from __future__ import annotations

from kvlint.arith.kv import kv_size
from kvlint.model.hf import spec_from_config

GLM4_9B = {"model_type": "chatglm", "num_layers": 40, "hidden_size": 4096,
           "num_attention_heads": 32, "multi_query_attention": True,
           "multi_query_group_num": 2, "kv_channels": 128, "seq_length": 131072,
           "padded_vocab_size": 151552, "torch_dtype": "bfloat16"}  # fmt: skip


def test_glm4_9b() -> None:
    spec = spec_from_config(GLM4_9B, name="glm-4-9b")
    assert (spec.num_layers, spec.num_key_value_heads, spec.head_dim) == (40, 2, 128)
    assert (spec.max_position_embeddings, spec.max_length_key) == (131072, "seq_length")
    assert spec.vocab_size == 151552
    assert kv_size(spec).per_token_bytes == 40 * 2 * 2 * 128 * 2


def test_without_multi_query_every_head_has_kv() -> None:
    spec = spec_from_config({**GLM4_9B, "multi_query_attention": False}, name="m")
    assert spec.num_key_value_heads == 32
