"""Granite 4.0 hybrid: Mamba-2 and attention layers named in ``layer_types``."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import layers_from_types
from kvlint.model.families.base import read_layer_types
from kvlint.model.families.base import read_shape
from kvlint.model.families.states import RecurrentState
from kvlint.model.families.states import mamba2_state


class GraniteHybrid:
    """``layer_types`` entries ``mamba`` (a Mamba-2 state) and ``attention`` (a full cache).

    State shape as vllm/model_executor/models/granitemoehybrid.py
    `get_mamba_state_shape_from_config`: intermediate = ``mamba_expand * hidden_size``.
    """

    name = "granitemoehybrid"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        types = read_layer_types(cfg, shape.num_layers) or ["attention"] * shape.num_layers
        state = RecurrentState(0, 0)
        if "mamba" in types:
            intermediate = (cfg.opt_int("mamba_expand", minimum=1) or 2) * shape.hidden_size
            heads = cfg.int_of(("mamba_n_heads",), what="the Mamba head count")
            state = mamba2_state(
                intermediate_size=intermediate,
                n_groups=cfg.opt_int("mamba_n_groups", minimum=1) or 1,
                num_heads=heads,
                head_dim=cfg.opt_int("mamba_d_head", minimum=1) or intermediate // heads,
                state_size=cfg.opt_int("mamba_d_state", minimum=1) or 128,
                conv_kernel=cfg.opt_int("mamba_d_conv", minimum=1) or 4,
            )
        layers = layers_from_types(cfg, shape, types, states={"mamba": state})
        return Architecture(shape, tuple(layers))


GRANITE_HYBRID = GraniteHybrid()
