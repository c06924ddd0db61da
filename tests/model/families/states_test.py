"""State element counts, against vLLM's MambaStateShapeCalculator shapes worked by hand."""

from __future__ import annotations

from kvlint.model.families.states import RecurrentState
from kvlint.model.families.states import gated_delta_net_state
from kvlint.model.families.states import mamba1_state
from kvlint.model.families.states import mamba2_state


def test_mamba1() -> None:
    # conv (8192, 3) + temporal (8192, 16); no speculative rows
    assert mamba1_state(8192, 16, 4) == RecurrentState(8192 * 3 + 8192 * 16, 8192 * 3, 0)


def test_mamba2() -> None:
    # conv (3, 16384 + 2*8*256) + temporal (256, 64, 256): Nemotron-H 56B
    state = mamba2_state(16384, 8, 256, 64, 256, 4)
    assert state == RecurrentState(3 * 20480 + 256 * 64 * 256, 3 * 20480, 20480)


def test_gated_delta_net() -> None:
    # conv (3, 128*16*2 + 128*32) + temporal (32, 128, 128): Qwen3-Next
    state = gated_delta_net_state(16, 32, 128, 128, 4)
    assert state == RecurrentState(3 * 8192 + 32 * 128 * 128, 3 * 8192, 8192)
