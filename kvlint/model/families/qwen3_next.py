"""Qwen3-Next (and Qwen3.5): gated DeltaNet linear attention, full attention every few layers."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import layers_from_types
from kvlint.model.families.base import read_layer_types
from kvlint.model.families.base import read_shape
from kvlint.model.families.states import gated_delta_net_state


class Qwen3Next:
    """``layer_types`` when listed, else layer ``i`` is full attention when
    ``(i + 1) % full_attention_interval == 0`` (transformers Qwen3NextConfig) and linear
    attention otherwise, holding a conv state and a recurrent state per sequence."""

    name = "qwen3_next"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        types = read_layer_types(cfg, shape.num_layers)
        if types is None:
            interval = cfg.opt_int("full_attention_interval", minimum=1) or 4
            types = [
                "full_attention" if (i + 1) % interval == 0 else "linear_attention"
                for i in range(shape.num_layers)
            ]
        k_heads = cfg.int_of(("linear_num_key_heads",), what="the linear-attention key heads")
        v_heads = cfg.opt_int("linear_num_value_heads", minimum=1) or k_heads
        state = gated_delta_net_state(
            num_k_heads=k_heads,
            num_v_heads=v_heads,
            head_k_dim=cfg.opt_int("linear_key_head_dim", minimum=1) or 128,
            head_v_dim=cfg.opt_int("linear_value_head_dim", minimum=1) or 128,
            conv_kernel=cfg.opt_int("linear_conv_kernel_dim", minimum=1) or 4,
        )
        layers = layers_from_types(cfg, shape, types, states={"linear_attention": state})
        return Architecture(shape, tuple(layers))


QWEN3_NEXT = Qwen3Next()
