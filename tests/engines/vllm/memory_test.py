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
from kvlint.engines import settle
from kvlint.engines.vllm.accounting import PP_WHOLE_MODEL_CHECK
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.engines.vllm.memory import CONSTANTS
from kvlint.engines.vllm.memory import PRIORS
from kvlint.engines.vllm.memory import ROTARY_ATTENTION_BYTES_PER_WIDTH
from kvlint.engines.vllm.memory import activation_bytes
from kvlint.engines.vllm.memory import encoder_bytes
from kvlint.engines.vllm.memory import encoder_output_bytes
from kvlint.engines.vllm.memory import encoder_profile
from kvlint.engines.vllm.memory import lora_bytes
from kvlint.engines.vllm.memory import memory_line
from kvlint.engines.vllm.memory import native_sampler
from kvlint.engines.vllm.memory import non_torch_bytes
from kvlint.estimate import BORDERLINE
from kvlint.estimate import Refusal
from kvlint.gpus import lookup_gpu
from kvlint.model.catalog import lookup
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from testing.builders import dense
from testing.builders import deployment
from testing.builders import sized

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


@pytest.mark.parametrize(
    ("version", "vendor", "sorts"),
    [
        ((0, 7, 3), "nvidia", True),  # V0's own sampler
        ((0, 10, 2), "nvidia", True),  # V1 wheels without FlashInfer
        ((0, 11, 0), "nvidia", False),  # FlashInfer, a dependency of the wheel
        ((0, 11, 0), "amd", True),
        ((0, 11, 1), "nvidia", True),  # vllm-project/vllm#26859 turned FlashInfer off
        ((0, 12, 0), "nvidia", True),
        ((0, 19, 0), "nvidia", False),  # the Triton kernel (or FlashInfer again)
        ((0, 19, 0), "amd", False),  # apply_top_k_top_p takes Triton on ROCm too
        ((0, 33, 0), "nvidia", False),
    ],
)
def test_which_releases_sort_the_whole_vocabulary(
    version: tuple[int, ...], vendor: str, sorts: bool
) -> None:
    assert native_sampler(version, vendor) is sorts


@pytest.mark.parametrize(
    ("version", "vendor", "flashinfer", "sorts"),
    [
        ((0, 7, 3), "nvidia", True, True),  # V0: its own sampler whatever the variable says
        ((0, 8, 5), "nvidia", True, True),  # before the first release seen taking it
        ((0, 10, 1, 1), "nvidia", True, False),  # "Using FlashInfer for top-p & top-k sampling."
        ((0, 10, 1, 1), "amd", True, True),  # FlashInfer's kernel is CUDA's
        ((0, 11, 0), "nvidia", False, True),  # 0 keeps the sort where FlashInfer was the default
        ((0, 12, 0), "nvidia", True, False),  # opt-in after #26859
        ((0, 19, 0), "nvidia", False, False),  # the Triton kernel, no sort
    ],
)
def test_vllm_use_flashinfer_sampler_picks_the_kernel_by_release(
    version: tuple[int, ...], vendor: str, flashinfer: bool, sorts: bool
) -> None:
    assert native_sampler(version, vendor, flashinfer=flashinfer) is sorts


def test_real_flashinfer_sampler_installed_on_0_10_qwen2_7b_on_an_a100() -> None:
    # dennislee22/vLLM-benchmarking (b474d1e, log/vllm-7B-1gpuA10080GB-0.25GRAM.log): vLLM
    # 0.10.1.1 installed with flashinfer-python, Qwen2-7B-Instruct in bf16, gmu 0.25, 16,384
    # tokens: "Using FlashInfer for top-p & top-k sampling.", "Model loading took 14.2488
    # GiB", "Available KV cache memory: 5.01 GiB". 256 rows of 152,064 logits sorted would be
    # 1.4 GiB and leave 4.2 GiB (-16%).
    dep = deployment(
        engine_version="0.10.1.1",
        gpu="NVIDIA A100 80GB",
        memory_fraction=0.25,
        max_model_len=16384,
        env={"VLLM_USE_FLASHINFER_SAMPLER": "1"},
    )
    spec = lookup("Qwen/Qwen2-7B-Instruct")
    assert spec is not None
    e = estimate(dep, spec, lookup_gpu("NVIDIA A100 80GB"))
    assert e.available_kv_bytes is not None
    # 5%: the sampler constant is fitted (fitted.py), the rest is weights and the budget.
    assert abs(e.available_kv_bytes / GiB - 5.01) / 5.01 <= 0.05


