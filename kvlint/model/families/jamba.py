"""Jamba: one attention layer every ``attn_layer_period`` layers, Mamba-1 layers between."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import read_shape
from kvlint.model.families.states import mamba1_state


class Jamba:
    """Layer ``i`` is attention when ``i % attn_layer_period == attn_layer_offset``
    (transformers JambaConfig.layers_block_type), else Mamba-1 with a state of
    ``mamba_expand * hidden_size`` channels (vllm/model_executor/models/jamba.py)."""

    name = "jamba"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        period = cfg.opt_int("attn_layer_period", minimum=1) or 8
        offset = cfg.opt_int("attn_layer_offset") or 4
        state = mamba1_state(
            intermediate_size=(cfg.opt_int("mamba_expand", minimum=1) or 2) * shape.hidden_size,
            state_size=cfg.opt_int("mamba_d_state", minimum=1) or 16,
            conv_kernel=cfg.opt_int("mamba_d_conv", minimum=1) or 4,
        )
        layers = tuple(
            full_layer(shape) if index % period == offset else state.layer()
            for index in range(shape.num_layers)
        )
        return Architecture(shape, layers)


JAMBA = Jamba()
