"""Cohere 2 (Command R7B, Command A): three sliding layers to one global layer."""

from __future__ import annotations

from kvlint.model.families.gemma import Patterned

# transformers Cohere2Config: ``sliding_window_pattern`` 4, layer i global when (i + 1) % 4 == 0.
COHERE2 = Patterned("cohere2", 4)
