"""Engines built by the 0.5-0.7 per-model build.py scripts: with max_num_tokens unset the
engine is profiled for max_batch_size x max_input_len tokens, whose activations TensorRT holds
before the pool is sized; the runtime's default fraction was 0.85."""

from __future__ import annotations

from kvlint.engines import account
from kvlint.engines.trtllm.accounting import decoder_bytes
from kvlint.engines.trtllm.accounting import engine_activation_bytes
from kvlint.estimate import Refusal
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import settled

LLAMA_2_7B = catalog_model("meta-llama/Llama-2-7b-hf")
BUILT = {"backend": "tensorrt"}


def test_a_2023_engine_is_profiled_for_batch_times_input_length() -> None:
    # NVIDIA/TensorRT-LLM#224 (2023-10-31, release 0.5.0): examples/llama/build.py with
    # --max_batch_size 25 --max_output_len 4096 (max_input_len left at its 2048), served by the
    # Triton backend on an A10 at kv_cache_free_gpu_mem_fraction 0.95:
    # "Using 10718 tokens in paged KV cache."
    a10 = catalog_gpu("NVIDIA A10")
    s = settled(
        "trtllm",
        spec=LLAMA_2_7B,
        gpu=a10,
        engine_version="0.5.0",
        extras=BUILT,
        max_num_seqs=25,
        max_model_len=2048 + 4096,
        block_size=16,
        memory_fraction=0.95,
    )
    assert s.max_num_batched_tokens is not None and s.max_num_batched_tokens.value == 25 * 2048
    e = account(s)
    activations = engine_activation_bytes(LLAMA_2_7B, 51_200, 1)
    assert activations == 51_200 * (3 * 11008 + 4096) * 2
    assert e.weights_bytes is not None and e.available_kv_bytes is not None
    held = round(0.6 * GiB) + activations + decoder_bytes(LLAMA_2_7B, 25, 1, 6144)
    assert e.available_kv_bytes == int((a10.total_bytes - held - e.weights_bytes) * 0.95)
    # Against the log, within the 10% bar (the 8,192-token profile of later releases
    # left 15,712 tokens, +46.6%).
    assert e.kv_cache_tokens is not None
    assert abs(e.kv_cache_tokens - 10_718) <= 0.10 * 10_718


def test_a_192_sequence_profile_does_not_fit_beside_the_weights() -> None:
    # NVIDIA/TensorRT-LLM#401 (2023-11-15, release 0.5.0): --max_batch_size 192
    # --max_input_len 2048, no max_num_tokens, on an A100 40GB: "CUDA runtime error in
    # ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory" at start.
    a100 = catalog_gpu("A100-40GB")
    fields = dict(engine_version="0.5.0", max_num_seqs=192, max_model_len=4096)
    e = account(
        settled(
            "trtllm", spec=LLAMA_2_7B, gpu=a100, extras={**BUILT, "max-input-len": 2048}, **fields
        )
    )
    assert e.fits is False and e.refusal is Refusal.WEIGHTS
    assert "activations" in (e.error or "")
    # The same engine profiled for 8,192 tokens would have started.
    capped = account(
        settled(
            "trtllm", spec=LLAMA_2_7B, gpu=a100, extras=BUILT, max_num_batched_tokens=8192, **fields
        )
    )
    assert capped.fits is True


def test_later_engines_and_the_pytorch_backend_keep_the_8192_token_default() -> None:
    h100 = catalog_gpu("H100")
    for version, extras in (("0.8.0", BUILT), ("0.5.0", {}), ("1.2.0", BUILT)):
        s = settled("trtllm", spec=LLAMA_2_7B, gpu=h100, engine_version=version, extras=extras)
        assert s.max_num_batched_tokens is not None
        assert s.max_num_batched_tokens.value == 8192, version
        assert s.memory_fraction is not None and s.memory_fraction.value == 0.9, version
    old = settled("trtllm", spec=LLAMA_2_7B, gpu=h100, engine_version="0.7.1", extras=BUILT)
    assert old.memory_fraction is not None and old.memory_fraction.value == 0.85


def test_beams_widen_the_profile_only_past_the_input_length() -> None:
    h100 = catalog_gpu("H100")
    extras = {**BUILT, "max-input-len": 4, "max-beam-width": 8}
    s = settled(
        "trtllm", spec=LLAMA_2_7B, gpu=h100, engine_version="0.6.1", extras=extras, max_num_seqs=2
    )
    assert s.max_num_batched_tokens is not None and s.max_num_batched_tokens.value == 16
