"""vLLM's `--kv-cache-dtype auto` and the cache quantisation a checkpoint declares: a ModelOpt
checkpoint's `kv_cache_quant_algo` is the cache from 0.14 (vllm-project/vllm#30785); a
compressed-tensors `kv_cache_scheme` and a weight quantisation never are."""

from __future__ import annotations

from typing import Any

from kvlint_rules.weight_quant_as_cache_quant import WeightQuantAsCacheQuant

from kvlint.engines.vllm.effective import VllmSettled
from testing.builders import LLAMA_31_8B
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import deployment
from testing.builders import model
from testing.builders import problems
from testing.builders import settled

# nvidia/Qwen3-8B-FP8: ModelOpt FP8 weights, kv_cache_quant_algo FP8 (the catalog's entry).
MODELOPT_FP8 = catalog_model("nvidia/Qwen3-8B-FP8")

# A compressed-tensors FP8 checkpoint with a calibrated cache scheme (RedHatAI's *-FP8-KV form).
_FP8 = {"num_bits": 8, "type": "float"}
_CT: dict[str, Any] = {
    "quant_method": "compressed-tensors",
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": _FP8}},
    "ignore": ["lm_head"],
    "kv_cache_scheme": _FP8,
}
CT_FP8_KV = model({**LLAMA_31_8B, "quantization_config": _CT}, "RedHatAI/Llama-3.1-8B-FP8-KV")


def _cache(spec: Any, **fields: Any) -> str:
    s = settled("vllm", spec=spec, gpu=catalog_gpu("H100-80GB"), **fields)
    assert isinstance(s, VllmSettled) and s.cache_types is not None
    return s.cache_types.k.name


def test_auto_follows_a_modelopt_checkpoints_fp8_cache_from_0_14() -> None:
    assert _cache(MODELOPT_FP8, engine_version="0.14.0") == "fp8_e4m3"
    assert _cache(MODELOPT_FP8, engine_version="0.14.0", kv_cache_dtype="auto") == "fp8_e4m3"


def test_before_0_14_auto_is_the_model_dtype_whatever_the_checkpoint_declares() -> None:
    assert _cache(MODELOPT_FP8, engine_version="0.13.0") == "bfloat16"


def test_a_cache_dtype_the_file_sets_wins_over_the_checkpoint() -> None:
    assert _cache(MODELOPT_FP8, engine_version="0.20.0", kv_cache_dtype="bfloat16") == "bfloat16"


def test_a_compressed_tensors_cache_scheme_is_not_the_cache_under_auto() -> None:
    assert CT_FP8_KV.quantization is not None
    assert CT_FP8_KV.quantization.kv_cache_dtype == "fp8"  # declared, but not read by vLLM
    assert _cache(CT_FP8_KV, engine_version="0.20.0") == "bfloat16"


def test_a_plan_assuming_the_weights_fp8_for_the_cache_is_still_caught() -> None:
    # The seed: FP8 weights (compressed-tensors) taken for an FP8 cache under `auto`.
    dep = deployment(gpu="H100-80GB", engine_version="0.20.0", claims={"kv_cache_dtype": "fp8"})
    [p] = problems(WeightQuantAsCacheQuant, dep, CT_FP8_KV)
    assert "the cache stays bfloat16" in p.message


def test_a_plan_assuming_the_modelopt_checkpoints_declared_cache_is_right() -> None:
    dep = deployment(gpu="H100-80GB", engine_version="0.20.0", claims={"kv_cache_dtype": "fp8"})
    assert problems(WeightQuantAsCacheQuant, dep, MODELOPT_FP8) == []
