"""Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side."""

from __future__ import annotations

from dataclasses import replace

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import read_shape
from kvlint.model.families.states import mamba2_state


class FalconH1:
    """Each layer keeps a full-attention cache and a Mamba-2 state, so its LayerSpec is FULL
    with ``state_elements`` set (KvSize.state_bytes counts the state).

    State shape as vllm/model_executor/models/falcon_h1.py `get_mamba_state_shape_from_config`:
    intermediate = ``mamba_d_ssm`` or ``mamba_expand * hidden_size``.
    """

    name = "falcon_h1"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        expand = cfg.opt_int("mamba_expand", minimum=1) or 2
        intermediate = cfg.opt_int("mamba_d_ssm", minimum=1) or expand * shape.hidden_size
        heads = cfg.int_of(("mamba_n_heads",), what="the Mamba head count")
        state = mamba2_state(
            intermediate_size=intermediate,
            n_groups=cfg.opt_int("mamba_n_groups", minimum=1) or 1,
            num_heads=heads,
            head_dim=cfg.opt_int("mamba_d_head", minimum=1) or intermediate // heads,
            state_size=cfg.opt_int("mamba_d_state", minimum=1) or 256,
            conv_kernel=cfg.opt_int("mamba_d_conv", minimum=1) or 4,
        )
        layer = replace(
            full_layer(shape),
            state_elements=state.elements,
            conv_elements=state.conv_elements,
            conv_width=state.conv_width,
        )
        return Architecture(shape, tuple(layer for _ in range(shape.num_layers)))


FALCON_H1 = FalconH1()
