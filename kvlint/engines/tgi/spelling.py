"""Hugging Face TGI: ``text-generation-launcher`` flags and the same names as env vars."""

from __future__ import annotations

from kvlint.deploy.flags import EngineSpec
from kvlint.deploy.flags import Setting
from kvlint.deploy.interpret import Engine
from kvlint.engines.tgi import flags as tgi_flags
from kvlint.engines.tgi.facts import KV_CACHE_DTYPES

# launcher/src/main.rs: enum Quantization (clap kebab-case names) and enum KVCacheDtype.
QUANTIZE = (
    "awq",
    "compressed-tensors",
    "eetq",
    "exl2",
    "gptq",
    "marlin",
    "bitsandbytes",
    "bitsandbytes-nf4",
    "bitsandbytes-fp4",
    "fp8",
)

SETTINGS = {
    s.name: s
    for s in (
        Setting("model-id", "str", "model"),
        Setting("dtype", "str", "dtype"),
        Setting("quantize", "str", "quantization", QUANTIZE),
        Setting("kv-cache-dtype", "str", "kv_cache_dtype", KV_CACHE_DTYPES),
        Setting("max-total-tokens", "int", "max_model_len", minimum=1),
        Setting("max-input-tokens", "int"),
        Setting("max-input-length", "int"),
        Setting("max-batch-prefill-tokens", "int", "max_num_batched_tokens", minimum=1),
        Setting("max-batch-total-tokens", "int"),
        Setting("max-concurrent-requests", "int", "max_num_seqs", minimum=1),
        Setting("num-shard", "int", "tensor_parallel_size", minimum=1),
        Setting("cuda-memory-fraction", "fraction", "memory_fraction"),
    )
}

SPEC = EngineSpec(
    name="tgi",
    settings=SETTINGS,
    known=tgi_flags.KNOWN,
    aliases=tgi_flags.ALIASES,
    env=tgi_flags.ENV,
    model_flag="model-id",
)

# launcher/src/main.rs refuses both: "Both `max_input_tokens` (..) and `max_input_length` (..)
# are set. Please define only `max_input_tokens` as `max_input_length is deprecated ..."
ENGINE = Engine(
    SPEC,
    exclusive=(
        (
            "max-input-length",
            "max-input-tokens",
            "text-generation-launcher refuses to start; keep `max-input-tokens`",
        ),
    ),
)
