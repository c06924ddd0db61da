"""quantization_config: method, bits, and the cache scheme a checkpoint declares."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.errors import KvlintError
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import Quantization

BASE: dict[str, Any] = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
                        "num_attention_heads": 4, "vocab_size": 1000}  # fmt: skip


def quant(qc: dict[str, Any]) -> Quantization | None:
    return spec_from_config({**BASE, "quantization_config": qc}, name="m").quantization


@pytest.mark.parametrize(
    ("qc", "expected"),
    [
        ({"quant_method": "awq", "bits": 4}, Quantization("awq", 4.0)),
        ({"quant_method": "gptq", "bits": 8}, Quantization("gptq", 8.0)),
        ({"quant_method": "fp8", "fmt": "e4m3"}, Quantization("fp8", 8.0)),
        ({"quant_method": "mxfp4"}, Quantization("mxfp4", 4.25)),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True}, Quantization("bitsandbytes", 4.0)),
        (
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
            Quantization("modelopt", 8.0, "fp8_e4m3"),
        ),
        (
            {"quant_method": "modelopt", "quant_algo": "NVFP4",
             "kv_cache_scheme": {"num_bits": 8, "type": "float", "dynamic": False}},
            Quantization("modelopt", 4.5, "fp8"),
        ),
        (
            {"quant_method": "compressed-tensors",
             "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}},
             "kv_cache_scheme": {"num_bits": 8, "type": "float"}},
            Quantization("compressed-tensors", 4.0, "fp8"),
        ),
    ],
)  # fmt: skip
def test_methods(qc: dict[str, Any], expected: Quantization) -> None:
    assert quant(qc) == expected


def test_no_quantization() -> None:
    assert spec_from_config(BASE, name="m").quantization is None


def test_quant_method_must_be_a_string() -> None:
    with pytest.raises(KvlintError, match="quant_method"):
        quant({"quant_method": 4})