def test_real_sorted_sampler_on_0_12_qwen3_30b_on_an_rtx_pro_6000() -> None:
    # 2215860382/VedioSifter (vLLM 0.12.0, Qwen3-30B-A3B-Instruct-2507 in bf16 on one RTX PRO
    # 6000 Blackwell Server Edition, eager, gmu 0.85, max_model_len 4096): "Model loading took
    # 56.9342 GiB", "Available KV cache memory: 18.15 GiB". 1,024 rows (96 GB: the >= 70 GiB
    # tier) of 151,936 logits sorted are ~5.7 GiB; FlashInfer's 2.2 would leave 21.4 GiB.
    gpu = lookup_gpu("RTX PRO 6000 Blackwell Server Edition")
    dep = deployment(
        engine_version="0.12.0",
        gpu="RTX PRO 6000 Blackwell Server Edition",
        memory_fraction=0.85,
        max_model_len=4096,
        enforce_eager=True,
    )
    spec = lookup("Qwen/Qwen3-30B-A3B-Instruct-2507")
    assert spec is not None and gpu is not None
    e = estimate(dep, spec, gpu)
    assert e.available_kv_bytes is not None
    # 10%: the sampler's and non-torch constants are fitted (fitted.py).
    assert abs(e.available_kv_bytes / GiB - 18.15) / 18.15 <= 0.10


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


@pytest.mark.parametrize("version", [(0, 7, 3), (0, 10, 2), (0, 11, 0), (0, 33, 0)])
def test_tensor_parallelism_without_peer_links_is_charged_as_one_gpu(
    version: tuple[int, ...],
) -> None:
    one = non_torch_bytes(1, 1, version)
    assert non_torch_bytes(2, 1, version, linked=False) == one
    assert non_torch_bytes(4, 1, version, linked=False) == one
    assert non_torch_bytes(2, 2, version, linked=False) == non_torch_bytes(1, 2, version)


@pytest.mark.parametrize(
    ("gpu", "env", "nnodes", "linked"),
    [
        ("A100 80GB", {}, None, True),
        ("A100 80GB", {"NCCL_P2P_DISABLE": "1"}, None, False),
        ("A100 80GB", {"NCCL_P2P_DISABLE": "0"}, None, True),
        ("A100 80GB", {}, 2, False),  # TP 2 over two nodes: one GPU on each
        ("L4", {}, None, False),  # no NVLink on the card
        ("RTX 4090", {}, None, False),
        ("RTX 3090", {}, None, True),  # pairs may be bridged
    ],
)
def test_peer_links_by_card_environment_and_nodes(
    gpu: str, env: dict[str, str], nnodes: int | None, linked: bool
) -> None:
    dep = deployment(
        engine_version="0.10.1.1", gpu=gpu, tensor_parallel_size=2, nnodes=nnodes, env=env
    )
    s = settle(dep, LLAMA_31_8B, lookup_gpu(gpu))
    assert isinstance(s, VllmSettled) and s.peer_links is linked


@pytest.mark.parametrize(
    ("gpu", "tp", "linked"),
    [
        ("RTX 3090", 2, True),  # one bridged pair
        ("RTX 3090", 4, False),  # two pairs at best: some pairs talk over PCIe
        ("RTX A6000", 8, False),
        ("A100 80GB PCIe", 4, False),
        ("H100 NVL", 2, True),
        ("H100", 8, True),  # SXM boards: NVSwitch joins all eight
        ("A100 80GB", 4, True),
        ("MI300X", 8, True),  # xGMI mesh
    ],
)
def test_a_group_larger_than_the_cards_bridge_has_no_peer_links(
    gpu: str, tp: int, linked: bool
) -> None:
    # vllm/distributed/device_communicators/custom_all_reduce.py: "Custom allreduce is disabled
    # because it's not supported on more than two PCIe-only GPUs" when NVML finds a pair of the
    # group without NVLink; leadawon/LAMBO's TP 4 logs (0.19.0, logs/vllm_serve_toc.log at
    # bab83fe) print it on four GPUs they do not name.
    card = lookup_gpu(gpu)
    assert card is not None
    dep = deployment(engine_version="0.19.0", gpu=gpu, tensor_parallel_size=tp)
    s = settle(dep, LLAMA_31_8B, card)
    assert isinstance(s, VllmSettled) and s.peer_links is linked


