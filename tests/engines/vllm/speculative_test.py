"""A draft model of its own beside the target (``--speculative-config`` ``model``: DFlash and
EAGLE heads, a draft_model), pinned on real start-up logs and on small synthetic models.

What vLLM does with it (vllm/model_executor/models/qwen3_dflash.py, vllm/v1/spec_decode/
dflash.py; research in notes/s6-dflash.md): the drafter's attention layers are cache layers of
the same engine, grouped with the target's by the hybrid allocator (a layer whose KV heads or
head size differ from the target's is a spec type of its own, even where its page comes out the
same size); its weights load on every GPU of the last stage, its layers split over the
tensor-parallel ranks, its fc over the target's hidden states whole on each rank, and a DFlash
head runs the target's embedding and output head.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kvlint.arith.weights import draft_weight_bytes_per_gpu
from kvlint.deployment import Deployment
from kvlint.engines import estimate
from kvlint.engines import settle
from kvlint.engines.vllm.accounting import stage_layouts
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.estimate import EngineEstimate
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from kvlint.model.spec import Drafter
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import catalog_model
from testing.builders import dense
from testing.builders import deployment

CLUB = "https://github.com/noonghunna/club-3090/blob/4a29ab57d42a1d587de1042fa5dfd9535f94a063/"
DRAFT_PATH = "/root/.cache/huggingface/qwen3.6-27b-dflash"

# z-lab's DFlash drafter for Qwen3.6-27B, as its config states it (the catalog entry).
DFLASH = {
    "architectures": ["DFlashDraftModel"],
    "model_type": "qwen3",
    "hidden_size": 5120,
    "intermediate_size": 17408,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 5,
    "head_dim": 128,
    "vocab_size": 248320,
    "max_position_embeddings": 262144,
    "tie_word_embeddings": False,
    "dtype": "bfloat16",
    "dflash_config": {"target_layer_ids": [1, 16, 31, 46, 61]},
}


def _dep(
    draft: ModelSpec | None, method: str = "dflash", *, prefix: bool = False, **fields: Any
) -> Deployment:
    config = {"method": method, "model": DRAFT_PATH, "num_speculative_tokens": 5}
    settings: dict[str, Any] = {"speculative-config": config}
    if prefix:
        settings["enable-prefix-caching"] = True
    dep = deployment(settings=settings, speculative_model=DRAFT_PATH, **fields)
    return dataclasses.replace(dep, draft_spec=draft)


def _settled(dep: Deployment, spec: ModelSpec) -> VllmSettled:
    found = settle(dep, spec, None)
    assert isinstance(found, VllmSettled)
    return found


# --- real logs ----------------------------------------------------------------------------


def test_real_dflash_pool_on_two_3090s() -> None:
    # noonghunna/club-3090#95: vLLM 0.20.2rc1.dev9, Qwen3.6-27B AutoRound INT4 at TP 2, bf16
    # cache, max_model_len 200,000, max_num_seqs 1, 8,192 batched tokens, prefix caching,
    # DFlash N=5 (~/.cache/huggingface/qwen3.6-27b-dflash): "Available KV cache memory: 10.16
    # GiB", "GPU KV cache size: 200,769 tokens", "Maximum concurrency for 200,000 tokens per
    # request: 1.00x". The five drafter layers (4 KV heads of 128 a rank) are a group type of
    # their own beside the target's 16 (2 of 256): groups of 5 layers, 15 groups, 816-token
    # blocks (a Mamba state), 261 blocks of 25 x 1.59 MiB; a request holds 4 x 246 + 246 + 10 x
    # (2 + 5) = 1,300 of them: 261 / 260 ... 1.0038, 200,769 tokens.
    draft = catalog_model("z-lab/Qwen3.6-27B-DFlash")
    dep = _dep(
        draft,
        prefix=True,
        engine_version="0.20.2rc1.dev9+g01d4d1ad3",
        tensor_parallel_size=2,
        max_model_len=200000,
        max_num_seqs=1,
        max_num_batched_tokens=8192,
        dtype="bfloat16",
        kv_cache_memory_bytes=round(10.16 * GiB),
    )
    target = catalog_model("Qwen/Qwen3.6-27B")
    est = estimate(dep, target, None)
    assert est.kv_cache_tokens == 200_769
    assert est.max_concurrency == 1.00
    s = _settled(dep, target)
    assert s.cache_types is not None
    layout = stage_layouts(s.spec, s, s.cache_types)[-1]
    assert layout.block_size == 816
    assert len(layout.groups) == 15
    assert est.blocks_per_request == 1300
    # Without the drafter the same memory holds 1.52 requests: the +51.9% the case read before.
    plain = estimate(
        dataclasses.replace(dep, draft_spec=None, speculative_model=None), target, None
    )
    assert plain.max_concurrency == 1.52


def test_real_dflash_layout_on_four_3090s() -> None:
    # The archived club-3090 compose file multi4/autoround-int4/dflash.yml: 0.20.1rc1.dev16, TP
    # 4, 262,144 tokens, 2 sequences, prefix caching, DFlash N=5: "GPU KV cache size: 207,264
    # tokens", "Maximum concurrency for 262,144-token requests: 2.27x". 207,264 is 254 x 816:
    # the line before 0.20.2 prints num_blocks // groups x block, so 15 groups of 816-token
    # blocks; 2.27x is num_blocks / 1,680 (5 x 322 attention blocks + 10 x 7 state blocks a
    # request), so 3,810-3,824 blocks: both as kvlint pages it.
    draft = catalog_model("z-lab/Qwen3.6-27B-DFlash")
    dep = _dep(
        draft,
        prefix=True,
        engine_version="0.20.1rc1.dev16+g7a1eb8ac2",
        tensor_parallel_size=4,
        max_model_len=262144,
        max_num_seqs=2,
        max_num_batched_tokens=8192,
        dtype="bfloat16",
        kv_cache_memory_bytes=3815 * 5 * 816 * 1024,
    )
    est = estimate(dep, catalog_model("Qwen/Qwen3.6-27B"), None)
    assert est.block_size == 816
    assert est.blocks_per_request == 1680
    assert est.kv_cache_tokens == 254 * 816
    assert est.max_concurrency == 2.27


# --- what the drafter's checkpoint says ---------------------------------------------------


def test_a_dflash_config_is_read_as_a_head_sharing_the_targets_embedding() -> None:
    spec = spec_from_config(DFLASH, name="dflash")
    assert spec.drafter == Drafter("dflash", replicated_params=5 * 5120 * 5120)
    assert [layer.kind for layer in spec.layers] == [CacheKind.FULL] * 5
    # 5 layers of 52.4M attention + 267.4M MLP parameters, split over TP; the 25,600 x 5,120
    # fc (0.24 GiB in bf16) on every rank; no embedding or head (the target's).
    assert round(draft_weight_bytes_per_gpu(spec, tp=1, dtype="bfloat16") / GiB, 2) == 3.22
    assert round(draft_weight_bytes_per_gpu(spec, tp=2, dtype="bfloat16") / GiB, 2) == 1.73
    assert round(draft_weight_bytes_per_gpu(spec, tp=4, dtype="bfloat16") / GiB, 2) == 0.99


@pytest.mark.parametrize(
    ("changes", "kinds"),
    [
        # layer_types decide where the config has them (z-lab's later Qwen3.6-27B revision).
        (
            {"layer_types": ["sliding_attention"] * 4 + ["full_attention"], "sliding_window": 2048},
            [CacheKind.SLIDING] * 4 + [CacheKind.FULL],
        ),
        # dflash_config.use_swa without layer_types: every layer windowed (MiMo's DFlash head).
        (
            {"dflash_config": {"use_swa": True, "swa_window_size": 1024}},
            [CacheKind.SLIDING] * 5,
        ),
        # Qwen's own use_sliding_window is not what vLLM's DFlash model reads.
        ({"use_sliding_window": True, "sliding_window": 4096}, [CacheKind.FULL] * 5),
    ],
)
def test_dflash_layers_take_the_attention_vllm_resolves(
    changes: dict[str, Any], kinds: list[CacheKind]
) -> None:
    spec = spec_from_config({**DFLASH, **changes}, name="dflash")
    assert [layer.kind for layer in spec.layers] == kinds


def test_an_eagle3_head_has_its_own_head_and_the_targets_embedding() -> None:
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's shape: one Llama layer, a 32,000-token head.
    config = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 1,
        "vocab_size": 128256,
        "draft_vocab_size": 32000,
        "max_position_embeddings": 131072,
        "torch_dtype": "bfloat16",
    }
    spec = spec_from_config(config, name="eagle3")
    assert spec.drafter == Drafter("eagle3", replicated_params=3 * 4096 * 4096, head_vocab=32000)
    layer = 4096 * (2 * 4096 + 2 * 1024) + 3 * 4096 * 14336
    head = 32000 * 4096
    fc = 3 * 4096 * 4096
    assert (
        draft_weight_bytes_per_gpu(spec, tp=2, dtype="bfloat16") == (layer + head) * 2 // 2 + fc * 2
    )


# --- the accounting -----------------------------------------------------------------------


def test_a_draft_model_of_the_same_attention_joins_the_single_group() -> None:
    # Llama 3.2 1B drafting for Llama 3.1 8B: every layer full attention, so one group whose
    # page is every layer's (UniformTypeKVCacheSpecs): 32 + 16 layers of 8 KV heads of 128
    # (the 1B's are 8 x 64).
    target = dense()
    small = dense(layers=16, head_dim=64, hidden=2048, param_count=1_235_814_400)
    plain = estimate(deployment(kv_cache_memory_bytes=8 * GiB, max_model_len=8192), target, None)
    dep = _dep(small, method="draft_model", kv_cache_memory_bytes=8 * GiB, max_model_len=8192)
    drafted = estimate(dep, target, None)
    assert plain.bytes_per_token == 32 * 8 * 128 * 2 * 2
    assert drafted.bytes_per_token == plain.bytes_per_token + 16 * 8 * 64 * 2 * 2
    assert drafted.kv_cache_tokens is not None and plain.kv_cache_tokens is not None
    assert drafted.kv_cache_tokens < plain.kv_cache_tokens


@pytest.mark.parametrize("version", ["0.11.0", "0.20.2", "0.33.0"])
def test_a_whole_draft_model_weighs_on_the_gpu_per_release_line(version: str) -> None:
    # A draft_model of its own (Llama 3.2 1B's shape) on an H100: all its weights, embedding
    # and head included, at the target's bf16, whatever the release line.
    target = dense()
    small = dense(layers=16, head_dim=64, hidden=2048, param_count=1_235_814_400)
    fields = {"engine_version": version, "gpu": "H100", "max_model_len": 8192}
    plain = estimate(deployment(**fields), target, catalog_gpu("H100"))
    drafted = estimate(_dep(small, method="draft_model", **fields), target, catalog_gpu("H100"))
    assert plain.weights_bytes is not None and drafted.weights_bytes is not None
    assert drafted.weights_bytes - plain.weights_bytes == 1_235_814_400 * 2
    assert drafted.available_kv_bytes is not None and plain.available_kv_bytes is not None
    assert drafted.available_kv_bytes < plain.available_kv_bytes


def test_an_unknown_draft_model_is_said_not_counted() -> None:
    target = dense()
    est: EngineEstimate = estimate(
        _dep(None, method="eagle3", kv_cache_memory_bytes=8 * GiB), target, None
    )
    plain = estimate(deployment(kv_cache_memory_bytes=8 * GiB), target, None)
    assert est.kv_cache_tokens == plain.kv_cache_tokens
    assert any(
        note.startswith(f"draft model {DRAFT_PATH} is not known here: its weights and its cache")
        for note in est.notes
    )


def test_a_known_draft_model_is_named_in_the_notes() -> None:
    draft = spec_from_config(DFLASH, name="z-lab/Qwen3.6-27B-DFlash")
    est = estimate(_dep(draft, kv_cache_memory_bytes=8 * GiB), dense(), None)
    assert (
        f"draft model {DRAFT_PATH}: 5 cache layer(s) in the target's KV cache groups, "
        "3.22 GiB of weights a GPU"
    ) in est.notes


@pytest.mark.parametrize("method", ["mtp", "qwen3_next_mtp", "ngram"])
def test_methods_without_a_model_of_their_own_count_none(method: str) -> None:
    s = _settled(_dep(spec_from_config(DFLASH, name="d"), method=method), dense())
    assert s.draft_model is None and s.draft is None


def test_speculative_decoding_off_counts_no_draft() -> None:
    config = {"method": "dflash", "model": DRAFT_PATH, "num_speculative_tokens": 0}
    dep = deployment(settings={"speculative-config": config}, speculative_model=DRAFT_PATH)
    dep = dataclasses.replace(dep, draft_spec=spec_from_config(DFLASH, name="d"))
    assert _settled(dep, dense()).draft is None


# --- the run resolves the draft model as it resolves the model ----------------------------

SERVE = """\
model: Qwen/Qwen3.6-27B
tensor-parallel-size: 2
max-model-len: 200000
speculative-config:
  method: dflash
  model: {draft}
  num_speculative_tokens: 5
