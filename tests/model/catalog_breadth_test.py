"""Catalog entries read from config copies in serving projects' test data and pull requests:
each new shape sized from its published config, and each encoder refused with its reason."""

from __future__ import annotations

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import UnsizedArchitecture
from kvlint.model import catalog
from kvlint.model.spec import CacheKind


def test_laguna_grows_on_its_full_layers_and_bounds_the_512_token_windows() -> None:
    # Laguna-XS.2: layer_types full, sliding, sliding, sliding, ... over 40 layers; 8 KV heads
    # of 128 on every layer, the sliding ones windowed at 512 tokens
    spec = catalog.entry_spec("poolside/Laguna-XS.2-FP8")
    assert spec.layer_counts() == {"full": 10, "sliding": 30}
    assert spec.sliding_window == 512
    kv = kv_size(spec)
    assert kv.per_token_bytes == 10 * 2 * 8 * 128 * 2
    assert kv.bounded_bytes(100_000) == 30 * 512 * 2 * 8 * 128 * 2
    bigger = catalog.entry_spec("poolside/Laguna-S-2.1-FP8")
    assert bigger.layer_counts() == {"full": 12, "sliding": 36}


@pytest.mark.parametrize(
    "model_id", ["zai-org/GLM-5.3", "zai-org/GLM-5.3-FP8", "nvidia/GLM-5.3-NVFP4"]
)
def test_glm_5_3_caches_one_latent_per_layer(model_id: str) -> None:
    # kv_lora_rank 512 + qk_rope_head_dim 64 per token on each of the 78 layers, in bfloat16
    spec = catalog.entry_spec(model_id)
    assert {layer.kind for layer in spec.layers} == {CacheKind.MLA}
    assert kv_size(spec).per_token_bytes == 78 * (512 + 64) * 2


def test_yi_34b_is_grouped_query_attention_with_8_kv_heads() -> None:
    spec = catalog.entry_spec("01-ai/Yi-34B")
    assert kv_size(spec).per_token_bytes == 2 * 60 * 8 * 128 * 2  # not 56 KV heads
    assert spec.max_position_embeddings == 4096


@pytest.mark.parametrize("name", ["mistralai/Mistral-Small-24B-Instruct-2501", "mistral-small:24b"])
def test_mistral_small_3_has_its_own_shape_not_mistral_small_3_1s(name: str) -> None:
    # Mistral's params.json for 2501: 40 layers, 8 KV heads of 128, 32,768 positions, text only
    # (3.1, the 2503 release, is a mistral3 model with a vision tower and 131,072 positions)
    spec = catalog.lookup(name)
    assert spec is not None
    assert kv_size(spec).per_token_bytes == 2 * 40 * 8 * 128 * 2
    assert spec.max_position_embeddings == 32_768


@pytest.mark.parametrize(
    ("model_id", "model_type"),
    [
        ("BAAI/bge-reranker-v2-m3", "xlm-roberta"),
        ("BAAI/bge-reranker-large", "xlm-roberta"),
        ("intfloat/multilingual-e5-large", "xlm-roberta"),
        ("ibm-granite/granite-embedding-125m-english", "roberta"),
        ("ibm-granite/granite-embedding-278m-multilingual", "xlm-roberta"),
        ("sentence-transformers/all-roberta-large-v1", "roberta"),
    ],
)
def test_encoder_models_are_in_the_catalog_and_refused_with_the_reason(
    model_id: str, model_type: str
) -> None:
    entry = catalog.get_entry(model_id)
    assert entry is not None and entry.unsized is not None and "encoder" in entry.unsized
    with pytest.raises(UnsizedArchitecture, match=f"model_type '{model_type}'"):
        catalog.entry_spec(model_id)


@pytest.mark.parametrize(
    ("model_id", "per_token_bytes"),
    [
        # 2 (K, V) x layers x KV heads x head size x 2 bytes, from each published config
        ("internlm/internlm3-8b-instruct", 2 * 48 * 2 * 128 * 2),  # read with vLLM's Llama class
        ("01-ai/Yi-1.5-9B-Chat", 2 * 48 * 4 * 128 * 2),
        ("baichuan-inc/Baichuan2-13B-Chat", 2 * 40 * 40 * 128 * 2),  # no grouping
        ("Alibaba-NLP/gte-Qwen2-1.5B-instruct", 2 * 28 * 2 * 128 * 2),
        ("CohereForAI/c4ai-command-r-08-2024", 2 * 40 * 8 * 128 * 2),
        ("allenai/OLMo-2-0425-1B", 2 * 16 * 16 * 128 * 2),
        ("moonshotai/Kimi-K2.6", 61 * (512 + 64) * 2),  # the Kimi K2 latent under a vision wrapper
        ("01-ai/Yi-1.5-34B-Chat", 2 * 60 * 8 * 128 * 2),
        ("01-ai/Yi-Coder-1.5B-Chat", 2 * 24 * 16 * 128 * 2),
        ("internlm/internlm2_5-20b", 2 * 48 * 8 * 128 * 2),
        ("CohereForAI/c4ai-command-r-plus-08-2024", 2 * 64 * 8 * 128 * 2),
        ("nvidia/Mistral-NeMo-Minitron-8B-Instruct", 2 * 40 * 8 * 128 * 2),
        ("nvidia/Minitron-8B-Base", 2 * 32 * 8 * 128 * 2),  # head_dim 128, not 4096 / 48
        ("nvidia/Minitron-4B-Base", 2 * 32 * 8 * 128 * 2),  # head_dim 128, not 3072 / 8
        ("allenai/Llama-3.1-Tulu-3-8B", 2 * 32 * 8 * 128 * 2),
        ("allenai/olmOCR-2-7B-1025", 2 * 28 * 4 * 128 * 2),  # the Qwen2.5-VL-7B text model
        ("humain-ai/ALLaM-7B-Instruct-preview", 2 * 32 * 32 * 128 * 2),  # MHA: 32 KV heads
    ],
)
def test_sizes_from_the_published_configs(model_id: str, per_token_bytes: int) -> None:
    assert kv_size(catalog.entry_spec(model_id)).per_token_bytes == per_token_bytes


