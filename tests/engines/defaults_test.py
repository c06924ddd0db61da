"""Engine defaults by version and GPU."""

from __future__ import annotations

from kvlint.engines.vllm.defaults import vllm_chunked_local_hybrid
from kvlint.engines.vllm.defaults import vllm_defaults
from kvlint.engines.vllm.defaults import vllm_version
from kvlint.gpus import GpuSpec
from kvlint.gpus import lookup_gpu
from kvlint.versions import parse_version


def test_parse_version() -> None:
    assert parse_version("vllm/vllm-openai:v0.11.0") == (0, 11, 0)
    assert parse_version("0.10.1.1") == (0, 10, 1)  # a fourth part never changes accounting
    assert parse_version("0.19.0rc1") == (0, 19, 0)
    assert parse_version("latest") is None
    assert parse_version(None) is None


def test_gpu_memory_utilization_changed_in_0_21() -> None:
    # vllm-project/vllm#38284: CUDA-graph profiling on by default, gpu_memory_utilization 0.92.
    assert vllm_defaults((0, 20, 2), None).gpu_memory_utilization == 0.9
    assert vllm_defaults((0, 21, 0), None).gpu_memory_utilization == 0.92
    assert vllm_defaults((0, 11, 0), None).cudagraph_profiling is False
    assert vllm_defaults((0, 21, 0), None).cudagraph_profiling is True


def test_unnamed_version_is_the_newest() -> None:
    version, defaulted = vllm_version(None)
    assert defaulted and version == (0, 33, 0)
    assert vllm_version("v0.11.0") == ((0, 11, 0), False)


def test_batch_defaults_by_gpu_memory() -> None:
    h100, a100, l4, b200 = (lookup_gpu(n) for n in ("H100", "A100-80GB", "L4", "B200"))
    # The 0.19 logs: "Defaulting max_num_seqs to 1024", max_num_batched_tokens=8192 on H100.
    assert (
        vllm_defaults((0, 19), h100).max_num_seqs,
        vllm_defaults((0, 19), h100).max_num_batched_tokens,
    ) == (1024, 8192)
    # A100 is excluded from the >= 70 GiB tier.
    assert vllm_defaults((0, 11), a100).max_num_batched_tokens == 2048
    assert vllm_defaults((0, 11), l4).max_num_seqs == 256
    # >= 160 GiB: current line only.
    assert vllm_defaults((0, 33), b200).max_num_batched_tokens == 16384
    assert vllm_defaults((0, 11), b200).max_num_batched_tokens == 8192


def test_batch_defaults_of_the_early_v1_releases() -> None:
    """0.8.0-0.8.3 raised max_num_seqs to 1024 everywhere, 0.8.4 reverted it off Hopper, 0.8.5
    went by memory and 0.9 dropped A100 (the pull requests in defaults.py)."""
    h100, a100, l4, rtx3090 = (lookup_gpu(n) for n in ("H100", "A100-80GB", "L4", "RTX 3090"))
    gh200 = lookup_gpu("GH200")

    def pair(version: tuple[int, ...], gpu: GpuSpec | None) -> tuple[int, int]:
        settled = vllm_defaults(version, gpu)
        return settled.max_num_seqs, settled.max_num_batched_tokens

    # The reports of vLLM #17238 (0.8.1, two RTX 3090s): 1,024 sampler rows at 2,048 tokens.
    assert pair((0, 8, 1), rtx3090) == (1024, 2048)
    # The CUDA name decides the token budget: GH200 holds "h200" as it does in vLLM.
    assert pair((0, 8, 1), h100) == pair((0, 8, 3), gh200) == (1024, 8192)
    assert pair((0, 8, 4), l4) == pair((0, 8, 4), a100) == (256, 2048)
    assert pair((0, 8, 4), h100) == (1024, 8192)
    assert pair((0, 8, 5), a100) == (1024, 8192)
    assert pair((0, 9), a100) == (256, 2048)
    assert pair((0, 8, 5), l4) == (256, 2048)
    # V0, before 0.8 and when selected: the API server's 256 / 2048 on any GPU.
    assert pair((0, 7, 3), h100) == (256, 2048)
    assert vllm_defaults((0, 8, 1), rtx3090, v0=True).max_num_seqs == 256


def test_mla_block_size_by_backend() -> None:
    from kvlint.engines.vllm.defaults import vllm_block_size

    assert vllm_block_size(False, (0, 33), lookup_gpu("B200")) == 16
    assert vllm_block_size(True, (0, 33), lookup_gpu("H100")) == 64  # FlashMLA
    assert vllm_block_size(True, (0, 33), lookup_gpu("B200")) == 128  # CUTLASS MLA


def test_chunked_local_layers_and_the_hybrid_manager_by_release() -> None:
    # Read in the wheels: 0.9.2 has no ChunkedLocalAttentionSpec; 0.10.0 windows the layers;
    # 0.10.1-0.13.0 need VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1; 0.14.0 and
    # later default it to 1.
    assert vllm_chunked_local_hybrid((0, 9, 2), "1") is False
    assert vllm_chunked_local_hybrid((0, 10, 0), None) is True
    assert vllm_chunked_local_hybrid((0, 10, 1), None) is False
    assert vllm_chunked_local_hybrid((0, 13, 0), None) is False
    assert vllm_chunked_local_hybrid((0, 13, 0), "1") is True
    assert vllm_chunked_local_hybrid((0, 14, 0), None) is True
    assert vllm_chunked_local_hybrid((0, 33, 0), "0") is False
