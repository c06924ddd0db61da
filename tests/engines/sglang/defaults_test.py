"""SGLang's start-up memory defaults, release line by release line.

Two real start-up logs pin the 0.4 line (their server_args print the defaults the engine chose);
the later lines are pinned by the arithmetic of each release's ``server_args.py`` /
``memory_hook.py`` as ``kvlint/engines/sglang/defaults.py`` cites it.
"""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.engines import settle
from kvlint.engines.sglang import defaults as D
from kvlint.gpus import lookup_gpu
from testing.builders import dense
from testing.builders import deployment

LLAMA_31_8B = dense()


def _gpu_mb(name: str) -> tuple[int, float]:
    gpu = lookup_gpu(name)
    assert gpu is not None
    return gpu.total_bytes, gpu.total_bytes / 2**20


def test_the_04_line_matches_what_two_logs_printed() -> None:
    # didier-durand/llms-in-clouds @2aa130c docs/sglang.md: SGLang 0.4.3.post4 on 4x L4 at TP 4
    # printed mem_fraction_static=0.85, chunked_prefill_size=2048, cuda_graph_max_bs=80.
    l4, _ = _gpu_mb("L4")
    assert D.sglang_mem_fraction_static(l4, 4, 1, release=(0, 4, 3)) == 0.85
    assert D.sglang_batch_defaults(l4, 4, (0, 4, 3)) == (2048, 80)
    # jerryzsj/my-deepseek-r1 @bd9f5c7 README.md: lmsysorg/sglang:latest of 2025-02-04 (a 0.4.2
    # or 0.4.3 image; every release of the line reads the same table) on an RTX 3090 at TP 1
    # printed mem_fraction_static=0.88, chunked_prefill_size=2048, cuda_graph_max_bs=8.
    rtx3090, _ = _gpu_mb("RTX 3090")
    for release in ((0, 4, 2), (0, 4, 3), (0, 4, 5)):
        assert D.sglang_mem_fraction_static(rtx3090, 1, 1, release=release) == 0.88
        assert D.sglang_batch_defaults(rtx3090, 1, release) == (2048, 8)


@pytest.mark.parametrize(
    ("tp", "fraction"), [(1, 0.88), (2, 0.87), (4, 0.85), (8, 0.81), (16, 0.79)]
)
def test_up_to_045_the_fraction_follows_tp_alone(tp: int, fraction: float) -> None:
    h200, _ = _gpu_mb("H200")
    assert D.sglang_mem_fraction_static(h200, tp, 1, release=(0, 4, 5)) == fraction
    assert D.sglang_mem_fraction_static(None, tp, 1, release=(0, 4, 5)) == fraction


def test_046_and_047_size_large_cards_by_their_memory() -> None:
    h100, _ = _gpu_mb("H100")
    h200, h200_mb = _gpu_mb("H200")
    b200, _ = _gpu_mb("B200")
    # 0.4.6: up to 81,920 MiB the TP table, above it 13 GiB left.
    assert D.sglang_mem_fraction_static(h100, 2, 1, release=(0, 4, 6)) == 0.87
    assert D.sglang_mem_fraction_static(h200, 1, 1, release=(0, 4, 6)) == pytest.approx(
        (h200_mb - 13 * 1024) / h200_mb
    )
    # 0.4.7: 0.79 above 180,000 MB; above 96 GiB min(0.88 + 48 GiB x 0.12 / gpu, 1 - 18 GiB / gpu).
    assert D.sglang_mem_fraction_static(b200, 8, 1, release=(0, 4, 7)) == 0.79
    assert D.sglang_mem_fraction_static(h200, 1, 1, release=(0, 4, 7)) == pytest.approx(
        min(0.88 + 48 * 1024 * 0.12 / h200_mb, 1 - 18 * 1024 / h200_mb)
    )
    assert D.sglang_batch_defaults(b200, 8, (0, 4, 7)) == (16384, 160)


