"""Nemotron-NAS (Llama-3.3-Nemotron-Super, Llama-3.1-Nemotron-Ultra): a Llama whose layers were
pruned one by one, each described in ``block_configs``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import read_shape
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


def blocks(cfg: ConfigView, num_layers: int) -> list[Mapping[str, Any]]:
    """``block_configs``: one object per layer, each with ``attention`` and ``ffn``."""
    items = cfg.opt_list("block_configs")
    if items is None or len(items) != num_layers or not all(isinstance(b, Mapping) for b in items):
        raise cfg.error(
            "block_configs",
            f"`{cfg.key_name('block_configs')}` must list one object per layer "
            f"({num_layers} layers): kvlint reads each layer's attention from it",
        )
    return list(items)


def ffn_intermediate_size(ffn_mult: float, hidden: int) -> int:
    """vllm/model_executor/models/nemotron_nas.py `_ffn_mult_to_intermediate_size`: two thirds
    of ``ffn_mult * hidden``, doubled, rounded up to a multiple of 256."""
    size = int(2 * ffn_mult * hidden / 3)
    return -(-size // 256) * 256


class NemotronNas:
    """A layer whose ``attention.no_op`` is true has no attention and so no cache; the others
    keep ``num_attention_heads / n_heads_in_group`` KV heads (vLLM's DeciLM attention, and
    `get_total_num_kv_heads`, which reads the first attention block). A layer whose attention
    was replaced by a linear map, or that sets a window or sink tokens, is refused: vLLM's
    DeciLM reads none of those."""

    name = "nemotron-nas"

    def architecture(self, cfg: ConfigView) -> Architecture:
        base = read_shape(cfg)
        layers: list[LayerSpec] = []
        first_kv: int | None = None
        for index, block in enumerate(blocks(cfg, base.num_layers)):
            attention = block.get("attention") or {}
            view = cfg.child(block, "block_configs").child(attention, "attention")
            if view.opt_bool("no_op"):
                layers.append(LayerSpec(CacheKind.NONE))
                continue
            for key in ("replace_with_linear", "window_length", "num_sink_tokens", "sparsify"):
                if view.raw(key):
                    raise view.error(
                        key,
                        f"layer {index}: `{view.key_name(key)}` is set; kvlint sizes only "
                        "the plain attention blocks of Nemotron-NAS models",
                    )
            group = view.int_of(("n_heads_in_group",), what="the query heads per KV head")
            if base.num_attention_heads % group:
                raise view.error(
                    "n_heads_in_group",
                    f"layer {index}: `{view.key_name('n_heads_in_group')}` {group} does not "
                    f"divide the {base.num_attention_heads} attention heads",
                )
            kv = base.num_attention_heads // group
            layers.append(LayerSpec(CacheKind.FULL, kv, base.head_dim, base.head_dim))
            if first_kv is None:
                first_kv = kv
        if first_kv is None:
            raise cfg.error("block_configs", "every layer's attention is a no-op: nothing to size")
        shape = Shape(base.num_layers, base.hidden_size, base.num_attention_heads, first_kv,
                      base.head_dim)  # fmt: skip
        return Architecture(shape, tuple(layers))


NEMOTRON_NAS = NemotronNas()