def test_real_tp2_without_p2p_on_0_10_qwen2_7b_on_two_a100s() -> None:
    # dennislee22/vLLM-benchmarking (b474d1e, log/vllm-7B-2gpuA10080GB-0.25GRAM-same-node.log):
    # vLLM 0.10.1.1, TP 2 on one node, "Custom allreduce is disabled because your platform
    # lacks GPU P2P capability", FlashInfer's sampler: "Model loading took 7.1217 GiB",
    # "Available KV cache memory: 12.02 GiB". The NVLink H100 sweep's 2.1 GiB of non-torch
    # memory would leave 9.9 GiB (-17%); NCCL over host memory leaves a single GPU's.
    dep = deployment(
        engine_version="0.10.1.1",
        gpu="NVIDIA A100 80GB",
        tensor_parallel_size=2,
        memory_fraction=0.25,
        max_model_len=16384,
        env={"VLLM_USE_FLASHINFER_SAMPLER": "1", "NCCL_P2P_DISABLE": "1"},
    )
    spec = lookup("Qwen/Qwen2-7B-Instruct")
    assert spec is not None
    e = estimate(dep, spec, lookup_gpu("NVIDIA A100 80GB"))
    assert e.available_kv_bytes is not None
    assert abs(e.available_kv_bytes / GiB - 12.02) / 12.02 <= 0.05


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


def _settled(**fields: object) -> VllmSettled:
    env = fields.pop("env", None)
    gpu = lookup_gpu(str(fields.get("gpu", "H100")))
    found = settle(deployment(env=env, **fields), LLAMA_31_8B, gpu)  # type: ignore[arg-type]
    assert isinstance(found, VllmSettled)
    return found


def test_real_v0_engine_on_rocm_profiles_the_whole_context() -> None:
    # cmontemuino/amd-mi300x-ml-benchmarks@40ecc2f, datasets/sample-results/logs/
    # Llama-3.1-8B_latency_bs1_in128_out128_float16_mem0.9_20250807_190056.log: the command runs
    # rocm/vllm:rocm6.4.1_vllm_0.9.1 with `--env VLLM_USE_V1=0 ... --max-model-len 131072
    # --gpu-memory-utilization 0.9`, the log says "Initializing a V0 LLM engine
    # (v0.9.2.dev364+gb432b7a28)" and "model weights take 15.30GiB; non_torch_memory takes
    # 0.66GiB; PyTorch activation peak memory takes 14.63GiB; the rest of the memory reserved
    # for KV Cache is 142.19GiB". V0 leaves chunked prefill off on ROCm, so the profile run's
    # batch is the whole 131,072-token context (2,048 tokens would be a 0.2 GiB peak).
    s = _settled(
        engine_version="0.9.2.dev364+gb432b7a28",
        gpu="MI300X",
        env={"VLLM_USE_V1": "0"},
        max_model_len=131072,
        memory_fraction=0.9,
        dtype="float16",
    )
    assert s.v0 and s.batched == 131072 and s.seqs == 256
    e = estimate(
        deployment(
            engine_version="0.9.2.dev364+gb432b7a28",
            gpu="MI300X",
            env={"VLLM_USE_V1": "0"},
            max_model_len=131072,
            memory_fraction=0.9,
            dtype="float16",
        ),
        LLAMA_31_8B,
        lookup_gpu("MI300X"),
    )
    assert e.activation_bytes is not None and e.available_kv_bytes is not None
    # The forward pass's constant is fitted (fitted.py); 25% on the peak, 10% on the pool.
    assert abs(e.activation_bytes / GiB - 14.63) / 14.63 <= 0.25
    assert abs(e.available_kv_bytes / GiB - 142.19) / 142.19 <= 0.10


