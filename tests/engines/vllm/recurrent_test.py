"""How vLLM pages a hybrid's recurrent (Mamba / gated-DeltaNet) state, pinned on real start-up
logs and on small synthetic models per release line.

The terms, from the source (kvlint/engines/vllm/defaults.py names the files): the recurrent
state's dtype (``mamba_ssm_cache_dtype``, which Qwen3.5 and Nemotron-H take from the checkpoint),
one more conv row per speculative token, the state blocks a request holds (1 + speculative
tokens; 2 + them with prefix caching, "align" mode), and an MTP drafter's attention layers in
the target's groups. Each real case gives its inputs, the logged "Available KV cache memory" as
the budget, and the logged tokens (within 2%) and concurrency (to the two decimals printed).
"""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.arith.dtypes import cache_types
from kvlint.engines import estimate
from kvlint.engines import settle
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.engines.vllm.paging import StatePaging
from kvlint.engines.vllm.paging import draft_layers
from kvlint.estimate import EngineEstimate
from kvlint.model.families.states import gated_delta_net_state
from kvlint.model.families.states import mamba2_state
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from testing.builders import catalog_model
from testing.builders import dense
from testing.builders import deployment
from testing.builders import with_layers

DGX = (
    "https://github.com/djangodevreng/dgx-spark-benchmarks/blob/"
    "5636536703fb6fe6a4992f68162b93fa03e7f15e/results/"
)
CLUB = "https://github.com/noonghunna/club-3090/blob/4a29ab57d42a1d587de1042fa5dfd9535f94a063/"

# (source, model, version, settings as the case's fields, vLLM settings, available GiB,
#  logged tokens, logged concurrency, the term it pins)
REAL: list[tuple[str, str, str, dict[str, Any], dict[str, Any], float, int, float, str]] = [
    (
        "https://github.com/phivan3008/meeting-translator/blob/"
        "d57f674fba7cccecd0fb30d9addfd669819087a2/vllm_serve.log",
        "Qwen/Qwen3.6-27B",
        "0.27.1",
        {"max_model_len": 4096, "max_num_seqs": 32, "max_num_batched_tokens": 4096},
        {"enable-prefix-caching": True},
        41.03,
        292_522,
        71.42,
        "the fp32 recurrent state (the 784-token block the log sets), align mode's 2 blocks",
    ),
    (
        # "./qwen36_27B": the log names a local directory; its 784-token block at TP 2 in bf16
        # is Qwen3.6-27B's (2 KV heads x 256 x 2 x 2 bytes a token, a 1,603,584-byte state).
        "https://github.com/souspilot/DiscoverPhysicsWIP/blob/"
        "ff4df16cdb4b4e5c7e3cd5e5555924d7826406a2/logs/vllm.log",
        "Qwen/Qwen3.6-27B",
        "0.27.1",
        {"max_model_len": 65536, "tensor_parallel_size": 2, "block_size": 784},
        {},
        44.73,
        1_407_894,
        21.48,
        "0.27 leaves prefix caching off for a hybrid unless asked: one state block a request",
    ),
    (
        "noonghunna/club-3090#612",
        "Qwen/Qwen3.6-35B-A3B",
        "0.24.0",
        {
            "max_model_len": 131072,
            "max_num_seqs": 1,
            "max_num_batched_tokens": 8192,
            "kv_cache_dtype": "fp8",
        },
        {"enable-prefix-caching": True},
        5.98,
        567_978,
        4.33,
        "an fp8 cache beside an fp32 state: 2,096-token blocks, align mode",
    ),
    (
        DGX + "qwen-3.6/qwen-3.6-35b-a3b/bf16/_bootlog.txt",
        "Qwen/Qwen3.6-35B-A3B",
        "0.19.2rc1.dev134+gfe9c3d6c5",
        {"max_model_len": 131072, "memory_fraction": 0.95},
        {"enable-prefix-caching": False},
        47.55,
        623_040,
        18.44,
        "the 0.19 line: fp32 state, one state block a request, num_blocks // groups x block",
    ),
    (
        DGX + "nemotron-3/nemotron-3-super-120b-a12b/nvfp4/_bootlog.txt",
        "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4",
        "0.19.2rc1.dev134+gfe9c3d6c5",
        {"max_model_len": 131072, "max_num_seqs": 20, "kv_cache_dtype": "fp8"},
        {
            "enable-prefix-caching": False,
            "mamba-ssm-cache-dtype": "float32",
            "speculative-config": {"method": "mtp", "num_speculative_tokens": 3},
        },
        36.25,
        1_399_712,
        27.81,
        "MTP 3: six conv rows, 1 + 3 state blocks, the MTP attention layer in the groups",
    ),
    (
        CLUB + "BENCHMARKS.md",
        "Qwen/Qwen3.6-27B",
        "nightly 1acd67a7",
        {
            "max_model_len": 262144,
            "max_num_seqs": 2,
            "tensor_parallel_size": 2,
            "kv_cache_dtype": "int8_per_token_head",
        },
        {
            "enable-prefix-caching": True,
            "speculative-config": {"method": "mtp", "num_speculative_tokens": 4},
        },
        11.10,
        605_495,
        2.31,
        "TP 2, per-token-head int8 scales, MTP 4 in align mode: 2 + 4 state blocks",
    ),
]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _real(
    model: str, version: str, fields: dict[str, Any], settings: dict[str, Any], gib: float
) -> EngineEstimate:
    dep = deployment(
        engine_version=version,
        kv_cache_memory_bytes=round(gib * GiB),
        settings=settings,
        **fields,
    )
    return estimate(dep, catalog_model(model), None)


