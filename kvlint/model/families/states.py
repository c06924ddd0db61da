"""Per-sequence state sizes of linear-attention and Mamba layers, as vLLM allocates them.

The shapes mirror vllm/model_executor/layers/mamba/mamba_utils.py
`MambaStateShapeCalculator` at tensor-parallel size 1 (no speculative slots); the element count
of each state is the product of its shape, whichever way the conv state is oriented.
"""

from __future__ import annotations


def mamba1_state_elements(intermediate_size: int, state_size: int, conv_kernel: int) -> int:
    """`mamba1_state_shape`: conv (intermediate, kernel - 1) + temporal (intermediate, state)."""
    conv = intermediate_size * (conv_kernel - 1)
    temporal = intermediate_size * state_size
    return conv + temporal


def mamba2_state_elements(
    intermediate_size: int,
    n_groups: int,
    num_heads: int,
    head_dim: int,
    state_size: int,
    conv_kernel: int,
) -> int:
    """`mamba2_state_shape`: conv (kernel - 1, intermediate + 2 * groups * state) + temporal
    (heads, head_dim, state)."""
    conv_dim = intermediate_size + 2 * n_groups * state_size
    conv = (conv_kernel - 1) * conv_dim
    temporal = num_heads * head_dim * state_size
    return conv + temporal


def gated_delta_net_state_elements(
    num_k_heads: int, num_v_heads: int, head_k_dim: int, head_v_dim: int, conv_kernel: int
) -> int:
    """`gated_delta_net_state_shape` (Qwen3-Next): conv (kernel - 1, 2 * k_dim * k_heads +
    v_dim * v_heads) + temporal (v_heads, v_dim, k_dim)."""
    conv_dim = head_k_dim * num_k_heads * 2 + head_v_dim * num_v_heads
    conv = (conv_kernel - 1) * conv_dim
    temporal = num_v_heads * head_k_dim * head_v_dim
    return conv + temporal
