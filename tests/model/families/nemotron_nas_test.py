"""Nemotron-NAS: per-layer blocks, some without attention (no cache), the rest GQA."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import KvlintError
from kvlint.model import catalog
from kvlint.model.families.nemotron_nas import ffn_intermediate_size
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind


def block(group: int | None, *, no_op: bool = False, mult: float = 1.0) -> dict[str, Any]:
    return {"attention": {"n_heads_in_group": group, "no_op": no_op},
            "ffn": {"ffn_mult": mult, "no_op": False}}  # fmt: skip


CONFIG: dict[str, Any] = {
    "model_type": "nemotron-nas", "num_hidden_layers": 3, "hidden_size": 1024,
    "num_attention_heads": 8, "num_key_value_heads": None, "vocab_size": 1000,
    "block_configs": [block(4), block(None, no_op=True), block(2, mult=2.625)],
}  # fmt: skip


def test_no_op_attention_has_no_cache_and_the_others_keep_heads_over_group() -> None:
    spec = spec_from_config(CONFIG, name="m")
    assert [layer.kind for layer in spec.layers] == [CacheKind.FULL, CacheKind.NONE, CacheKind.FULL]
    assert [layer.kv_heads for layer in spec.layers] == [2, 0, 4]
    assert spec.num_key_value_heads == 2  # the first attention block's, as vLLM reads it
    assert kv_size(spec).per_token_bytes == (2 + 4) * 128 * 2 * 2


def test_a_block_kvlint_cannot_read_is_refused() -> None:
    blocks = [block(4), {"attention": {"n_heads_in_group": 4, "window_length": 4096}}, block(2)]
    with pytest.raises(KvlintError, match="window_length"):
        spec_from_config({**CONFIG, "block_configs": blocks}, name="m")
    with pytest.raises(KvlintError, match="one object per layer"):
        spec_from_config({**CONFIG, "block_configs": blocks[:2]}, name="m")
    with pytest.raises(KvlintError, match="does not divide"):
        spec_from_config({**CONFIG, "block_configs": [block(3)] * 3}, name="m")


def test_ffn_sizes_round_up_to_256() -> None:
    # vLLM `_ffn_mult_to_intermediate_size`: int(2 * 2.625 * 8192 / 3) = 14336
    assert ffn_intermediate_size(2.625, 8192) == 14336
    assert ffn_intermediate_size(1.3125, 8192) == 7168
    assert ffn_intermediate_size(0.5, 1000) == 512  # 333 rounded up


def test_llama_3_3_nemotron_super_49b() -> None:
    spec = catalog.lookup("nvidia/Llama-3_3-Nemotron-Super-49B-v1")
    assert spec is not None
    assert spec.layer_counts() == {"full": 49, "none": 31}
    assert kv_size(spec).per_token_bytes == 49 * 8 * 128 * 2 * 2
    assert spec.param_count is not None and 49e9 < spec.param_count < 50.5e9  # "49B"
