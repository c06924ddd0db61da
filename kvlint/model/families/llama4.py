"""Llama 4: chunked local attention on RoPE layers, global attention on the NoPE layers."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import read_shape
from kvlint.model.families.base import windowed_layer
from kvlint.model.spec import CacheKind


class Llama4:
    """``no_rope_layers[i]`` is 1 where layer ``i`` uses RoPE; those layers attend within
    ``attention_chunk_size`` tokens, the others (0) globally.

    Mirrors vllm/model_executor/models/llama4.py (``use_chunked_local_attn = not self.nope and
    config.attention_chunk_size``); transformers' default is every 4th layer NoPE
    (``no_rope_layer_interval``).
    """

    name = "llama4"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        chunk = cfg.opt_int("attention_chunk_size", minimum=1)
        flags = cfg.opt_list("no_rope_layers")
        if not flags:
            interval = cfg.opt_int("no_rope_layer_interval", minimum=1) or 4
            flags = [int((i + 1) % interval != 0) for i in range(shape.num_layers)]
        if len(flags) != shape.num_layers:
            raise cfg.error(
                "no_rope_layers",
                f"`{cfg.key_name('no_rope_layers')}` must have one entry per layer "
                f"({shape.num_layers}), got {len(flags)}",
            )
        layers = tuple(
            windowed_layer(shape, CacheKind.CHUNKED, chunk) if chunk and flag else full_layer(shape)
            for flag in flags
        )
        return Architecture(shape, layers)


LLAMA4 = Llama4()
