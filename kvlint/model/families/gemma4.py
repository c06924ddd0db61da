"""Gemma 4: sliding local layers, and global layers with their own head shape and K = V."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import check_kv_heads
from kvlint.model.families.gemma import GEMMA3
from kvlint.model.families.gemma3n import share_last_layers
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


class Gemma4:
    """Global (full-attention) layers use ``global_head_dim``; with ``attention_k_eq_v`` they
    have ``num_global_key_value_heads`` heads and store one tensor that serves as K and V.

    Mirrors transformers' Gemma4 attention: ``use_alternative_attention = attention_k_eq_v and
    not is_sliding`` picks ``num_global_key_value_heads``; the head size is ``global_head_dim``
    on every non-sliding layer.
    """

    name = "gemma4"

    def architecture(self, cfg: ConfigView) -> Architecture:
        arch = GEMMA3.architecture(cfg)
        shape = arch.shape
        head_dim = cfg.opt_int("global_head_dim", minimum=1) or shape.head_dim
        kv_heads = shape.num_key_value_heads
        k_eq_v = bool(cfg.opt_bool("attention_k_eq_v"))
        if k_eq_v and cfg.has("num_global_key_value_heads"):
            kv_heads = check_kv_heads(cfg, "num_global_key_value_heads", shape.num_attention_heads)
        if k_eq_v:
            global_layer = LayerSpec(CacheKind.FULL_KV_SHARED, kv_heads, head_dim, 0)
        else:
            global_layer = LayerSpec(CacheKind.FULL, kv_heads, head_dim, head_dim)
        layers = tuple(
            global_layer if layer.kind is CacheKind.FULL else layer for layer in arch.layers
        )
        return arch._replace(layers=share_last_layers(cfg, layers))


GEMMA4 = Gemma4()