def test_v0_chunked_prefill_by_context_platform_and_model() -> None:
    # Synthetic, per V0's _set_default_args_v0: chunked prefill above 32K on CUDA only.
    cuda_long = _settled(engine_version="0.7.3", gpu="H100", max_model_len=131072)
    rocm_long = _settled(engine_version="0.7.3", gpu="MI300X", max_model_len=131072)
    short = _settled(engine_version="0.7.3", gpu="MI300X", max_model_len=8192)
    assert cuda_long.v0 and cuda_long.batched == 2048
    assert rocm_long.batched == 131072 and short.batched == 8192


def test_vllm_use_v1_0_selects_v0_only_before_its_removal() -> None:
    off = {"VLLM_USE_V1": "0"}
    assert _settled(engine_version="0.9.2", env=off).v0
    assert memory_line((0, 9, 2), v0=True) == "v0" and native_sampler((0, 9, 2), "nvidia", True)
    assert not _settled(engine_version="0.9.2").v0
    assert not _settled(engine_version="0.11.0", env=off).v0  # V0 is gone in 0.11
    assert _settled(engine_version="0.7.3", env={"VLLM_USE_V1": "1"}).v0  # no V1 before 0.8


@pytest.mark.parametrize(
    ("version", "per_token_per_gpu"),
    [
        # before MLA support: 16 heads / TP 2 x (K 192 + V padded to 192) x 27 layers x 2 bytes
        ("0.5.1", 8 * 384 * 27 * 2),
        ("0.7.0", 8 * 384 * 27 * 2),
        # from 0.7.1: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per layer, whole on
        # every rank
        ("0.7.1", 576 * 27 * 2),
        ("0.33.0", 576 * 27 * 2),
    ],
)
def test_mla_is_cached_as_full_kv_before_0_7_1(version: str, per_token_per_gpu: int) -> None:
    spec = lookup("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct")
    assert spec is not None
    dep = deployment(engine_version=version, gpu="L40", tensor_parallel_size=2, max_model_len=4096)
    e = estimate(dep, spec, lookup_gpu("L40"))
    assert e.bytes_per_token == per_token_per_gpu


def test_real_deepseek_coder_v2_lite_naming_no_release_is_borderline_with_the_doubt() -> None:
    # vllm-project/vllm#6156, comment of 2024-07-08 (no version printed; vLLM 0.5.x): two L40s,
    # TP 2, fp16, the model's 163,840 tokens: "The model's max seq len (163840) is larger than
    # the maximum number of tokens that can be stored in KV cache (63040)". Cached as MLA the
    # request would fit; vLLM of that time cached 16 heads of K and V, which does not.
    spec = lookup("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct")
    assert spec is not None
    dep = deployment(gpu="NVIDIA L40", tensor_parallel_size=2, dtype="float16")
    e = sized(dep, spec).engine
    assert e is not None and e.verdict == BORDERLINE
    assert e.version_doubt is not None and "0.7.0 refuses" in e.version_doubt
    assert [r.version for r in e.readings][-1] == "0.7.0"
    old = deployment(engine_version="0.5.1", gpu="NVIDIA L40", tensor_parallel_size=2)
    assert estimate(old, spec, lookup_gpu("NVIDIA L40")).fits is False
    # a model without MLA is sized at no such line
    plain = sized(deployment(gpu="NVIDIA L40", tensor_parallel_size=2), LLAMA_31_8B).engine
    assert plain is not None and "0.7.0" not in [r.version for r in plain.readings]


