"""Gemma 3n: the last ``num_kv_shared_layers`` layers reuse earlier layers' caches."""

from __future__ import annotations

from dataclasses import replace

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.gemma import GEMMA3
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


def share_last_layers(cfg: ConfigView, layers: tuple[LayerSpec, ...]) -> tuple[LayerSpec, ...]:
    """Mark the last ``num_kv_shared_layers`` layers SHARED (they read an earlier layer's K/V).

    transformers Gemma3nTextAttention: ``first_kv_shared_layer_idx = num_hidden_layers -
    num_kv_shared_layers``; layers from there on store nothing of their own.
    """
    shared = cfg.opt_int("num_kv_shared_layers") or 0
    if shared > len(layers):
        raise cfg.error(
            "num_kv_shared_layers",
            f"`{cfg.key_name('num_kv_shared_layers')}` {shared} is more than the "
            f"{len(layers)} layers",
        )
    first = len(layers) - shared
    return tuple(
        replace(layer, kind=CacheKind.SHARED) if index >= first else layer
        for index, layer in enumerate(layers)
    )


class Gemma3n:
    name = "gemma3n"

    def architecture(self, cfg: ConfigView) -> Architecture:
        arch = GEMMA3.architecture(cfg)
        return arch._replace(layers=share_last_layers(cfg, arch.layers))


GEMMA3N = Gemma3n()
