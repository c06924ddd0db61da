"""The KV-cache dtypes each engine accepts, as read in its source (research/engines.md)."""

from __future__ import annotations

# vllm/config/cache.py CacheDType, 0.11.0 and 0.33.0 (research/engines.md 1f).
VLLM_011: tuple[str, ...] = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc")
VLLM_CURRENT: tuple[str, ...] = (
    *VLLM_011,
    *("float16", "fp8_ds_mla", "nvfp4_ds_mla", "turboquant_k8v4", "turboquant_4bit_nc"),
    *("turboquant_k3v4_nc", "turboquant_3bit_nc", "octave_k3v4", "octave_k3v3"),
    *("octave_k3v3_compact", "ultraquant_4bit", "int4_per_token_head", "int8_per_token_head"),
    *("fp8_per_token_head", "nvfp4", "nvfp4_4over6"),
)
ALLOWED: dict[str, tuple[str, ...]] = {
    # sglang/srt/arg_groups/fields/model.py (0.5.23)
    "sglang": (
        "auto",
        "fp8_e5m2",
        "fp8_e4m3",
        "mxfp8",
        "bf16",
        "bfloat16",
        "nvfp4",
        "fp4_mx_block16",
    ),
    # llama.cpp common/arg.cpp kv_cache_types; anything else: "Unsupported cache type"
    "llamacpp": ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"),
    # TGI launcher --kv-cache-dtype (db931fcf): only the two fp8 formats
    "tgi": ("fp8_e4m3fn", "fp8_e5m2"),
    # Ollama OLLAMA_KV_CACHE_TYPE
    "ollama": ("f16", "q8_0", "q4_0"),
}
QUANTISED_TYPES = ("q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