@pytest.mark.parametrize(
    ("tp", "env", "refuses"),
    [
        # A bridged pair assumed (the 3090 takes a two-way bridge): NCCL's TP buffers of the
        # H100 init snapshots, 1.5 GiB, leave 22.19 GiB free of the 22.51 asked.
        (2, {}, True),
        # Four 3090s are two bridged pairs at best: vLLM's custom all-reduce is off and NCCL
        # runs at the PCIe pairs' pace, the context of one GPU (0.51 GiB), 23.18 GiB free.
        (4, {}, False),
        # NCCL_P2P_DISABLE=1: the same.
        (4, {"NCCL_P2P_DISABLE": "1"}, False),
    ],
)
def test_the_free_memory_check_of_a_tp_group_without_peer_links(
    tp: int, env: dict[str, str], refuses: bool
) -> None:
    # club-3090's archived 4 x RTX 3090 PCIe compose files (multi4/autoround-int4/dflash.yml at
    # 4a29ab5: TP 4, gpu_memory_utilization 0.95, NCCL_P2P_DISABLE=1) started on 0.20.1rc1.
    dep = deployment(
        engine_version="0.20.1",
        gpu="RTX 3090",
        tensor_parallel_size=tp,
        memory_fraction=0.95,
        max_model_len=8192,
        env=env,
    )
    e = estimate(dep, LLAMA_31_8B, lookup_gpu("RTX 3090"))
    assert (e.refusal is Refusal.FREE_MEMORY) is refuses
    # Inside the unlinked band's top too (0.80 GiB): not borderline either.
    assert e.verdict != BORDERLINE


def test_a_card_without_nvlink_has_no_nvlink_init_memory() -> None:
    # Two RTX 4090s (no NVLink connector) at 0.96 of 23.99 GiB: 23.03 GiB asked, 23.48 free
    # after one GPU's context, 22.49 after the NVLink TP figure.
    dep = deployment(
        engine_version="0.19.0",
        gpu="RTX 4090",
        tensor_parallel_size=2,
        memory_fraction=0.96,
        max_model_len=8192,
    )
    e = estimate(dep, LLAMA_31_8B, lookup_gpu("RTX 4090"))
    assert e.refusal is not Refusal.FREE_MEMORY
    assert e.band_refusal is not Refusal.FREE_MEMORY


def _vl(model: str) -> ModelSpec:
    spec = lookup(model)
    assert spec is not None and spec.vision_encoder is not None
    return spec


def test_real_encoder_profile_peak_qwen2_vl_2b_on_0_10() -> None:
    # mrpid12org/imageworks@229b947 vllm_server.log: vLLM 0.10.2 (V1), Qwen2-VL-2B-Instruct in
    # bf16 on a 16 GB card, 2,048 batched tokens: "Actual usage is 4.15 GiB for weight, 2.65 GiB
    # for peak activation". The sampler's 256 x 151,936 sorted logits are 1.4 GiB: the peak is
    # the tower's, one image of 65,536 patches through its rotary attention.
    spec = _vl("Qwen/Qwen2-VL-2B-Instruct")
    profile = encoder_profile(spec.vision_encoder, max_num_batched_tokens=2048, max_num_seqs=256)
    assert profile is not None and profile.items == 1
    peak = activation_bytes(
        spec, max_num_batched_tokens=2048, max_num_seqs=256, native=True, encoder=profile
    )
    text_only = activation_bytes(spec, max_num_batched_tokens=2048, max_num_seqs=256, native=True)
    assert text_only / GiB < 1.5
    # 5%: the log rounds to 0.01 GiB; the attention's bytes are counted from the source.
    assert abs(peak / GiB - 2.65) / 2.65 <= 0.05


def test_real_v0_encoder_inside_the_forward_qwen2_5_vl_7b_on_a_t4() -> None:
    # unslothai/notebooks@bdda2ef original_template/Qwen2_5_7B_VL_GRPO.ipynb: vLLM 0.9.2's V0
    # engine, Qwen2.5-VL-7B (bitsandbytes), max_num_seqs 1, 16,384 batched tokens: "PyTorch
    # activation peak memory takes 2.71GiB". One dummy sequence carries one 16,384-token image;
    # its embeddings (twice: the tower's output and the merged input) sit beside the decoder's
    # 16,384-token forward pass, 2.42 GiB alone.
    spec = _vl("Qwen/Qwen2.5-VL-7B-Instruct")
    profile = encoder_profile(
        spec.vision_encoder, max_num_batched_tokens=16384, max_num_seqs=1, v0=True
    )
    assert profile is not None and profile.items == 1
    peak = activation_bytes(
        spec, max_num_batched_tokens=16384, max_num_seqs=1, native=True, encoder=profile, v0=True
    )
    # 5%: the forward pass's constant is fitted (fitted.py).
    assert abs(peak / GiB - 2.71) / 2.71 <= 0.05


