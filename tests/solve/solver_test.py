"""The solver on real models from the built-in catalog with vLLM's own accounting.

Expected answers are worked here from first principles (bytes per token per GPU from the
config, blocks of 16, the null block) and, where the engine's overheads matter, from the
available memory the engine accounting reports for that layout, never from the solver.
"""

from __future__ import annotations

import math

import pytest

from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import stage_layers
from kvlint.engines import account
from kvlint.engines.llamacpp import defaults as llamacpp_defaults
from kvlint.engines.sizer import size
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.settled import Settled
from kvlint.solve import admitted_seqs
from kvlint.solve import largest_max_model_len
from kvlint.solve import max_model_len_at
from kvlint.solve import max_num_seqs_at
from kvlint.solve import min_gpus
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import deployment
from testing.builders import settled

CONTEXT = 128_000  # "128k": vLLM reads a lower-case k as 1,000
BLOCKS = CONTEXT // 16  # 8,000 blocks of 16 tokens per sequence


@pytest.fixture(scope="module")
def llama70b() -> ModelSpec:
    return catalog_model("meta-llama/Meta-Llama-3.1-70B")


@pytest.fixture(scope="module")
def h100() -> GpuSpec:
    return catalog_gpu("H100-80GB")


def vllm(spec: ModelSpec, gpu: GpuSpec, **fields: object) -> Settled:
    return settled("vllm", spec=spec, gpu=gpu, **fields)