@pytest.mark.parametrize(
    ("source", "model", "version", "fields", "settings", "gib", "tokens", "concurrency", "why"),
    REAL,
    ids=[case[0].rsplit("/", 2)[-2] + "-" + case[2] for case in REAL],
)
def test_real_hybrid_pools(
    source: str,
    model: str,
    version: str,
    fields: dict[str, Any],
    settings: dict[str, Any],
    gib: float,
    tokens: int,
    concurrency: float,
    why: str,
) -> None:
    est = _real(model, version, fields, settings, gib)
    assert est.kv_cache_tokens is not None, why
    assert abs(est.kv_cache_tokens - tokens) / tokens < 0.02, (source, why)
    assert est.max_concurrency == pytest.approx(concurrency, abs=0.005), (source, why)


def test_the_state_terms_move_the_pool_of_the_0_27_log() -> None:
    # Without them the same memory reads 857 blocks of 400 tokens (a bf16 state) and one state
    # block a request: 33% more than the engine printed.
    _, model, version, fields, settings, gib, tokens, _, _ = REAL[0]
    est = _real(model, version, fields, settings, gib)
    assert est.block_size == 784
    assert (
        "recurrent state: Mamba cache mode align (prefix caching on), 2 state block(s) a "
        "request, recurrent state in float32"
    ) in est.notes
    bf16 = _real(model, version, fields, {**settings, "mamba-ssm-cache-dtype": "bfloat16"}, gib)
    assert bf16.block_size == 400
    no_prefix = _real(model, version, fields, {"enable-prefix-caching": False}, gib)
    assert no_prefix.kv_cache_tokens is not None and no_prefix.kv_cache_tokens > tokens * 1.3


# A small gated-DeltaNet hybrid: three linear-attention layers to one full-attention layer.
_GDN = gated_delta_net_state(
    num_k_heads=4, num_v_heads=8, head_k_dim=64, head_v_dim=64, conv_kernel=4
)
_FULL = LayerSpec(CacheKind.FULL, 2, 128, 128)


def _hybrid(model_type: str = "qwen3_5", ssm: str | None = "float32") -> ModelSpec:
    layers = tuple(_FULL if i % 4 == 3 else _GDN.layer() for i in range(16))
    return with_layers(
        dense(hidden=1024, heads=8, vocab=32000),
        layers,
        model_type=model_type,
        ssm_state_dtype=ssm,
        mtp_layers=1,
    )


def _settled(version: str, spec: ModelSpec, **settings: Any) -> VllmSettled:
    dep = deployment(engine_version=version, max_model_len=8192, settings=settings)
    found = settle(dep, spec, None)
    assert isinstance(found, VllmSettled)
    return found


@pytest.mark.parametrize(
    ("version", "settings", "mode", "blocks"),
    [
        # 0.11 line: no align mode; prefix caching asked changes nothing for the state.
        ("0.11.0", {"enable-prefix-caching": True}, "none", 1),
        # 0.14-0.27: prefix caching is opt-in for hybrids; asked, it pages in align mode.
        ("0.20.2", {}, "none", 1),
        ("0.24.0", {"enable-prefix-caching": True}, "align", 2),
        ("0.27.1", {"enable-prefix-caching": "true"}, "align", 2),
        # 0.28 on: on by default; --no-enable-prefix-caching turns it off.
        ("0.28.0", {}, "align", 2),
        ("0.28.0", {"enable-prefix-caching": "false"}, "none", 1),
        # Speculative tokens: one more state block each, in either mode.
        (
            "0.24.0",
            {"speculative-config": '{"method": "mtp", "num_speculative_tokens": 3}'},
            "none",
            4,
        ),
        (
            "0.28.0",
            {"speculative-config": {"method": "ngram", "num_speculative_tokens": 5}},
            "align",
            7,
        ),
    ],
)
def test_state_blocks_a_request_holds_by_release(
    version: str, settings: dict[str, Any], mode: str, blocks: int
) -> None:
    s = _settled(version, _hybrid(), **settings)
    assert s.mamba_cache_mode == mode
    est = estimate(
        deployment(
            engine_version=version,
            max_model_len=8192,
            kv_cache_memory_bytes=4 * GiB,
            settings=settings,
        ),
        _hybrid(),
        None,
    )
    assert est.blocks_per_request is not None and est.block_size is not None
    # four groups of four layers: one full-attention group, three state groups
    attention = _cdiv(8192, est.block_size)
    assert est.blocks_per_request == attention + 3 * blocks