"""


@pytest.mark.parametrize(
    ("draft", "models", "counted"),
    [
        # A local path ending in the catalog drafter's name (not on this machine).
        (DRAFT_PATH, {}, True),
        # A private path the config's `models:` map names.
        (
            "/mnt/drafters/qwen-dflash",
            {"/mnt/drafters/qwen-dflash": "z-lab/Qwen3.6-27B-DFlash"},
            True,
        ),
        # A drafter kvlint does not know offline: not counted, and said so.
        ("/mnt/drafters/unknown", {}, False),
    ],
)
def test_the_run_resolves_the_draft_model(
    tmp_path: Any, draft: str, models: dict[str, str], counted: bool
) -> None:
    from kvlint.config import Settings
    from kvlint.linter import lint_paths
    from kvlint.selection import Selection

    path = tmp_path / "serve.yaml"
    path.write_text(SERVE.format(draft=draft), encoding="utf-8")
    result = lint_paths([str(path)], Settings(Selection(), offline=True, models=models))
    (checked,) = result.deployments
    spec = checked.deployment.draft_spec
    assert (spec is not None and spec.drafter is not None) is counted
    assert checked.sizing is not None and checked.sizing.engine is not None
    said = "5 cache layer(s) in the target's KV cache groups" if counted else "is not known here"
    assert any(
        note.startswith(f"draft model {draft}") and said in note
        for note in checked.sizing.engine.notes
    )


def test_an_eagle_head_known_by_its_method_shares_the_targets_embedding_and_head() -> None:
    # An EAGLE-1 head's config is a plain one-layer Llama's: vLLM's llama_eagle.py (method
    # "eagle") runs the target's embedding and head and adds an fc of 2 x hidden -> hidden.
    head = dense(layers=1, param_count=None)
    s = _settled(_dep(head, method="eagle"), dense())
    assert s.draft is not None
    assert s.draft.drafter == Drafter("eagle", replicated_params=2 * 4096 * 4096)
    as_model = draft_weight_bytes_per_gpu(head, tp=1, dtype="bfloat16")
    as_head = draft_weight_bytes_per_gpu(s.draft, tp=1, dtype="bfloat16")
    assert as_model - as_head == 2 * 128256 * 4096 * 2 - 2 * 4096 * 4096 * 2
