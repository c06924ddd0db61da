"""Which TP x PP layouts each engine accepts, on real configs from the catalog."""

from __future__ import annotations

import pytest

from kvlint.arith.parallel import Layout
from kvlint.arith.parallel import kv_heads_per_gpu
from kvlint.arith.parallel import pp_problem
from kvlint.arith.parallel import stage_layers
from kvlint.arith.parallel import tp_problem
from kvlint.arith.parallel import valid_tps
from kvlint.engines import facts
from kvlint.solve.layout import pipeline_tp
from kvlint.solve.layout import replica_layouts
from testing.builders import catalog_model

VLLM, TGI, LLAMACPP = (facts(engine).parallel for engine in ("vllm", "tgi", "llamacpp"))


@pytest.mark.parametrize(
    ("layers", "pp", "expected"),
    [
        (80, 1, (80,)),
        (80, 3, (27, 27, 26)),  # 80 // 3 = 26, the 2 left over to stages -2 and -3
        (61, 4, (15, 15, 16, 15)),  # DeepSeek V3: one extra, to stage -2
        (32, 5, (6, 6, 7, 7, 6)),
        (7, 7, (1, 1, 1, 1, 1, 1, 1)),
    ],
)
def test_stage_layers_as_vllm_splits_them(layers: int, pp: int, expected: tuple[int, ...]) -> None:
    # vllm/distributed/utils.py get_pp_indices: n // pp each, partitions[-i] += 1 for
    # i in 2 .. remainder + 1, so the last stage never gets an extra layer.
    assert stage_layers(layers, pp) == expected
    assert sum(expected) == layers


def test_llama70b_tp_sizes() -> None:
    spec = catalog_model("meta-llama/Meta-Llama-3.1-70B")  # 64 heads, 8 KV heads
    assert valid_tps(spec, VLLM, 64) == [1, 2, 4, 8, 16, 32, 64]
    assert valid_tps(spec, TGI, 64) == [1, 2, 4, 8]  # no KV-head replication in TGI
    assert valid_tps(spec, LLAMACPP, 64) == [1]
    assert tp_problem(spec, VLLM, 3) == "64 attention heads do not divide by TP 3"
    assert tp_problem(spec, TGI, 16) == (
        "TGI shards 8 KV heads without replicating them: TP 16 does not divide"
    )
    assert [kv_heads_per_gpu(spec, tp) for tp in (1, 2, 4, 8, 16, 64)] == [8, 4, 2, 1, 1, 1]
    assert pipeline_tp(spec, VLLM, 8) == pipeline_tp(spec, VLLM, 64) == 8


def test_qwen25_7b_needs_more_than_heads_dividing() -> None:
    spec = catalog_model("Qwen/Qwen2.5-7B")  # 28 heads, 4 KV heads, intermediate 18,944
    assert valid_tps(spec, VLLM, 64) == [1, 2, 4]
    assert tp_problem(spec, VLLM, 7) == "intermediate size 18944 does not divide by TP 7"
    assert tp_problem(spec, VLLM, 8) == "28 attention heads do not divide by TP 8"
    assert pipeline_tp(spec, VLLM, 8) == 4


def test_hybrid_local_and_global_kv_heads_both_bind() -> None:
    spec = catalog_model("google/gemma-4-31B-it")  # 16 KV heads on sliding layers, 4 on global ones
    assert sorted({layer.kv_heads for layer in spec.layers}) == [4, 16]
    assert valid_tps(spec, VLLM, 64) == [1, 2, 4, 8, 16, 32]
    assert valid_tps(spec, TGI, 64) == [1, 2, 4]


def test_mla_replicates_its_latent_on_every_gpu() -> None:
    spec = catalog_model("deepseek-ai/DeepSeek-V3")
    assert all(kv_heads_per_gpu(spec, tp) == 1 for tp in (1, 8, 64))
    assert pipeline_tp(spec, VLLM, 8) == 8  # every TP replicates: the largest is taken


def test_pipeline_limits() -> None:
    spec = catalog_model("meta-llama/Meta-Llama-3.1-8B")
    assert pp_problem(spec, VLLM, 32) is None
    assert pp_problem(spec, VLLM, 33) == "33 stages for 32 layers"
    assert pp_problem(spec, TGI, 2) == "TGI has no pipeline parallelism"


def test_replica_layouts_default_and_any() -> None:
    spec = catalog_model("meta-llama/Meta-Llama-3.1-70B")
    default = list(replica_layouts(spec, VLLM, max_gpus=24, max_tp=8))
    assert default == [
        Layout(1),
        Layout(2),
        Layout(4),
        Layout(8),
        Layout(8, 2),
        Layout(8, 3),
    ]
    every = list(replica_layouts(spec, VLLM, max_gpus=4, max_tp=8, any_layout=True))
    assert every == [
        Layout(1),
        Layout(2),
        Layout(1, 2),
        Layout(1, 3),
        Layout(4),
        Layout(2, 2),
        Layout(1, 4),
    ]
    assert list(replica_layouts(spec, TGI, max_gpus=64, max_tp=64)) == [
        Layout(1),
        Layout(2),
        Layout(4),
        Layout(8),
    ]


def test_layout_labels() -> None:
    assert Layout(8).label == "TP 8"
    assert Layout(8, 3).label == "TP 8 x PP 3"
    assert Layout(4, 1, 3).label == "3 x (TP 4)"
    assert Layout(8, 2, 2).gpus == 32