def test_real_gemma3_profiles_63_images_at_a_16384_token_budget_on_0_11() -> None:
    # GoogleCloudPlatform/kubernetes-engine-samples@2b50365 (nemo-rl-on-gke gemma3-27b-it
    # eval-logs.log), vLLM 0.11.2: "Encoder cache will be initialized with a budget of 16384
    # tokens, and profiled with 63 image items of the maximum feature size."
    spec = _vl("google/gemma-3-27b-it")
    profile = encoder_profile(spec.vision_encoder, max_num_batched_tokens=16384, max_num_seqs=1024)
    assert profile is not None and profile.items == 63


@pytest.mark.parametrize(
    ("model", "logged"),
    [
        ("google/gemma-3-4b-it", 3.89),
        ("google/gemma-3-12b-it", 3.94),
        ("google/gemma-3-27b-it", 3.99),
    ],
)
def test_real_gemma3_encoder_cache_beside_the_sampler_on_0_19(model: str, logged: float) -> None:
    # llm-d-incubation/llm-d-planner@d3121e0, vLLM 0.19.0 on an H100, 8,192 batched tokens and
    # 1,024 rows: "torch peak memory increase" 3.89 / 3.94 / 3.99 GiB for Gemma 3 4B / 12B /
    # 27B. The three share one SigLIP tower, whose peak over 31 images stays under the
    # sampler's 1,024 x 262,208 logits; the peak grows with the language model's width by the
    # 31 x 260 embeddings the encoder cache holds while the sampler runs.
    spec = _vl(model)
    profile = encoder_profile(spec.vision_encoder, max_num_batched_tokens=8192, max_num_seqs=1024)
    assert profile is not None and profile.items == 31
    peak = activation_bytes(spec, max_num_batched_tokens=8192, max_num_seqs=1024, encoder=profile)
    sampler = activation_bytes(spec, max_num_batched_tokens=8192, max_num_seqs=1024)
    assert encoder_bytes(profile, tp=1, constants=CONSTANTS) < sampler
    assert peak == sampler + encoder_output_bytes(profile)
    # 2%: the sampler's constant is fitted on the same sweep (fitted.py).
    assert abs(peak / GiB - logged) / logged <= 0.02


@pytest.mark.parametrize(
    ("batched", "seqs", "v0", "limit", "items"),
    [
        (2048, 256, False, None, 1),  # the budget is at least one image
        (40000, 256, False, None, 2),  # 40,000 // 16,384
        (40000, 1, False, None, 1),  # max_num_seqs x the prompt's limit caps it
        (40000, 1, False, 3, 2),
        (40000, 256, True, None, 2),  # V0: 40,000 // 16,384 dummy sequences of one image
        (40000, 256, True, 2, 2),  # V0: one sequence (40,000 // 32,768) of two images
        (2048, 256, True, None, 1),  # V0: at least one sequence
    ],
)
def test_encoder_profile_items_by_engine_budget_and_limit(
    batched: int, seqs: int, v0: bool, limit: int | None, items: int
) -> None:
    encoder = _vl("Qwen/Qwen2.5-VL-7B-Instruct").vision_encoder
    profile = encoder_profile(
        encoder, max_num_batched_tokens=batched, max_num_seqs=seqs, v0=v0, limit=limit
    )
    assert profile is not None and profile.items == items


def test_no_encoder_profile_without_images_or_with_skip_mm_profiling() -> None:
    encoder = _vl("Qwen/Qwen2.5-VL-7B-Instruct").vision_encoder
    for kwargs in ({"limit": 0}, {"skip": True}):
        none = encoder_profile(encoder, max_num_batched_tokens=8192, max_num_seqs=256, **kwargs)
        assert none is None  # type: ignore[arg-type]
    assert encoder_profile(None, max_num_batched_tokens=8192, max_num_seqs=256) is None


