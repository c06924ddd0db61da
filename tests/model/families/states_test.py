"""State element counts, against vLLM's MambaStateShapeCalculator shapes worked by hand."""

from __future__ import annotations

from kvlint.model.families.states import gated_delta_net_state_elements
from kvlint.model.families.states import mamba1_state_elements
from kvlint.model.families.states import mamba2_state_elements


def test_mamba1() -> None:
    # conv (8192, 3) + temporal (8192, 16)
    assert mamba1_state_elements(8192, 16, 4) == 8192 * 3 + 8192 * 16


def test_mamba2() -> None:
    # conv (3, 16384 + 2*8*256) + temporal (256, 64, 256): Nemotron-H 56B
    assert mamba2_state_elements(16384, 8, 256, 64, 256, 4) == 3 * 20480 + 256 * 64 * 256


def test_gated_delta_net() -> None:
    # conv (3, 128*16*2 + 128*32) + temporal (32, 128, 128): Qwen3-Next
    assert gated_delta_net_state_elements(16, 32, 128, 128, 4) == 3 * 8192 + 32 * 128 * 128
