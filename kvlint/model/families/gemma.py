"""Gemma 1 / 2 / 3: sliding layers in a fixed, often implicit, pattern."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import layers_from_types
from kvlint.model.families.base import read_layer_types
from kvlint.model.families.base import read_shape
from kvlint.model.families.base import require_window
from kvlint.model.families.base import windowed_layer
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


def patterned_layers(cfg: ConfigView, shape: Shape, pattern: int) -> list[LayerSpec]:
    """Layer ``i`` slides unless ``(i + 1) % pattern == 0`` (every ``pattern``-th is global).

    transformers' Gemma2Config / Gemma3TextConfig / Cohere2Config build ``layer_types`` this way
    when the config does not list them.
    """
    window = require_window(cfg)
    return [
        full_layer(shape)
        if (index + 1) % pattern == 0
        else windowed_layer(shape, CacheKind.SLIDING, window)
        for index in range(shape.num_layers)
    ]


class Patterned:
    """``layer_types`` when listed, else ``sliding_window_pattern`` (or the family default)."""

    def __init__(self, name: str, default_pattern: int | None) -> None:
        self.name = name
        self.default_pattern = default_pattern

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        types = read_layer_types(cfg, shape.num_layers)
        if types is not None:
            return Architecture(shape, tuple(layers_from_types(cfg, shape, types)))
        pattern = cfg.opt_int("sliding_window_pattern", minimum=1) or self.default_pattern
        if pattern is None or not cfg.has("sliding_window"):
            return Architecture(shape, tuple(full_layer(shape) for _ in range(shape.num_layers)))
        return Architecture(shape, tuple(patterned_layers(cfg, shape, pattern)))


# Gemma 1: every layer global. Gemma 2: alternating (pattern 2). Gemma 3: five local to one
# global (pattern 6).
GEMMA = Patterned("gemma", None)
GEMMA2 = Patterned("gemma2", 2)
GEMMA3 = Patterned("gemma3", 6)