def per_token_per_gpu(tp: int, pp: int, width: int) -> int:
    """Llama 3.1 70B: 80 layers, 8 KV heads of 128; one GPU holds its stage's layers and
    ``max(1, 8 // tp)`` heads, K and V, ``width`` bytes each."""
    return max(stage_layers(80, pp)) * max(1, 8 // tp) * 2 * 128 * width


def engine_admits(spec: ModelSpec, gpu: GpuSpec, tp: int, pp: int, cache: str) -> int:
    """Sequences of 128,000 tokens one replica holds: the engine's available memory, divided
    into blocks here, the null block held back."""
    served = vllm(
        spec,
        gpu,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        max_model_len=CONTEXT,
        kv_cache_dtype=cache,
    )
    available = account(served).available_kv_bytes
    assert available is not None
    width = 1 if cache == "fp8" else 2
    blocks = max(0, available) // (16 * per_token_per_gpu(tp, pp, width))
    return max(0, (blocks - 1) // BLOCKS)


def weights_only_admits(spec: ModelSpec, gpu: GpuSpec, tp: int, pp: int, width: int) -> int:
    """An upper bound needing no overhead model: 0.92 of the GPU less an even share of the
    16-bit weights, as if activations, graphs and the CUDA context cost nothing."""
    assert spec.param_count is not None
    room = 0.92 * gpu.total_bytes - 2 * spec.param_count / (tp * pp)
    return max(0, math.floor(room / (CONTEXT * per_token_per_gpu(tp, pp, width))))


# Replica shapes the default search tries for Llama 70B: TP 1, 2, 4, 8 alone, and pipeline
# stages of TP 8 (the node's TP, one KV head per GPU).
def shapes(max_gpus: int) -> list[tuple[int, int]]:
    pure = [(tp, 1) for tp in (1, 2, 4, 8) if tp <= max_gpus]
    return pure + [(8, pp) for pp in range(2, max_gpus // 8 + 1)]


def fewest_gpus(admits: dict[tuple[int, int], int], concurrency: int) -> int:
    return min(tp * pp * math.ceil(concurrency / a) for (tp, pp), a in admits.items() if a >= 1)


def test_llama70b_32_users_at_128k_bf16_needs_24_h100(llama70b: ModelSpec, h100: GpuSpec) -> None:
    plan = min_gpus(vllm(llama70b, h100), context=CONTEXT, concurrency=32)
    # No layout of 23 GPUs or fewer can, even with every overhead at zero: 3 x TP 8 would need
    # 11 a replica, TP 8 x PP 2 alone holds 26, TP 4 at most 4.
    bound = {s: weights_only_admits(llama70b, h100, *s, width=2) for s in shapes(23)}
    assert bound[(8, 1)] == 11 and bound[(8, 2)] == 26 and bound[(4, 1)] == 4
    assert all(tp * pp * math.ceil(32 / a) > 23 for (tp, pp), a in bound.items() if a)
    # With the engine's overheads, TP 8 x PP 3 (27 layers a stage, 13.5 KiB a token per GPU)
    # holds the 32, and nothing smaller does.
    admits = {s: engine_admits(llama70b, h100, *s, cache="auto") for s in shapes(64)}
    assert admits[(8, 3)] >= 32 > admits[(8, 2)]
    assert fewest_gpus(admits, 32) == 24
    assert plan.gpus == 24
    assert plan.layout == Layout(8, 3, 1)
    assert plan.admitted == admits[(8, 3)]
    assert plan.replica is not None and plan.replica.estimate.bytes_per_token == 27 * 512


def test_llama70b_32_users_at_128k_fp8_needs_16_h100(llama70b: ModelSpec, h100: GpuSpec) -> None:
    fp8 = vllm(llama70b, h100, kv_cache_dtype="fp8")
    plan = min_gpus(fp8, context=CONTEXT, concurrency=32)
    # An fp8 cache halves every figure: nothing of 15 GPUs or fewer holds 32 even overhead-free
    # (one TP 8 holds at most 23, three TP 4 at most 3 x 8).
    bound = {s: weights_only_admits(llama70b, h100, *s, width=1) for s in shapes(15)}
    assert bound[(8, 1)] == 23 and bound[(4, 1)] == 8
    assert all(tp * pp * math.ceil(32 / a) > 15 for (tp, pp), a in bound.items() if a)
    admits = {s: engine_admits(llama70b, h100, *s, cache="fp8") for s in shapes(64)}
    assert fewest_gpus(admits, 32) == 16
    assert plan.gpus == 16
    # Two 16-GPU answers (TP 8 x PP 2, or two TP 8 replicas): the one admitting more wins.
    best = max(((8, 2), admits[(8, 2)]), ((8, 1), 2 * admits[(8, 1)]), key=lambda x: x[1])
    assert plan.admitted == best[1] >= 32
    assert plan.layout is not None
    assert (plan.layout.tp, plan.layout.pp) == best[0]


def test_tp16_replicates_kv_heads_and_is_no_better_than_tp8(
    llama70b: ModelSpec, h100: GpuSpec
) -> None:
    at = {
        tp: max_num_seqs_at(vllm(llama70b, h100, tensor_parallel_size=tp), max_model_len=CONTEXT)
        for tp in (8, 16)
    }
    # 8 KV heads: TP 16 leaves each GPU one head, as TP 8 does, so a token still costs 40 KiB a
    # GPU; TP 16 only frees weight memory, and twice the GPUs buy a few sequences, not twice.
    for tp in (8, 16):
        assert at[tp].estimate.bytes_per_token == per_token_per_gpu(tp, 1, 2) == 40 * 1024
        assert at[tp].max_num_seqs == engine_admits(llama70b, h100, tp, 1, "auto")
    assert at[8].max_num_seqs < at[16].max_num_seqs < 2 * at[8].max_num_seqs
    # Asked for twice TP 8's sequences in one replica, with TP 16 allowed, the solver splits
    # layers instead (TP 8 x PP 2 halves the cache per GPU).
    target = 2 * at[8].max_num_seqs
    assert at[16].max_num_seqs < target <= engine_admits(llama70b, h100, 8, 2, "auto")
    plan = min_gpus(
        vllm(llama70b, h100), context=CONTEXT, concurrency=target, max_tp=16, replicas=False
    )
    assert plan.layout == Layout(8, 2, 1)


def test_max_num_seqs_at_128k_on_tp8(llama70b: ModelSpec, h100: GpuSpec) -> None:
    answer = max_num_seqs_at(vllm(llama70b, h100, tensor_parallel_size=8), max_model_len=CONTEXT)
    assert answer.max_num_seqs == engine_admits(llama70b, h100, 8, 1, "auto")
    assert answer.max_model_len == CONTEXT
    fp8 = max_num_seqs_at(
        vllm(llama70b, h100, tensor_parallel_size=8, kv_cache_dtype="fp8"), max_model_len=CONTEXT
    )
    assert fp8.max_num_seqs == engine_admits(llama70b, h100, 8, 1, "fp8")
    assert fp8.max_num_seqs >= 2 * answer.max_num_seqs


def test_max_model_len_at_32_users_on_tp8(llama70b: ModelSpec, h100: GpuSpec) -> None:
    served = vllm(llama70b, h100, tensor_parallel_size=8)
    answer = max_model_len_at(served, concurrency=32, limit=131_072)
    available = account(served).available_kv_bytes
    assert available is not None
    # 32 requests of b blocks each beside the null block, 40 KiB a token per GPU.
    blocks = available // (16 * 40 * 1024)
    assert answer.max_model_len == (blocks - 1) // 32 * 16
    assert not answer.at_limit
    unbounded = max_model_len_at(served, concurrency=1)
    assert unbounded.max_model_len == 131_072 and unbounded.at_limit  # the model's own maximum


@pytest.mark.parametrize("version", ["0.11.0", "0.33.0"])
def test_max_model_len_for_one_sequence_is_vllms_own_estimate(version: str) -> None:
    # Llama 3.1 8B at its full 131,072 on one L4: vLLM refuses and suggests a length.
    spec = catalog_model("meta-llama/Meta-Llama-3.1-8B")
    l4 = catalog_gpu("L4")
    served = vllm(spec, l4, max_model_len=131_072, engine_version=version)
    refusal = account(served)
    assert refusal.fits is False and refusal.estimated_max_model_len
    answer = max_model_len_at(served, concurrency=1, limit=131_072)
    assert answer.max_model_len == refusal.estimated_max_model_len
    assert f"estimated maximum model length is {answer.max_model_len}" in (refusal.error or "")
    # What the rules quote (KV302's fix title) comes from the same search.
    sizing = size(deployment("vllm", max_model_len=131_072, engine_version=version, gpu="L4"), spec)
    assert largest_max_model_len(sizing) == refusal.estimated_max_model_len
    assert admitted_seqs(sizing) == 0


def test_llamacpp_slots_are_a_setting_the_solver_sizes() -> None:
    # llama.cpp allocates exactly -c cells; to serve C sequences of 32,000 tokens it needs
    # -c C x 32,000 -np C, and the question is whether that fits beside the weights.
    spec = catalog_model("meta-llama/Meta-Llama-3.1-8B")
    rtx = catalog_gpu("RTX-4090")
    served = settled("llamacpp", spec=spec, gpu=rtx)
    answer = max_num_seqs_at(served, max_model_len=32_000)
    available = answer.estimate.available_kv_bytes
    assert available is not None
    # The GPU less the weights, less the margin llama_params_fit keeps (1 GiB, where modelled).
    room = available - getattr(llamacpp_defaults, "LLAMACPP_FIT_MARGIN", 0)
    # 32 layers x 8 KV heads x 128 x K and V x 2 bytes (f16) = 128 KiB a cell; 32,000 is
    # already a multiple of 256.
    assert answer.max_num_seqs == room // (32_000 * 128 * 1024) >= 1
    assert answer.estimate.kv_cache_tokens == answer.max_num_seqs * 32_000
    longest = max_model_len_at(served, concurrency=4, limit=131_072)
    # Four slots of L tokens, each padded to 256: the largest padded L whose cells fit.
    assert longest.max_model_len == room // (4 * 128 * 1024) // 256 * 256


def test_tgi_has_no_pipeline_so_replicas_carry_the_load(llama70b: ModelSpec, h100: GpuSpec) -> None:
    plan = min_gpus(settled("tgi", spec=llama70b, gpu=h100), context=CONTEXT, concurrency=32)
    assert all(r.layout.pp == 1 for r in plan.replicas)
    assert [r.layout.tp for r in plan.replicas] == [1, 2, 4, 8]
    tp8 = next(r for r in plan.replicas if r.layout.tp == 8)
    est = tp8.estimate
    # TGI pages one token at a time (flashinfer): the whole part of its concurrency figure.
    assert est.kv_cache_tokens is not None
    assert tp8.admitted == est.kv_cache_tokens // CONTEXT
    assert plan.layout == Layout(8, 1, math.ceil(32 / tp8.admitted))


def test_rules_api_on_a_deployment_that_starts(h100: GpuSpec) -> None:
    spec = catalog_model("meta-llama/Meta-Llama-3.1-8B")
    sizing = size(deployment("vllm", max_model_len=32_000, max_num_seqs=256, gpu="H100-80GB"), spec)
    assert sizing.engine is not None and sizing.engine.num_blocks is not None
    admitted = admitted_seqs(sizing)
    # 32 layers x 8 KV heads x 128 x K and V x 2 bytes = 128 KiB a token, 2,000 blocks a
    # request; the null block held back.
    available = sizing.engine.available_kv_bytes
    assert available is not None
    assert admitted == (available // (16 * 128 * 1024) - 1) // 2_000
    assert admitted is not None and 1 < admitted < 256
    # KV301's other fix: the longest max_model_len at which all 256 fit.
    longest = largest_max_model_len(sizing, concurrency=256)
    assert longest == (available // (16 * 128 * 1024) - 1) // 256 * 16
    assert largest_max_model_len(sizing, concurrency=admitted) == 32_000