def test_048_to_052_reserve_a_fixed_amount_per_gpu_tier() -> None:
    l4, l4_mb = _gpu_mb("L4")
    h100, h100_mb = _gpu_mb("H100")
    b200, b200_mb = _gpu_mb("B200")
    for release in ((0, 4, 8), (0, 4, 9), (0, 5, 2)):
        assert D.sglang_mem_fraction_static(l4, 1, 1, release=release) == round(
            (l4_mb - 2.9 * 1024) / l4_mb, 3
        )
        assert D.sglang_mem_fraction_static(h100, 8, 1, release=release) == round(
            (h100_mb - 13.5 * 1024) / h100_mb, 3
        )
        # DP attention adds 4 GiB.
        assert D.sglang_mem_fraction_static(b200, 8, 1, 8, release=release) == round(
            (b200_mb - 36 * 1024) / b200_mb, 3
        )
        assert D.sglang_batch_defaults(l4, 1, release) == (2048, 8)
        assert D.sglang_batch_defaults(h100, 1, release) == (8192, 160)


def test_from_053_the_reserve_follows_chunked_prefill_and_graph_range() -> None:
    l4, l4_mb = _gpu_mb("L4")
    # L4 below 35 GiB: graphs to bs 16 (0.5.3, 0.5.4), 24 (0.5.5 to 0.5.18), chunked prefill
    # 4,096 and graphs to 48 from 0.5.20.
    for release, chunked, bs in (
        ((0, 5, 3), 2048, 16),
        ((0, 5, 4), 2048, 16),
        ((0, 5, 5), 2048, 24),
        ((0, 5, 18), 2048, 24),
        ((0, 5, 20), 4096, 48),
        ((0, 5, 23), 4096, 48),
    ):
        assert D.sglang_batch_defaults(l4, 1, release) == (chunked, bs)
        reserved = 512 + chunked * 1.5 + bs * 2 + 1 / 8 * 1024
        assert D.sglang_mem_fraction_static(l4, 1, 1, release=release) == round(
            (l4_mb - reserved) / l4_mb, 3
        )
    # No release named: the newest kvlint read.
    assert D.sglang_mem_fraction_static(l4, 1, 1) == D.sglang_mem_fraction_static(
        l4, 1, 1, release=(0, 5, 23)
    )
    # A file's own chunked prefill size is what the reserve counts; -1 (no chunking) counts
    # max_prefill_tokens (16,384).
    assert D.sglang_mem_fraction_static(l4, 1, 1, release=(0, 5, 8), chunked_prefill=8192) == (
        round((l4_mb - (512 + 8192 * 1.5 + 48 + 128)) / l4_mb, 3)
    )
    assert D.sglang_mem_fraction_static(l4, 1, 1, release=(0, 5, 8), chunked_prefill=-1) == (
        round((l4_mb - (512 + 16384 * 1.5 + 48 + 128)) / l4_mb, 3)
    )


def test_the_decode_graph_reserve_goes_with_decode_graphs_from_0518() -> None:
    l4, l4_mb = _gpu_mb("L4")
    on = D.sglang_mem_fraction_static(l4, 1, 1, release=(0, 5, 23))
    off = D.sglang_mem_fraction_static(l4, 1, 1, release=(0, 5, 23), decode_graphs=False)
    assert off - on == pytest.approx(round(48 * 2 / l4_mb, 3), abs=0.0015)
    assert D.sglang_mem_fraction_static(
        l4, 1, 1, release=(0, 5, 13), decode_graphs=False
    ) == D.sglang_mem_fraction_static(l4, 1, 1, release=(0, 5, 13))


def test_a_gpu_of_unknown_size() -> None:
    assert D.sglang_mem_fraction_static(None, 1, 1, release=(0, 5, 8)) == 0.88
    assert D.sglang_mem_fraction_static(None, 1, 1, release=(0, 5, 18)) == 0.88
    assert D.sglang_mem_fraction_static(None, 1, 1, release=(0, 5, 20)) == 0.95
    assert D.sglang_mem_fraction_static(None, 1, 1) == 0.95