def test_command_r7b_windows_three_layers_in_four() -> None:
    spec = catalog.entry_spec("CohereForAI/c4ai-command-r7b-12-2024")
    assert spec.layer_counts() == {"full": 8, "sliding": 24}
    assert spec.sliding_window == 4096
    assert kv_size(spec).per_token_bytes == 8 * 2 * 8 * 128 * 2


def test_gte_qwen2_reads_its_disabled_window_as_full_attention() -> None:
    spec = catalog.entry_spec("Alibaba-NLP/gte-Qwen2-1.5B-instruct")
    assert spec.sliding_window is None
    assert any("use_sliding_window" in note for note in spec.notes)


@pytest.mark.parametrize("model_id", ["MiniMaxAI/MiniMax-M1-80k", "MiniMaxAI/MiniMax-M1-40k"])
def test_minimax_m1_is_refused_for_its_lightning_attention(model_id: str) -> None:
    entry = catalog.get_entry(model_id)
    assert entry is not None and entry.unsized is not None and "lightning" in entry.unsized
    with pytest.raises(UnsizedArchitecture, match="attn_type_list"):
        catalog.entry_spec(model_id)


@pytest.mark.parametrize(
    ("model_id", "model_type"),
    [
        ("BAAI/bge-m3", "xlm-roberta"),
        ("BAAI/bge-base-en-v1.5", "bert"),
        ("intfloat/e5-large-v2", "bert"),
        ("mixedbread-ai/mxbai-embed-large-v1", "bert"),
        ("nomic-ai/nomic-embed-text-v1.5", "nomic_bert"),
        ("Snowflake/snowflake-arctic-embed-m-long", "nomic_bert"),
        ("Snowflake/snowflake-arctic-embed-l-v2.0", "xlm-roberta"),
        ("sentence-transformers/all-MiniLM-L6-v2", "bert"),
        ("BAAI/bge-reranker-base", "xlm-roberta"),
    ],
)
def test_embedding_models_read_from_hub_pages_are_refused_as_encoders(
    model_id: str, model_type: str
) -> None:
    with pytest.raises(UnsizedArchitecture, match=f"model_type '{model_type}'.*encoder"):
        catalog.entry_spec(model_id)


def test_command_r_plus_08_2024_is_its_own_release_not_an_alias_of_the_first() -> None:
    # the refresh publishes 131072 positions and bfloat16 (the first release: 8192 positions
    # with model_max_length 131072, float16); a lookup of either name gets its own config
    refresh = catalog.lookup("CohereLabs/c4ai-command-r-plus-08-2024")
    first = catalog.lookup("CohereForAI/c4ai-command-r-plus")
    assert refresh is not None and first is not None
    assert refresh.max_position_embeddings == 131072 and refresh.dtype == "bfloat16"
    assert first.dtype == "float16"


def test_minitron_counts_its_two_matrix_relu2_mlp() -> None:
    # NemotronMLP is up_proj and down_proj (relu2), no gate: read as gated, the 8.3B model
    # would count 2.1B parameters it does not have and its weights would crowd out the cache
    spec = catalog.entry_spec("nvidia/Minitron-8B-Base")
    assert spec.param_count is not None and 8.0e9 < spec.param_count < 8.5e9


@pytest.mark.parametrize(
    "model_id", ["LGAI-EXAONE/EXAONE-4.0-32B", "allenai/Olmo-3.1-32B-Instruct"]
)
def test_exaone_4_and_olmo_3_window_three_layers_in_four(model_id: str) -> None:
    # both configs: 64 layers, layer_types sliding x3 then full, 4096-token windows, 8 KV
    # heads of 128 (EXAONE states head_dim; OLMo's is 5120 / 40)
    spec = catalog.entry_spec(model_id)
    assert spec.layer_counts() == {"full": 16, "sliding": 48}
    assert spec.sliding_window == 4096
    kv = kv_size(spec)
    assert kv.per_token_bytes == 16 * 2 * 8 * 128 * 2
    assert kv.bounded_bytes(100_000) == 48 * 4096 * 2 * 8 * 128 * 2


def test_lfm2_is_refused_for_its_convolution_layers() -> None:
    entry = catalog.get_entry("LiquidAI/LFM2.5-VL-1.6B")
    assert entry is not None and entry.unsized is not None and "convolution" in entry.unsized
    with pytest.raises(UnsizedArchitecture, match="model_type 'lfm2_vl/lfm2'"):
        catalog.entry_spec("LiquidAI/LFM2.5-VL-1.6B")
