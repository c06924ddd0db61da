"""MLA: DeepSeek V2 / V3 / V3.2 / R1, Kimi K2 and GLM-5: one latent vector per token per layer."""

from __future__ import annotations

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.base import Shape
from kvlint.model.families.base import full_layer
from kvlint.model.families.base import read_shape
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec


class MultiHeadLatent:
    """Multi-head latent attention: the cache holds ``kv_lora_rank + qk_rope_head_dim`` values.

    vLLM's `get_head_size` (vllm/transformers_utils/model_arch_config_convertor.py) returns
    ``kv_lora_rank + qk_rope_head_dim`` for the DeepSeek MLA model types, and `MLAAttentionSpec`
    stores one tensor (``head_size_v = 0``) for one KV head (`get_num_kv_heads` returns 1).
    Without ``kv_lora_rank`` (DeepSeek V1 style) the layers are ordinary attention.
    """

    name = "deepseek-mla"

    def architecture(self, cfg: ConfigView) -> Architecture:
        shape = read_shape(cfg)
        kv_lora = cfg.opt_int("kv_lora_rank", minimum=1)
        if kv_lora is None:
            return Architecture(shape, tuple(full_layer(shape) for _ in range(shape.num_layers)))
        rope = cfg.opt_int("qk_rope_head_dim", minimum=0)
        if rope is None:
            raise cfg.error(
                "kv_lora_rank",
                f"`{cfg.key_name('qk_rope_head_dim')}` is missing: an MLA cache holds "
                "kv_lora_rank + qk_rope_head_dim values per token",
            )
        latent = kv_lora + rope
        layer = LayerSpec(CacheKind.MLA, kv_heads=1, head_dim_k=latent, head_dim_v=0)
        mla_shape = Shape(shape.num_layers, shape.hidden_size, shape.num_attention_heads, 1, latent)
        notes: tuple[str, ...] = ()
        if cfg.has("index_head_dim"):
            notes = (
                "DeepSeek sparse attention: vLLM also keeps an indexer key cache of "
                f"{cfg.raw('index_head_dim')} values per token per layer (not counted here)",
            )
        return Architecture(mla_shape, tuple(layer for _ in range(shape.num_layers)), notes)


MLA = MultiHeadLatent()

MODEL_TYPES = (
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "kimi_k2",
    "deepseek_mtp",
    # GLM-4.7-Flash and GLM-5.x: DeepSeek's MLA (kv_lora_rank 512 + qk_rope_head_dim 64 in
    # their configs) under GLM's names; GLM-5 adds the V3.2 sparse indexer (index_head_dim)
    "glm4_moe_lite",
    "glm_moe_dsa",
)