def test_the_rotary_tower_peaks_in_its_attention_and_splits_with_tp() -> None:
    spec = _vl("Qwen/Qwen2-VL-2B-Instruct")
    profile = encoder_profile(spec.vision_encoder, max_num_batched_tokens=8192, max_num_seqs=256)
    assert profile is not None
    one = encoder_bytes(profile, tp=1, constants=CONSTANTS)
    assert one == 65536 * 1280 * ROTARY_ATTENTION_BYTES_PER_WIDTH
    assert encoder_bytes(profile, tp=2, constants=CONSTANTS) == one / 2


@pytest.mark.parametrize(
    ("settings", "field", "value"),
    [
        ({"limit-mm-per-prompt": '{"image": 0, "video": 0}'}, "mm_image_limit", 0),
        ({"limit-mm-per-prompt": "image=2,video=1"}, "mm_image_limit", 2),
        ({"limit-mm-per-prompt": '{"image": {"count": 3, "width": 512}}'}, "mm_image_limit", 3),
        ({"limit-mm-per-prompt": "not json"}, "mm_image_limit", None),
        ({"mm-processor-kwargs": '{"max_pixels": 1003520}'}, "mm_max_pixels", 1003520),
        ({"mm-processor-kwargs": '{"max_pixels": "many"}'}, "mm_max_pixels", None),
        ({"skip-mm-profiling": True}, "skip_mm_profiling", True),
        ({}, "skip_mm_profiling", False),
    ],
)
def test_encoder_profile_settings_are_read(
    settings: dict[str, object], field: str, value: object
) -> None:
    gpu = lookup_gpu("H100")
    found = settle(
        deployment(engine_version="0.11.2", settings=settings),
        _vl("Qwen/Qwen2.5-VL-7B-Instruct"),
        gpu,
    )
    assert isinstance(found, VllmSettled) and getattr(found, field) == value


def test_a_smaller_max_pixels_or_no_images_leaves_more_cache_memory() -> None:
    spec = _vl("Qwen/Qwen2-VL-2B-Instruct")
    gpu = lookup_gpu("L4")

    def available(settings: dict[str, object]) -> int:
        e = estimate(
            deployment(engine_version="0.10.2", gpu="L4", max_model_len=4096, settings=settings),
            spec,
            gpu,
        )
        assert e.available_kv_bytes is not None
        return e.available_kv_bytes

    full = available({})
    smaller = available({"mm-processor-kwargs": '{"max_pixels": 1003520}'})
    text_only = available({"limit-mm-per-prompt": '{"image": 0, "video": 0}'})
    assert full < smaller <= text_only
    assert smaller - full > 0.8 * GiB  # 65,536 patches -> 5,120 through the tower


def test_real_lora_slots_load_with_the_weights_llama_32_3b_on_a_t4() -> None:
    # unslothai/notebooks@bdda2ef original_template/Advanced_Llama3_2_(3B)_GRPO_LoRA.ipynb:
    # Unsloth's fast_inference starts vLLM 0.8.5.post1 with enable_lora, max_lora_rank 64 (the
    # notebook's lora_rank) and max_loras 1; fp16 on a T4, gmu 0.59, 160 sequences, 2,048
    # batched tokens: "Model loading took 6.2473 GiB" where the fp16 checkpoint is 5.98 GiB,
    # "the rest of the memory reserved for KV Cache is 1.74GiB" (1.93 without the slots).
    dep = deployment(
        engine_version="0.8.5.post1",
        gpu="Tesla T4",
        env={"VLLM_USE_V1": "0"},
        memory_fraction=0.59,
        max_model_len=2048,
        max_num_seqs=160,
        max_num_batched_tokens=2048,
        dtype="float16",
        settings={"enable-lora": True, "max-lora-rank": 64},
    )
    spec = lookup("meta-llama/Llama-3.2-3B-Instruct")
    assert spec is not None
    e = estimate(dep, spec, lookup_gpu("Tesla T4"))
    assert e.weights_bytes is not None and e.available_kv_bytes is not None
    # 2% on the weights (the checkpoint's tensors are counted from the config), 5% on the pool.
    assert abs(e.weights_bytes / GiB - 6.2473) / 6.2473 <= 0.02
    assert abs(e.available_kv_bytes / GiB - 1.74) / 1.74 <= 0.05


