"""The reference figures, exactly: from the real fixture configs and from minimal config dicts."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.kv import kv_size
from kvlint.model.hf import load_config_file
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.units import KiB
from kvlint.units import MiB
from kvlint.units import format_binary
from kvlint.units import format_decimal
from testing.shared import HF_CONFIGS
from testing.shared import shared_file


def fixture(name: str) -> ModelSpec:
    return load_config_file(shared_file(HF_CONFIGS / f"{name}.json"))


def llama(layers: int, hidden: int, heads: int, kv: int, dtype: str = "bfloat16") -> ModelSpec:
    config = {"model_type": "llama", "num_hidden_layers": layers, "hidden_size": hidden,
              "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": 32000,
              "torch_dtype": dtype}  # fmt: skip
    return spec_from_config(config, name="minimal")


LLAMA_2_13B = llama(40, 5120, 40, 40, "float16")
LLAMA_31_8B = llama(32, 4096, 32, 8)
LLAMA_31_70B = llama(80, 8192, 64, 8)

DEEPSEEK_V3: dict[str, Any] = {
    "model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "vocab_size": 129280, "torch_dtype": "bfloat16",
}  # fmt: skip

GPT_OSS_20B: dict[str, Any] = {
    "model_type": "gpt_oss", "num_hidden_layers": 24, "hidden_size": 2880, "head_dim": 64,
    "num_attention_heads": 64, "num_key_value_heads": 8, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "vocab_size": 201088,
}  # fmt: skip

# The seed 000_7b6018b6c19aca6e.txt: Gemma 4 31B, 60 layers, 50 of them sliding over 1,024
# tokens at 16 KV heads x 256; 10 global layers storing one 4 x 512 tensor per token (K = V).
GEMMA_4_31B: dict[str, Any] = {
    "model_type": "gemma4",
    "text_config": {
        "model_type": "gemma4_text", "num_hidden_layers": 60, "hidden_size": 5376,
        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 256,
        "global_head_dim": 512, "num_global_key_value_heads": 4, "attention_k_eq_v": True,
        "sliding_window": 1024, "sliding_window_pattern": 6, "vocab_size": 262144,
        "dtype": "bfloat16",
    },
}  # fmt: skip

QWEN3_NEXT: dict[str, Any] = {
    "model_type": "qwen3_next", "num_hidden_layers": 48, "hidden_size": 2048, "head_dim": 256,
    "num_attention_heads": 16, "num_key_value_heads": 2, "full_attention_interval": 4,
    "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
    "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "vocab_size": 151936,
    "torch_dtype": "bfloat16",
}  # fmt: skip


@pytest.mark.parametrize("source", ["fixture", "minimal"])
def test_llama_2_13b_800_kib(source: str) -> None:
    spec = fixture("meta-llama__Llama-2-13b-hf") if source == "fixture" else LLAMA_2_13B
    size = kv_size(spec)
    assert size.per_token_bytes == 800 * KiB
    assert format_binary(size.per_token_bytes) == "800 KiB"


@pytest.mark.parametrize("source", ["fixture", "minimal"])
def test_llama_31_8b_128_kib_and_64_at_8_bit(source: str) -> None:
    spec = fixture("meta-llama__Meta-Llama-3.1-8B") if source == "fixture" else LLAMA_31_8B
    assert kv_size(spec).per_token_bytes == 128 * KiB
    assert kv_size(spec, "fp8").per_token_bytes == 64 * KiB
    assert kv_size(spec, "int8").per_token_bytes == 64 * KiB
    assert kv_size(spec, "q8_0").per_token_bytes == 32 * 2 * 8 * 34 * 4  # 34 B per 32 values


@pytest.mark.parametrize("source", ["fixture", "minimal"])
def test_llama_31_70b(source: str) -> None:
    spec = fixture("meta-llama__Meta-Llama-3.1-70B") if source == "fixture" else LLAMA_31_70B
    size = kv_size(spec)
    assert size.per_token_bytes == 320 * KiB
    # The seeds use decimal K: 8K = 8,000 tokens.
    assert size.per_sequence_bytes(8_000) == 2_621_440_000
    assert format_decimal(size.per_sequence_bytes(8_000)) == "2.62 GB"
    assert format_decimal(size.per_sequence_bytes(32_000)) == "10.49 GB"
    assert format_decimal(size.per_sequence_bytes(128_000)) == "41.94 GB"
    # 32 sequences of 128K: 1,342 GB.
    assert 32 * size.per_sequence_bytes(128_000) == 1_342_177_280_000
    # The cancelled form: 2 x 80 x 8192 x 2 = 2.5 MiB, 8x the truth.
    assert size.cancelled_per_token_bytes == 2 * 80 * 8192 * 2 == int(2.5 * MiB)
    assert size.cancelled_per_token_bytes == 8 * size.per_token_bytes


def test_cancelled_form_is_64x_on_mqa() -> None:
    size = kv_size(llama(32, 8192, 64, 1))
    assert size.cancelled_per_token_bytes == 64 * size.per_token_bytes


@pytest.mark.parametrize("source", ["fixture", "minimal"])
def test_deepseek_v3_mla(source: str) -> None:
    if source == "fixture":
        spec = fixture("deepseek-ai__DeepSeek-V3")
    else:
        spec = spec_from_config(DEEPSEEK_V3, name="minimal")
    assert spec.layer_counts() == {"mla": 61}
    assert kv_size(spec).per_token_bytes == 61 * 576 * 2 == 70_272
    assert spec.attention_kind == "MLA"


@pytest.mark.parametrize(
    "name",
    ["deepseek-ai__DeepSeek-R1", "deepseek-ai__DeepSeek-V3.1", "deepseek-ai__DeepSeek-V3.2",
     "moonshotai__Kimi-K2-Instruct"],
)  # fmt: skip
def test_other_mla_fixtures(name: str) -> None:
    assert kv_size(fixture(name)).per_token_bytes == 61 * 576 * 2


def windowed_growth(spec: ModelSpec, window: int) -> None:
    """Past the window only the growing layers grow: 2W -> 4W adds 2W tokens of them."""
    size = kv_size(spec)
    bounded = size.bounded_bytes(2 * window)
    assert bounded == size.bounded_bytes(4 * window) == size.bounded_bytes(100 * window)
    assert bounded > size.bounded_bytes(window // 2)
    growth = size.per_sequence_bytes(4 * window) - size.per_sequence_bytes(2 * window)
    assert growth == 2 * window * size.per_token_bytes


@pytest.mark.parametrize("source", ["fixture", "minimal"])
def test_gpt_oss_20b_sliding_layers_fixed(source: str) -> None:
    if source == "fixture":
        spec = fixture("openai__gpt-oss-20b")
    else:
        spec = spec_from_config(GPT_OSS_20B, name="minimal")
    assert spec.layer_counts() == {"full": 12, "sliding": 12}
    size = kv_size(spec)
    assert size.per_token_bytes == 12 * 2 * 8 * 64 * 2 == 24 * KiB
    assert size.bounded_bytes(8192) == 12 * 128 * 2 * 8 * 64 * 2  # 3 MiB
    windowed_growth(spec, 128)


def test_gemma_4_26b_fixture() -> None:
    spec = fixture("google__gemma-4-26B-A4B")
    assert spec.layer_counts() == {"full_kv_shared": 5, "sliding": 25}
    size = kv_size(spec)
    assert size.per_token_bytes == 5 * 2 * 512 * 2 == 10 * KiB  # one tensor, K = V
    assert size.bounded_bytes(32_768) == 25 * 1024 * 2 * 8 * 256 * 2 == 200 * MiB
    windowed_growth(spec, 1024)


def test_gemma_4_31b_seed() -> None:
    spec = spec_from_config(GEMMA_4_31B, name="gemma-4-31b")
    assert spec.layer_counts() == {"full_kv_shared": 10, "sliding": 50}
    sliding = [layer for layer in spec.layers if layer.kind is CacheKind.SLIDING]
    assert kv_size(spec).types.k.bytes_for(sliding[0].elements_per_token) == 16 * KiB
    size = kv_size(spec)
    assert size.per_token_bytes == 10 * 4 * KiB  # 40 KiB per token, growing
    assert size.bounded_bytes(32_768) == 50 * 1024 * 16 * KiB == 800 * MiB  # fixed
    windowed_growth(spec, 1024)
    # The dense formula at the sliding shape over all 60 layers, at 32K: ~15x too big.
    dense = 60 * 2 * 16 * 256 * 2 * 32_768
    assert round(dense / size.per_sequence_bytes(32_768)) == 15


@pytest.mark.parametrize("source", ["fixture", "minimal"])
def test_qwen3_next_only_full_layers_grow(source: str) -> None:
    if source == "fixture":
        spec = fixture("Qwen__Qwen3-Next-80B-A3B-Thinking")
    else:
        spec = spec_from_config(QWEN3_NEXT, name="minimal")
    assert spec.layer_counts() == {"full": 12, "state": 36}
    assert [i for i, layer in enumerate(spec.layers) if layer.kind.grows] == list(range(3, 48, 4))
    size = kv_size(spec)
    assert size.per_token_bytes == 12 * 2 * 2 * 256 * 2 == 24 * KiB
    # Gated DeltaNet state per layer: conv 3 x (128*16*2 + 128*32) + recurrent 32 x 128 x 128.
    assert size.state_bytes == 36 * (3 * 8192 + 32 * 128 * 128) * 2
    assert size.per_sequence_bytes(1000) - size.per_sequence_bytes(0) == 1000 * 24 * KiB


def test_nemotron_h_attention_layers_only() -> None:
    spec = fixture("nvidia__Nemotron-H-56B-Base-8K")
    assert spec.layer_counts() == {"full": 10, "state": 54, "none": 54}
    size = kv_size(spec)
    assert size.per_token_bytes == 10 * 2 * 8 * 128 * 2
    # Mamba-2 state: conv 3 x (256*64 + 2*8*256) + temporal 256 x 64 x 256, per M layer.
    assert size.state_bytes == 54 * (3 * 20480 + 256 * 64 * 256) * 2


def test_falcon_h1_parallel_layers_count_state_and_cache() -> None:
    config = {"model_type": "falcon_h1", "num_hidden_layers": 2, "hidden_size": 1024,
              "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
              "mamba_d_ssm": 1536, "mamba_n_heads": 24, "mamba_d_head": 64,
              "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
              "vocab_size": 1000, "torch_dtype": "bfloat16"}  # fmt: skip
    size = kv_size(spec_from_config(config, name="h1"))
    assert size.per_token_bytes == 2 * 2 * 2 * 64 * 2
    assert size.state_bytes == 2 * (3 * (1536 + 2 * 128) + 24 * 64 * 128) * 2
    assert size.per_sequence_bytes(10) == 10 * size.per_token_bytes + size.state_bytes
