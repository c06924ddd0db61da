"""kvlint.sizing.size: GPU lookup, cache dtype, defaults and the missing facts."""

from __future__ import annotations

from kvlint.engines.sizer import size
from kvlint.estimate import Refusal
from testing.builders import dense
from testing.builders import deployment


def test_sizes_a_vllm_deployment_on_a_named_gpu() -> None:
    sizing = size(deployment(gpu="nvidia-l4", max_model_len=8192), dense())
    assert sizing.gpu is not None and sizing.gpu.key == "L4-24GB"
    assert sizing.kv is not None and sizing.kv.per_token_bytes == 128 * 1024
    assert sizing.engine is not None and sizing.engine.available_kv_bytes is not None
    assert sizing.missing == ()
    # No engine version named: the newest line, with its 0.92 default recorded.
    assert "default gpu_memory_utilization 0.92" in sizing.engine.notes


def test_cache_dtype_auto_is_the_model_dtype_and_fp8_halves_it() -> None:
    assert size(deployment(), dense()).kv.per_token_bytes == 128 * 1024  # type: ignore[union-attr]
    fp8 = size(deployment(kv_cache_dtype="fp8_e4m3"), dense())
    assert fp8.kv is not None and fp8.kv.per_token_bytes == 64 * 1024


def test_no_gpu_named_is_a_missing_fact() -> None:
    sizing = size(deployment(max_model_len=8192), dense())
    assert sizing.missing == ("GPU type",)
    assert sizing.engine is not None and sizing.engine.available_kv_bytes is None


def test_unknown_gpu_and_tpu() -> None:
    unknown = size(deployment(gpu="banana-9000"), dense())
    assert unknown.gpu is None
    assert unknown.missing == ("GPU memory (unknown GPU 'banana-9000')",)
    tpu = size(deployment(gpu="tpu-v6e-slice"), dense())
    assert tpu.gpu is None
    assert tpu.missing == ("GPU memory (Google TPU v6e (Trillium) is a TPU: out of scope)",)


def test_no_model() -> None:
    sizing = size(deployment(gpu="L4"), None)
    assert sizing.engine is None and sizing.kv is None
    assert sizing.missing == ("model config",)


def test_defaults_are_recorded_as_sourced_defaults() -> None:
    dep = deployment(gpu="H100", engine_version="0.11.0", max_model_len=8192)
    settled = size(dep, dense()).settled
    assert settled is not None and settled.memory_fraction is not None
    assert settled.memory_fraction.value == 0.9
    assert settled.memory_fraction.default is True
    assert settled.memory_fraction.span == dep.span
    assert settled.max_num_seqs is not None and settled.max_num_seqs.default
    assert settled.max_num_seqs.value == 1024  # >= 70 GiB, not an A100
    assert settled.max_num_batched_tokens is not None
    assert settled.max_num_batched_tokens.value == 8192
    assert not settled.max_model_len.default  # the file states it
    assert not settled.version.default
    newest = size(deployment(gpu="L4"), dense()).settled
    assert newest is not None and newest.version.default
    assert newest.version.value == "0.33.0"
    assert newest.max_model_len.default and newest.max_model_len.value == 131072


def test_llamacpp_defaults() -> None:
    settled = size(deployment("llamacpp", max_model_len=8192), dense()).settled
    assert settled is not None and settled.max_num_seqs is not None
    assert settled.max_num_seqs.default and settled.max_num_seqs.value == 4  # -np auto
    assert settled.cache_dtype.default and settled.cache_dtype.value == "f16"
    assert not settled.max_model_len.default


def test_overrides_lift_the_length_the_engine_sizes_at() -> None:
    # The YaRN override of Qwen2.5-7B's model card on vLLM 0.11: 32,768 x 4 positions.
    dep = deployment(
        gpu="L4",
        engine_version="0.11.0",
        max_model_len=131072,
        rope_scaling={
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
        },
    )
    sizing = size(dep, dense(max_len=32768))
    assert sizing.settled is not None and sizing.settled.derived_max_model_len == 131072
    assert sizing.spec is not None and sizing.spec.rope_scaling is not None
    assert sizing.engine is not None and sizing.engine.max_model_len == 131072
    assert sizing.engine.refusal is not Refusal.BEYOND_POSITIONS