def test_lora_slots_by_rank_slots_and_tensor_parallelism() -> None:
    one = lora_bytes(LLAMA_31_8B, rank=16)
    # Llama-3.1-8B: per layer A of 3 + 2 inputs of 4,096 (qkv, gate_up), 4,096 + 14,336
    # (o, down); B of 4,096 + 2 x 1,024 + 2 x 14,336 outputs and 2 x 4,096; then the embedding
    # and the head, 2 x (128,256 + 4,096), all x rank 16 x 2 bytes.
    per_layer = 5 * 4096 + 4096 + 14336 + 4096 + 2048 + 2 * 14336 + 2 * 4096
    assert one == (32 * per_layer + 2 * (128256 + 4096)) * 16 * 2
    assert lora_bytes(LLAMA_31_8B, rank=64) == 4 * one
    assert lora_bytes(LLAMA_31_8B, rank=16, max_loras=4) == 4 * one
    # TP splits B of the column layers, A of the row layers and the head's vocabulary
    assert one / 2 < lora_bytes(LLAMA_31_8B, rank=16, tp=2) < one
    stages = [
        lora_bytes(LLAMA_31_8B, rank=16, layers=16, first_stage=f, last_stage=not f)
        for f in (True, False)
    ]
    assert sum(stages) == one


def test_lora_is_read_only_where_it_is_enabled() -> None:
    spec = LLAMA_31_8B
    gpu = lookup_gpu("H100")

    def settled(settings: dict[str, object]) -> VllmSettled:
        found = settle(deployment(engine_version="0.19.0", settings=settings), spec, gpu)
        assert isinstance(found, VllmSettled)
        return found

    assert settled({}).lora_rank is None
    assert settled({"max-lora-rank": 64}).lora_rank is None  # no --enable-lora
    on = settled({"enable-lora": True})
    assert (on.lora_rank, on.max_loras) == (16, 1)  # vLLM's defaults
    many = settled({"enable-lora": True, "max-lora-rank": "32", "max-loras": 4})
    assert (many.lora_rank, many.max_loras) == (32, 4)
    plain = estimate(deployment(engine_version="0.19.0"), spec, gpu)
    lora = estimate(deployment(engine_version="0.19.0", settings={"enable-lora": True}), spec, gpu)
    assert plain.weights_bytes is not None and lora.weights_bytes is not None
    assert lora.weights_bytes - plain.weights_bytes == lora_bytes(spec, rank=16)


def test_language_model_only_loads_no_tower_and_profiles_no_image() -> None:
    spec = _vl("Qwen/Qwen2.5-VL-7B-Instruct")
    gpu = lookup_gpu("H100")

    def sized_at(settings: dict[str, object]) -> tuple[int, int]:
        e = estimate(deployment(engine_version="0.19.0", settings=settings), spec, gpu)
        assert e.weights_bytes is not None and e.activation_bytes is not None
        return e.weights_bytes, e.activation_bytes

    full = sized_at({})
    text = sized_at({"language-model-only": True})
    assert spec.vision_param_count is not None
    assert full[0] - text[0] == round(spec.vision_param_count * 2)  # bf16 tower, TP 1
    assert text[1] < full[1]  # 1,024 rows sampled without the encoder cache beside them
    skipped = sized_at({"skip-mm-profiling": True})
    assert skipped == (full[0], text[1])  # the tower is loaded, not profiled


def test_qwen35_profiles_one_16384_token_image_at_8192_batched_tokens() -> None:
    # The budget is one image's tokens where those pass the batch: 16,384 (Qwen's processor
    # bound) at 8,192 batched tokens is one image of 65,536 patches, split by TP 2.
    spec = _vl("Qwen/Qwen3.5-122B-A10B")
    profile = encoder_profile(spec.vision_encoder, max_num_batched_tokens=8192, max_num_seqs=256)
    assert profile is not None and profile.items == 1 and profile.encoder.tokens == 16384
    tower = encoder_bytes(profile, tp=2, constants=CONSTANTS)
    assert tower == 65536 * 1152 * ROTARY_ATTENTION_BYTES_PER_WIDTH / 2