def test_recurrent_state_dtype_is_the_checkpoints_where_vllm_reads_it() -> None:
    assert _settled("0.24.0", _hybrid()).mamba_ssm_cache_dtype == "float32"
    flag = _settled("0.24.0", _hybrid(), **{"mamba-ssm-cache-dtype": "bfloat16"})
    assert flag.mamba_ssm_cache_dtype == "bfloat16"
    # Qwen3-Next's config class sets nothing: the state follows the conv state (auto).
    assert _settled("0.24.0", _hybrid("qwen3_next")).mamba_ssm_cache_dtype == "auto"
    # Nemotron-H: the checkpoint's key, else float32.
    assert _settled("0.24.0", _hybrid("nemotron_h", None)).mamba_ssm_cache_dtype == "float32"


def test_conv_state_grows_a_row_per_speculative_token() -> None:
    # conv (3 + spec, 2*4*64 + 8*64 = 1024) in bf16, temporal (8, 64, 64) in fp32, on TP 2.
    types = cache_types("auto", "bfloat16")
    paging = StatePaging(types.state, cache_types("float32", "bfloat16").k, 3)
    layer = _GDN.layer()
    assert paging.page_bytes(layer, 2) == (6 * 1024 // 2) * 2 + (8 * 64 * 64 // 2) * 4
    assert (
        paging._replace(speculative_tokens=0).page_bytes(layer, 1) == 3 * 1024 * 2 + 8 * 64 * 64 * 4
    )


def test_an_mtp_drafter_adds_the_checkpoints_mtp_layers() -> None:
    spec = _hybrid()
    assert draft_layers(spec, "mtp", 3) == (_FULL,)
    assert draft_layers(spec, "mtp", 0) == ()
    assert draft_layers(spec, "eagle3", 3) == ()  # a draft model of its own: not in the spec
    assert draft_layers(with_layers(spec, spec.layers, mtp_layers=2), "deepseek_mtp", 1) == (
        _FULL,
        _FULL,
    )


def test_a_model_caching_every_state_aligns_blocks_to_its_chunk() -> None:
    # Nemotron-H declares SupportsMambaPrefixCaching: with prefix caching (the default from
    # 0.28) its state is cached per block ("all" mode), the attention block a multiple of
    # lcm(chunk_size 128, 16) holding a state, and a request a state block per block of tokens.
    state = mamba2_state(1024, 2, 16, 64, 64, 4)
    layers = tuple(_FULL if i % 4 == 3 else state.layer() for i in range(16))
    spec = with_layers(
        dense(hidden=1024, heads=8, vocab=32000),
        layers,
        model_type="nemotron_h",
        mamba_chunk_size=128,
    )
    s = _settled("0.28.0", spec)
    assert (s.mamba_cache_mode, s.mamba_ssm_cache_dtype) == ("all", "float32")
    per_token = 2 * 128 * 2 * 2  # two KV heads of 128, K and V, bf16
    state_bytes = 3 * (1024 + 2 * 2 * 64) * 2 + 16 * 64 * 64 * 4
    block = 128 * _cdiv(_cdiv(state_bytes, per_token), 128)
    est = estimate(
        deployment(engine_version="0.28.0", max_model_len=8192, kv_cache_memory_bytes=4 * GiB),
        spec,
        None,
    )
    assert est.block_size == block
    assert est.blocks_per_request == 4 * _cdiv(8192, block)  # every group, state groups alike
    # Without prefix caching: the smallest 16-multiple, one state block a request.
    off = _settled("0.28.0", spec, **{"enable-prefix-caching": False})
    assert off.mamba_cache_mode == "none"
    # A model without the marker takes "align" even when "all" is asked.
    asked = _settled("0.28.0", _hybrid(), **{"mamba-cache-mode": "all"})
    assert asked.mamba_cache_mode == "align"