def test_prefill_graphs_reserve_8_mb_a_captured_size_from_0510() -> None:
    # Sizes up to 2,048: 8 (4-32) + 14 (48-256) + 8 (288-512) + 8 (576-1024) + 4 (1280-2048).
    assert D.prefill_graph_sizes(2048) == 42
    assert D.prefill_graph_sizes(8192) == 42 + 8 + 8
    assert (
        D.prefill_graph_reserve_mb(
            (0, 5, 9), mla=False, chunked_prefill=2048, max_total_tokens=None
        )
        == 0
    )
    assert (
        D.prefill_graph_reserve_mb(
            (0, 5, 10), mla=False, chunked_prefill=8192, max_total_tokens=None
        )
        == 58 * 8
    )
    # --max-total-tokens caps the range; an MLA backend reserves 1.5 GiB.
    assert (
        D.prefill_graph_reserve_mb(
            (0, 5, 13), mla=False, chunked_prefill=8192, max_total_tokens=1024
        )
        == 38 * 8
    )
    assert (
        D.prefill_graph_reserve_mb(
            (0, 5, 13), mla=True, chunked_prefill=8192, max_total_tokens=None
        )
        == 1536
    )
    # From 0.5.20 the prefill range is its documented default, 2,048 tokens.
    assert (
        D.prefill_graph_reserve_mb(
            (0, 5, 23), mla=False, chunked_prefill=8192, max_total_tokens=None
        )
        == 42 * 8
    )


def _fraction(gpu: str, **fields: Any) -> float:
    settled = settle(deployment("sglang", **fields), LLAMA_31_8B, lookup_gpu(gpu))
    assert settled is not None and settled.memory_fraction is not None
    assert settled.memory_fraction.default
    return float(settled.memory_fraction.value)


def test_the_settled_default_follows_the_release_the_file_names() -> None:
    assert _fraction(gpu="L4", tensor_parallel_size=4, engine_version="0.4.3.post4") == 0.85
    assert _fraction(gpu="L4", engine_version="0.5.2") == D.sglang_mem_fraction_static(
        lookup_gpu("L4").total_bytes,
        1,
        1,
        release=(0, 5, 2),  # type: ignore[union-attr]
    )


def test_the_settled_default_counts_the_files_chunked_prefill_and_prefill_graphs() -> None:
    _, l4_mb = _gpu_mb("L4")
    graphs = 42 * 8  # prefill graphs to 2,048 tokens at 0.5.23
    assert _fraction(gpu="L4", engine_version="0.5.23") == round(
        (l4_mb - (512 + 4096 * 1.5 + 48 * 2 + 128 + graphs)) / l4_mb, 3
    )
    assert _fraction(gpu="L4", engine_version="0.5.23", max_num_batched_tokens=8192) == round(
        (l4_mb - (512 + 8192 * 1.5 + 48 * 2 + 128 + graphs)) / l4_mb, 3
    )
    # 0.5.23 caps a default decode graph range at --max-running-requests.
    assert _fraction(gpu="L4", engine_version="0.5.23", max_num_seqs=4) == round(
        (l4_mb - (512 + 4096 * 1.5 + 4 * 2 + 128 + graphs)) / l4_mb, 3
    )
    # --disable-cuda-graph: no decode or prefill graph reserve from 0.5.18.
    assert _fraction(gpu="L4", engine_version="0.5.23", enforce_eager=True) == round(
        (l4_mb - (512 + 4096 * 1.5 + 128)) / l4_mb, 3
    )
    # Before 0.5.10 no prefill graphs are reserved for.
    assert _fraction(gpu="L4", engine_version="0.5.8") == round(
        (l4_mb - (512 + 2048 * 1.5 + 24 * 2 + 128)) / l4_mb, 3
    )
