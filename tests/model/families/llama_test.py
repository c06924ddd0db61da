"""The generic decoder on real configs: Phi-3's window, Qwen2.5's disabled window, gpt-oss."""

from __future__ import annotations

from kvlint.arith.kv import kv_size
from kvlint.model.hf import load_config_file
from testing.shared import HF_CONFIGS
from testing.shared import shared_file


def test_phi3_mini_every_layer_windowed() -> None:
    spec = load_config_file(shared_file(HF_CONFIGS / "microsoft__Phi-3-mini-4k-instruct.json"))
    assert spec.layer_counts() == {"sliding": 32}
    assert spec.sliding_window == 2047
    assert spec.every_layer_windowed
    assert kv_size(spec).per_token_bytes == 0
    assert kv_size(spec).bounded_bytes(4096) == 32 * 2047 * 2 * 32 * 96 * 2


def test_qwen25_window_disabled() -> None:
    spec = load_config_file(shared_file(HF_CONFIGS / "Qwen__Qwen2.5-7B.json"))
    assert spec.layer_counts() == {"full": 28}
    assert kv_size(spec).per_token_bytes == 56 * 1024
    assert any("use_sliding_window" in note for note in spec.notes)


def test_mistral_v03_no_window() -> None:
    spec = load_config_file(shared_file(HF_CONFIGS / "mistralai__Mistral-7B-Instruct-v0.3.json"))
    assert spec.layer_counts() == {"full": 32}
    assert spec.sliding_window is None


def test_gpt_oss_quantization_and_dtype() -> None:
    spec = load_config_file(shared_file(HF_CONFIGS / "openai__gpt-oss-120b.json"))
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.weight_bits) == ("mxfp4", 4.25)
    assert spec.dtype == "bfloat16"  # no dtype in the config: vLLM serves it in bfloat16
    assert spec.rope_scaling is not None
    assert (spec.rope_scaling.rope_type, spec.rope_scaling.factor) == ("yarn", 32.0)
    assert spec.layer_counts() == {"full": 18, "sliding": 18}
