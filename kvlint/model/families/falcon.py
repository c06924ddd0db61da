"""Falcon (RefinedWeb): multi-query 7B, grouped new-decoder-architecture 40B / 180B."""

from __future__ import annotations

from kvlint.model.families.base import KV_HEAD_KEYS
from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import check_kv_heads
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import read_shape
from kvlint.model.families.llama import sliding_layers


class Falcon:
    """vllm/config/model.py `get_total_num_kv_heads`: with ``new_decoder_architecture`` the KV
    heads come from ``num_kv_heads`` / ``n_head_kv`` and ``multi_query`` is ignored; without it
    ``multi_query: true`` means one KV head."""

    name = "falcon"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        if cfg.opt_bool("new_decoder_architecture"):
            key = cfg.first_key(KV_HEAD_KEYS)
            kv = (
                shape.num_attention_heads
                if key is None
                else check_kv_heads(cfg, key, shape.num_attention_heads)
            )
            shape = Shape(
                shape.num_layers, shape.hidden_size, shape.num_attention_heads, kv, shape.head_dim
            )
            return Architecture(shape, tuple(full_layer(shape) for _ in range(shape.num_layers)))
        layers, notes = sliding_layers(cfg, shape)
        return Architecture(shape, tuple(layers), notes)


FALCON = Falcon()
