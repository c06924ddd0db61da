"""The generic decoder: Llama, Mistral, Mixtral, Qwen2/3, Phi-3, gpt-oss and any standard config."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import layers_from_types
from kvlint.model.families.base import read_layer_types
from kvlint.model.families.base import read_shape
from kvlint.model.families.base import windowed_layer
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


def sliding_layers(cfg: ConfigView, shape: Shape) -> tuple[list[LayerSpec], tuple[str, ...]]:
    """Layers of a decoder whose window, if any, comes from ``sliding_window``.

    ``layer_types`` (gpt-oss, recent transformers) names each layer. Without it a positive
    ``sliding_window`` windows every layer (Mistral 7B v0.1: 4096; Phi-3: 2047), except where
    Qwen2's ``use_sliding_window: false`` disables it; with ``use_sliding_window: true`` only
    layers from ``max_window_layers`` on are windowed (transformers Qwen2Config.layer_types).
    """
    types = read_layer_types(cfg, shape.num_layers)
    if types is not None:
        return layers_from_types(cfg, shape, types), ()
    window = cfg.opt_int("sliding_window", minimum=0)
    if not window:
        return [full_layer(shape) for _ in range(shape.num_layers)], ()
    use = cfg.opt_bool("use_sliding_window")
    if use is False:
        note = f"`sliding_window` {window} is ignored: `use_sliding_window` is false"
        return [full_layer(shape) for _ in range(shape.num_layers)], (note,)
    first = 0
    if use is True:
        first = cfg.opt_int("max_window_layers") or 0
    layers = [
        windowed_layer(shape, CacheKind.SLIDING, window) if index >= first else full_layer(shape)
        for index in range(shape.num_layers)
    ]
    return layers, ()


class Decoder:
    """Standard attention in every layer, windowed where the config says so."""

    name = "decoder"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        layers, notes = sliding_layers(cfg, shape)
        return Architecture(shape, tuple(layers), notes)


DECODER = Decoder()

MODEL_TYPES = (
    "llama",
    "mistral",
    "mixtral",
    "ministral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "phi3",
    "phimoe",
    "phi",
    "gpt_oss",
    "glm",
    "glm4",
    "glm4_moe",
    "olmo",
    "olmo2",
    "olmoe",
    "granite",
    "granitemoe",
    "internlm2",
    "yi",
    "deepseek",
    "cohere",
    "starcoder2",
    "gpt_bigcode",
    "gpt2",
    "gpt_neox",
    "gptj",
    "stablelm",
    "minicpm",
    "smollm3",
    "exaone",
    "hunyuan_v1_dense",
    "seed_oss",
    "arcee",
    "ernie4_5",
    "ernie4_5_moe",
    "bloom",
    "opt",
    "mpt",
    "dbrx",
    "baichuan",
)
