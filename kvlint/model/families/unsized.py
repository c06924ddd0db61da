"""Model types kvlint knows and refuses to size: what their cache holds that no family models.

A model whose ``model_type`` no family module reads is never sized as a generic decoder: a
compressed or cross-attention cache read as plain attention gives a confident wrong number
(DeepSeek-V4, read that way, came to 0 bytes per growing token). The types below are known; the
text says what kvlint would need to size them, and the refusal (KV902) quotes it. Every other
unknown type is refused with the type's name.
"""

from __future__ import annotations

_DEEPSEEK_V4 = (
    "DeepSeek-V4's compressed attention cache, per-layer `compress_ratios` (uncompressed, 4x and "
    "128x compressed layers) with a 128-token window and a sparse indexer over one 512-wide KV "
    "head"
)
_MINIMAX_LIGHTNING = (
    "MiniMax's lightning (linear) attention layers between its softmax layers (`attn_type_list`)"
)
_MINIMAX_M3 = (
    "MiniMax-M3's block-sparse attention and the index keys it caches beside K and V "
    "(`sparse_attention_config`)"
)
_KIMI_LINEAR = (
    "Kimi Delta Attention (linear attention) layers interleaved with MLA layers "
    "(`linear_attn_config`)"
)
_LFM2 = (
    "LFM2's short-convolution layers (`conv` in `layer_types`, a fixed state of `conv_L_cache` "
    "columns) between its attention layers"
)
_ENCODER = (
    "an encoder (or encoder-decoder) model; kvlint sizes the cache of decoder-only models, and "
    "vLLM serves encoder-only models without one"
)

UNSIZED: dict[str, str] = {
    "deepseek_v4": _DEEPSEEK_V4,
    "deepseek_ref": _DEEPSEEK_V4,  # SGLang's FP8 re-export of DeepSeek-V4 names its type so
    "mllama": (
        "Llama 3.2 Vision's cross-attention layers, whose cache is sized by the image tokens, "
        "not by the text"
    ),
    "minimax": _MINIMAX_LIGHTNING,
    "minimax_text_01": _MINIMAX_LIGHTNING,
    "minimax_m1": _MINIMAX_LIGHTNING,
    "minimax_m3": _MINIMAX_M3,
    "minimax_m3_vl": _MINIMAX_M3,
    "mimo_v2_flash": (
        "MiMo-V2-Flash's two attention shapes: full layers and 128-token sliding layers with "
        "different KV head counts (`swa_num_key_value_heads`) and K/V widths, placed by "
        "`hybrid_layer_pattern`"
    ),
    "phi3small": (
        "Phi-3-small's block-sparse attention, dense only every "
        "`dense_attention_every_n_layers` layers (`blocksparse_*` keys)"
    ),
    "minicpm3": (
        "MiniCPM3's low-rank (MLA-shaped) projections (`kv_lora_rank`, `qk_rope_head_dim`), "
        "whose K and V vLLM caches expanded per head, with a K wider than V"
    ),
    "kimi_linear": _KIMI_LINEAR,
    "kimi_k3": _KIMI_LINEAR,
    "lfm2": _LFM2,
    "lfm2_vl": _LFM2,
    "bert": _ENCODER,
    "roberta": _ENCODER,
    "xlm-roberta": _ENCODER,
    "nomic_bert": _ENCODER,
    "modernbert": _ENCODER,
    "new": _ENCODER,  # Alibaba's GTE v1.5 encoders
    "t5": _ENCODER,
    "mt5": _ENCODER,
    "bart": _ENCODER,
    "whisper": _ENCODER,
}


def unsized_reason(model_type: str) -> str | None:
    """What kvlint lacks to size ``model_type``, when it is a type kvlint knows it cannot size."""
    return UNSIZED.get(model_type)
