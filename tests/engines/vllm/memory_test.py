"""vLLM's memory terms, each as its source describes it: pinned by real logs and by synthetic
cases per release line.

Real cases (inputs, logged outputs, tolerance) come from the repository's and the shared
corpus; the constants are the fitted ones (kvlint/engines/vllm/fitted.py), whose
leave-one-source-out accuracy ``benchmarks/fidelity.py`` reports.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvlint.engines import estimate
from kvlint.engines.vllm.accounting import PP_WHOLE_MODEL_CHECK
from kvlint.engines.vllm.memory import CONSTANTS
from kvlint.engines.vllm.memory import PRIORS
from kvlint.engines.vllm.memory import activation_bytes
from kvlint.engines.vllm.memory import memory_line
from kvlint.engines.vllm.memory import native_sampler
from kvlint.engines.vllm.memory import non_torch_bytes
from kvlint.estimate import BORDERLINE
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from kvlint.units import GiB
from testing.builders import dense
from testing.builders import deployment

# Llama-3.2-3B: 28 layers, 8 KV heads of 128, hidden 3072, MLP 8192, vocabulary 128,256.
LLAMA_32_3B = replace(
    dense(layers=28, hidden=3072, heads=24, param_count=3_212_749_824), intermediate_size=8192
)
LLAMA_31_8B = dense()


@pytest.mark.parametrize(
    ("version", "line"),
    [
        ((0, 6, 4), "v0"),
        ((0, 8, 5), "v1-0.8"),
        ((0, 11, 0), "v1-0.11"),
        ((0, 20, 2), "v1-0.11"),
        ((0, 21, 0), "v1-0.21"),
        ((0, 33, 0), "v1-0.21"),
    ],
)
def test_release_lines(version: tuple[int, ...], line: str) -> None:
    assert memory_line(version) == line


def test_the_sampler_sorts_natively_before_flashinfer_and_on_rocm() -> None:
    assert native_sampler((0, 7, 3), "nvidia") and native_sampler((0, 10, 2), "nvidia")
    assert not native_sampler((0, 11, 0), "nvidia")
    assert native_sampler((0, 19, 0), "amd")


def test_the_native_sort_costs_more_per_logit_by_the_source() -> None:
    # 4 (fp32 logits) + 4 + 8 (sort) + 4 + 4 (probabilities, cumulative sum) + 1 (mask) + 4
    # (scattered logits) + 4 + 4 (probabilities, noise) = 37; FlashInfer keeps three fp32 rows.
    assert PRIORS.bytes_per_logit_native == 37.0 and PRIORS.bytes_per_logit == 12.0
    assert 30 <= CONSTANTS.bytes_per_logit_native <= 48
    assert 8 <= CONSTANTS.bytes_per_logit <= 24
    native = activation_bytes(
        LLAMA_31_8B, max_num_batched_tokens=2048, max_num_seqs=256, native=True
    )
    flash = activation_bytes(LLAMA_31_8B, max_num_batched_tokens=2048, max_num_seqs=256)
    assert native > 2 * flash


def test_real_native_sampler_peak_llama_32_3b_on_a_t4() -> None:
    # huggingface/cookbook, vLLM 0.8.2 on a Tesla T4 (the synthetic-data notebook): "torch peak
    # memory increase: 0.90GiB" with max_num_seqs 192 and 2,048 batched tokens. The sampler's
    # 128,256 x 192 logits are the peak; 1% for the log's rounding, 10% for the constant.
    peak = activation_bytes(LLAMA_32_3B, max_num_batched_tokens=2048, max_num_seqs=192, native=True)
    assert abs(peak / GiB - 0.90) / 0.90 <= 0.10


def test_real_flashinfer_sampler_peak_llama_31_8b_on_an_h100() -> None:
    # llm-d-incubation/llm-d-planner@d3121e0, vLLM 0.19.0, H100, Llama-3.1-8B-Instruct:
    # "torch peak memory increase 1.89 GiB" at 1,024 rows and 8,192 batched tokens.
    peak = activation_bytes(LLAMA_31_8B, max_num_batched_tokens=8192, max_num_seqs=1024)
    assert abs(peak / GiB - 1.89) / 1.89 <= 0.02


def test_the_forward_pass_splits_with_tp_and_the_sampler_does_not() -> None:
    one = activation_bytes(LLAMA_31_8B, max_num_batched_tokens=8192, max_num_seqs=1024, tp=1)
    four = activation_bytes(LLAMA_31_8B, max_num_batched_tokens=8192, max_num_seqs=1024, tp=4)
    assert one == four  # the gathered logits are the peak at any TP
    stage0 = activation_bytes(
        LLAMA_31_8B, max_num_batched_tokens=8192, max_num_seqs=1024, last_stage=False, tp=2
    )
    assert stage0 == round(14336 / 2 * 8192 * CONSTANTS.bytes_per_intermediate_token)


@pytest.mark.parametrize("version", [(0, 7, 3), (0, 10, 2), (0, 11, 0), (0, 33, 0)])
def test_non_torch_is_charged_per_line_and_layout(version: tuple[int, ...]) -> None:
    one, tp, pp = (non_torch_bytes(t, p, version) for t, p in ((1, 1), (2, 1), (1, 2)))
    assert 0 <= one <= GiB and 0 <= tp <= 4 * GiB and 0 <= pp <= 2 * GiB


def test_pp_checks_the_whole_model_on_0_14_and_0_15_only() -> None:
    # vllm-project/vllm#32105 (GLM-4.7 at PP 8 on a 0.14 nightly): "71.16 GiB KV cache is
    # needed" for the whole model against one stage's 28.57 GiB. kvlint: 3 GiB of memory per
    # stage pinned, 64 layers over PP 2, one 16,384-token request: 2 GiB per stage, 4 GiB for
    # the whole model.
    spec = dense(layers=64)
    needed = {}
    for version in ("0.13.0", "0.14.0", "0.15.1", "0.16.0"):
        dep = deployment(
            engine_version=version,
            pipeline_parallel_size=2,
            max_model_len=16384,
            kv_cache_memory_bytes=3 * GiB,
        )
        needed[version] = estimate(dep, spec, None)
    assert PP_WHOLE_MODEL_CHECK == ((0, 14), (0, 16))
    for version in ("0.14.0", "0.15.1"):
        assert needed[version].refusal is Refusal.ONE_REQUEST
        assert needed[version].needed_bytes_one_sequence == 4 * GiB
    for version in ("0.13.0", "0.16.0"):
        assert needed[version].fits is True


def test_the_free_memory_check_straddling_the_context_is_borderline() -> None:
    # 0.98 of an A100 80GB at TP 8 (substratusai/kubeai's Llama 3.1 405B FP8 manifest): 77.67
    # GiB asked; NCCL and the context take 1.43-2.05 GiB (the 0.19 init snapshots), so
    # 77.21-77.83 GiB are free: it may or may not start.
    gpu = lookup_gpu("A100-80GB")
    dep = deployment(
        engine_version="0.11.0", gpu="A100-80GB", tensor_parallel_size=8, memory_fraction=0.98
    )
    e = estimate(dep, LLAMA_31_8B, gpu)
    assert e.verdict == BORDERLINE
    assert e.refusal_at_risk is Refusal.FREE_MEMORY
