"""A config.json that wrote the cancelling head_dim is read back at hidden_size / query heads."""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.model import cancelling
from kvlint.model.hf import load_config_file

LLAMA_70B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}
# Qwen3-0.6B's own shape: head_dim 128 is also hidden_size 1024 / 8 KV heads.
QWEN3_06B = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 40960,
    "torch_dtype": "bfloat16",
    "vocab_size": 151936,
}


def _write(tmp_path: Path, config: dict[str, object]) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_cancelled_head_dim_is_read_back(tmp_path: Path) -> None:
    spec = load_config_file(_write(tmp_path, {**LLAMA_70B, "head_dim": 1024}))
    assert (spec.head_dim, spec.config_head_dim) == (128, 1024)
    assert {layer.head_dim_k for layer in spec.layers} == {128}
    right = load_config_file(_write(tmp_path, LLAMA_70B))
    # The weights are the model's too (q_proj of 64 x 128, not 64 x 1024).
    assert spec.param_count == right.param_count
    assert "the cancelling formula" in spec.notes[-1]


def test_a_published_shape_is_never_read_as_cancelled(tmp_path: Path) -> None:
    spec = load_config_file(_write(tmp_path, QWEN3_06B))
    assert cancelling.cancelled(spec)  # the arithmetic alone cannot tell
    assert (spec.head_dim, spec.config_head_dim) == (128, None)
    assert (1024, 16, 8, 128) in cancelling.catalog_shapes()


def test_a_checkpoint_config_is_as_it_is(tmp_path: Path) -> None:
    path = _write(tmp_path, {**LLAMA_70B, "head_dim": 1024})
    spec = load_config_file(path, checkpoint=True)
    assert (spec.head_dim, spec.config_head_dim) == (1024, None)


def test_the_model_head_dim_and_mha_are_not_cancelled(tmp_path: Path) -> None:
    spec = load_config_file(_write(tmp_path, {**LLAMA_70B, "head_dim": 128}))
    assert not cancelling.cancelled(spec)
    mha = {**LLAMA_70B, "num_key_value_heads": 64, "head_dim": 128}
    assert not cancelling.cancelled(load_config_file(_write(tmp_path, mha)))
