"""Per-sequence state sizes of linear-attention and Mamba layers, as vLLM allocates them.

The shapes mirror vllm/model_executor/layers/mamba/mamba_utils.py
`MambaStateShapeCalculator` at tensor-parallel size 1 (no speculative slots); the element count
of each state is the product of its shape, whichever way the conv state is oriented. The conv
state is kept apart from the recurrent (temporal) one: engines store them in different dtypes
(vLLM's ``mamba_cache_dtype`` and ``mamba_ssm_cache_dtype``), and vLLM gives the conv state of
Mamba-2 and gated-DeltaNet layers one more row per speculative token (``conv_kernel - 1 +
num_spec`` rows of ``conv_width`` values).
"""

from __future__ import annotations

from typing import NamedTuple

from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


class RecurrentState(NamedTuple):
    """One layer's per-sequence state: every element, the conv state's share of them, and the
    values a speculative slot adds to the conv state (0 where vLLM adds none: Mamba-1)."""

    elements: int
    conv_elements: int
    conv_width: int = 0

    def layer(self, kind: CacheKind = CacheKind.STATE) -> LayerSpec:
        return LayerSpec(
            kind,
            state_elements=self.elements,
            conv_elements=self.conv_elements,
            conv_width=self.conv_width,
        )


def mamba1_state(intermediate_size: int, state_size: int, conv_kernel: int) -> RecurrentState:
    """`mamba1_state_shape`: conv (intermediate, kernel - 1) + temporal (intermediate, state);
    no speculative rows (the shape takes no ``num_spec``)."""
    conv = intermediate_size * (conv_kernel - 1)
    temporal = intermediate_size * state_size
    return RecurrentState(conv + temporal, conv)


def mamba2_state(
    intermediate_size: int,
    n_groups: int,
    num_heads: int,
    head_dim: int,
    state_size: int,
    conv_kernel: int,
) -> RecurrentState:
    """`mamba2_state_shape`: conv (kernel - 1 + num_spec, intermediate + 2 * groups * state)
    + temporal (heads, head_dim, state)."""
    conv_dim = intermediate_size + 2 * n_groups * state_size
    conv = (conv_kernel - 1) * conv_dim
    temporal = num_heads * head_dim * state_size
    return RecurrentState(conv + temporal, conv, conv_dim)


def gated_delta_net_state(
    num_k_heads: int, num_v_heads: int, head_k_dim: int, head_v_dim: int, conv_kernel: int
) -> RecurrentState:
    """`gated_delta_net_state_shape` (Qwen3-Next, Qwen3.5): conv (kernel - 1 + num_spec,
    2 * k_dim * k_heads + v_dim * v_heads) + temporal (v_heads, v_dim, k_dim)."""
    conv_dim = head_k_dim * num_k_heads * 2 + head_v_dim * num_v_heads
    conv = (conv_kernel - 1) * conv_dim
    temporal = num_v_heads * head_k_dim * head_v_dim
    return RecurrentState(conv + temporal, conv, conv_dim)
