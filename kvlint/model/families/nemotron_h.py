"""Nemotron-H: Mamba-2, attention, MLP and MoE layers spelled out in ``hybrid_override_pattern``."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import read_shape
from kvlint.model.families.states import RecurrentState
from kvlint.model.families.states import mamba2_state as mamba2_shape
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


def mamba2_state(cfg: ConfigView, hidden: int) -> RecurrentState:
    """One Mamba-2 layer's state (vllm/model_executor/models/nemotron_h.py
    `get_mamba_state_shape_from_config`: intermediate = mamba_num_heads * mamba_head_dim)."""
    heads = cfg.int_of(("mamba_num_heads",), what="the Mamba head count")
    head_dim = cfg.int_of(("mamba_head_dim",), what="the Mamba head size")
    return mamba2_shape(
        intermediate_size=heads * head_dim,
        n_groups=cfg.opt_int("n_groups", minimum=1) or 1,
        num_heads=heads,
        head_dim=head_dim,
        state_size=cfg.int_of(("ssm_state_size",), what="the SSM state size"),
        conv_kernel=cfg.opt_int("conv_kernel", minimum=1) or 4,
    )


class NemotronH:
    """``M`` = Mamba-2 (a fixed state), ``*`` = attention (the only KV cache), ``-`` = MLP and
    ``E`` = MoE (no cache). The attention head size is ``attention_head_dim`` (or ``head_dim``)."""

    name = "nemotron_h"

    def architecture(self, cfg: ConfigView) -> Architecture:
        pattern = layer_pattern(cfg)
        # transformers 4.57's NemotronHConfig derives num_hidden_layers from layers_block_type
        # and may leave the key out (Nemotron 3 Ultra's config does).
        counted = len(pattern) if pattern is not None else None
        base = read_shape(cfg, head_dim_keys=("attention_head_dim",), num_layers=counted)
        if pattern is None:
            raise cfg.error(
                "hybrid_override_pattern",
                f"`{cfg.key_name('hybrid_override_pattern')}` is missing: kvlint needs it to "
                "tell Mamba layers from attention layers",
            )
        if len(pattern) != base.num_layers or set(pattern) - set("M*-E"):
            raise cfg.error(
                "hybrid_override_pattern",
                f"`{cfg.key_name('hybrid_override_pattern')}` must have one of M, *, -, E per "
                f"layer ({base.num_layers} layers), got {pattern!r}",
            )
        shape = Shape(
            base.num_layers,
            base.hidden_size,
            base.num_attention_heads,
            base.num_key_value_heads,
            base.head_dim,
        )
        state = mamba2_state(cfg, shape.hidden_size) if "M" in pattern else RecurrentState(0, 0)
        layers = tuple(_layer(char, shape, state) for char in pattern)
        return Architecture(shape, layers)


# transformers' NemotronHConfig may list the layers by name instead.
_BLOCK_CHARS = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}


def layer_pattern(cfg: ConfigView) -> str | None:
    """``hybrid_override_pattern``, or the same string spelled from ``layers_block_type``."""
    pattern = cfg.opt_str("hybrid_override_pattern")
    if pattern is not None:
        return pattern
    names = cfg.opt_list("layers_block_type")
    if names is None:
        return None
    return "".join(_BLOCK_CHARS.get(str(name), "?") for name in names)


def _layer(char: str, shape: Shape, state: RecurrentState) -> LayerSpec:
    if char == "M":
        return state.layer()
    if char == "*":
        return LayerSpec(CacheKind.FULL, shape.num_key_value_heads, shape.head_dim, shape.head_dim)
    return LayerSpec(CacheKind.NONE)


NEMOTRON_H = NemotronH()
