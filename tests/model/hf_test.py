"""spec_from_config / load_config_file: shapes, lengths, dtype, RoPE and the errors they raise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvlint.errors import KvlintError
from kvlint.errors import UnsizedArchitecture
from kvlint.model.hf import key_positions
from kvlint.model.hf import load_config_file
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import CacheKind
from testing.shared import HF_CONFIGS
from testing.shared import hf_config_files
from testing.shared import shared_file

LLAMA_70B: dict[str, Any] = {
    "model_type": "llama",
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "intermediate_size": 28672,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}


def write(tmp_path: Path, config: Any, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def test_llama_70b_shape() -> None:
    spec = spec_from_config(LLAMA_70B, name="llama-70b")
    assert spec.num_layers == 80
    assert spec.num_key_value_heads == 8
    assert spec.head_dim == 128  # 8192 / 64 heads, never 8192 / 8 KV heads
    assert spec.layer_counts() == {"full": 80}
    assert spec.attention_kind == "GQA"
    assert spec.dtype == "bfloat16"
    assert spec.max_position_embeddings == 131072
    assert spec.max_length_key == "max_position_embeddings"
    assert spec.rope_scaling is not None
    assert spec.rope_scaling.rope_type == "llama3"
    assert spec.rope_scaling.factor == 8.0
    assert spec.rope_scaling.original_max_position_embeddings == 8192


def test_explicit_head_dim_wins() -> None:
    # Qwen3-32B: 64 heads x 128 = 8192, not hidden_size 5120.
    config = {**LLAMA_70B, "model_type": "qwen3", "hidden_size": 5120, "head_dim": 128}
    assert spec_from_config(config, name="q").head_dim == 128
    config["head_dim"] = 0  # zero means absent: hidden / heads
    assert spec_from_config(config, name="q").head_dim == 80


@pytest.mark.parametrize(
    ("extra", "kv_heads"),
    [
        ({"n_head_kv": 4, "num_key_value_heads": 8}, 4),
        ({"num_kv_heads": 2}, 2),
        ({"multi_query_group_num": 2}, 2),
        ({"num_attention_groups": 16}, 16),
        ({"multi_query": True}, 1),
    ],
)
def test_kv_head_aliases(extra: dict[str, Any], kv_heads: int) -> None:
    config = {k: v for k, v in LLAMA_70B.items() if k != "num_key_value_heads"}
    assert spec_from_config({**config, **extra}, name="m").num_key_value_heads == kv_heads


def test_no_kv_key_means_mha() -> None:
    config = {k: v for k, v in LLAMA_70B.items() if k != "num_key_value_heads"}
    spec = spec_from_config(config, name="m")
    assert spec.num_key_value_heads == 64
    assert spec.attention_kind == "MHA"


def test_old_key_names() -> None:
    # GPT-2 spelling: n_layer, n_head, n_embd, n_positions.
    config = {"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768,
              "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257}  # fmt: skip
    spec = spec_from_config(config, name="gpt2")
    assert (spec.num_layers, spec.num_attention_heads, spec.head_dim) == (12, 12, 64)
    assert spec.max_position_embeddings == 1024
    assert spec.max_length_key == "n_positions"


def test_max_length_is_the_minimum_key() -> None:
    config = {**LLAMA_70B, "seq_length": 32768}
    spec = spec_from_config(config, name="m")
    assert (spec.max_position_embeddings, spec.max_length_key) == (32768, "seq_length")


def test_model_max_length_overrides() -> None:
    config = {**LLAMA_70B, "model_type": "cohere", "model_max_length": 262144}
    spec = spec_from_config(config, name="m")
    assert (spec.max_position_embeddings, spec.max_length_key) == (262144, "model_max_length")


@pytest.mark.parametrize(
    ("dtype_keys", "dtype"),
    [
        ({"torch_dtype": "float16"}, "float16"),
        ({"dtype": "bfloat16"}, "bfloat16"),
        ({"torch_dtype": "float32"}, "bfloat16"),  # vLLM downcasts float32 models
        ({}, "bfloat16"),  # absent = float32 = served in bfloat16
    ],
)
def test_dtype(dtype_keys: dict[str, str], dtype: str) -> None:
    config = {k: v for k, v in LLAMA_70B.items() if k != "torch_dtype"}
    assert spec_from_config({**config, **dtype_keys}, name="m").dtype == dtype


def test_gemma2_float16_served_as_bfloat16() -> None:
    config = {**LLAMA_70B, "model_type": "gemma2", "torch_dtype": "float16"}
    assert spec_from_config(config, name="m").dtype == "bfloat16"


def test_text_config_keeps_top_level_dtype_and_quantization() -> None:
    config = {
        "model_type": "llava",
        "torch_dtype": "float16",
        "quantization_config": {"quant_method": "awq", "bits": 4},
        "text_config": {k: v for k, v in LLAMA_70B.items() if k != "torch_dtype"},
    }
    spec = spec_from_config(config, name="m")
    assert spec.dtype == "float16"
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.weight_bits) == ("awq", 4.0)
    assert spec.num_layers == 80


def test_unknown_model_type_is_refused_not_read_as_a_generic_decoder() -> None:
    with pytest.raises(UnsizedArchitecture) as caught:
        spec_from_config({**LLAMA_70B, "model_type": "brand_new"}, name="m")
    assert "architecture kvlint does not size: model_type 'brand_new'" in str(caught.value)
    without = {k: v for k, v in LLAMA_70B.items() if k != "model_type"}
    with pytest.raises(UnsizedArchitecture, match="no `model_type`"):
        spec_from_config(without, name="m")


@pytest.mark.parametrize(
    ("model_type", "missing"),
    [
        ("deepseek_v4", "compress_ratios"),
        ("mllama", "cross-attention"),
        ("minimax_m3", "sparse_attention_config"),
        ("kimi_linear", "Kimi Delta Attention"),
        ("mimo_v2_flash", "swa_num_key_value_heads"),
        ("xlm-roberta", "encoder"),
    ],
)
def test_a_known_unsized_architecture_is_refused_naming_what_is_missing(
    model_type: str, missing: str
) -> None:
    with pytest.raises(UnsizedArchitecture) as caught:
        spec_from_config({**LLAMA_70B, "model_type": model_type}, name="m")
    assert f"model_type {model_type!r} (not modelled: " in caught.value.message
    assert missing in caught.value.message


def test_a_refusal_in_a_file_points_at_its_model_type(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{\n  "num_hidden_layers": 2,\n  "model_type": "deepseek_v4"\n}\n')
    with pytest.raises(UnsizedArchitecture) as caught:
        load_config_file(path)
    assert caught.value.span is not None
    assert (caught.value.span.line, caught.value.span.column) == (3, 3)


def test_the_text_config_type_decides_the_family() -> None:
    # Qwen3-VL: a qwen3_vl wrapper whose text_config is a plain Qwen3 (qwen3_vl_text)
    config = {"model_type": "qwen3_vl",
              "text_config": {**LLAMA_70B, "model_type": "qwen3_vl_text"}}  # fmt: skip
    assert spec_from_config(config, name="m").layer_counts() == {"full": 80}
    refused = {"model_type": "llava", "text_config": {**LLAMA_70B, "model_type": "deepseek_v4"}}
    with pytest.raises(UnsizedArchitecture, match="'llava/deepseek_v4'"):
        spec_from_config(refused, name="m")


def test_qwen2_window_disabled() -> None:
    config = {**LLAMA_70B, "model_type": "qwen2", "sliding_window": 131072,
              "use_sliding_window": False, "max_window_layers": 80}  # fmt: skip
    assert spec_from_config(config, name="m").layer_counts() == {"full": 80}


def test_qwen2_window_enabled_from_max_window_layers() -> None:
    config = {**LLAMA_70B, "model_type": "qwen2", "sliding_window": 4096,
              "use_sliding_window": True, "max_window_layers": 60}  # fmt: skip
    spec = spec_from_config(config, name="m")
    assert spec.layer_counts() == {"full": 60, "sliding": 20}
    assert spec.layers[60].window == 4096
    assert spec.layers[59].kind is CacheKind.FULL


def test_mistral_v01_every_layer_windowed() -> None:
    config = {**LLAMA_70B, "model_type": "mistral", "num_hidden_layers": 32,
              "hidden_size": 4096, "num_attention_heads": 32, "sliding_window": 4096}  # fmt: skip
    spec = spec_from_config(config, name="m")
    assert spec.layer_counts() == {"sliding": 32}
    assert spec.sliding_window == 4096
    assert spec.every_layer_windowed


def test_layer_types() -> None:
    types = ["sliding_attention", "full_attention"] * 40
    config = {**LLAMA_70B, "layer_types": types, "sliding_window": 128}
    spec = spec_from_config(config, name="m")
    assert spec.layer_counts() == {"full": 40, "sliding": 40}
    assert spec.layers[0].kind is CacheKind.SLIDING
    assert spec.layers[0].window == 128


@pytest.mark.parametrize(
    ("change", "key", "text"),
    [
        ({"num_hidden_layers": None}, "num_hidden_layers", "is missing"),
        ({"num_hidden_layers": "eighty"}, "num_hidden_layers", "must be an integer"),
        ({"num_key_value_heads": 0}, "num_key_value_heads", "is 0"),
        ({"num_key_value_heads": 128}, "num_key_value_heads", "greater than"),
        ({"head_dim": -1}, "head_dim", "at least 0"),
        ({"layer_types": ["full_attention"]}, "layer_types", "one string per layer"),
    ],
)
def test_unreadable_config_names_file_and_key(
    tmp_path: Path, change: dict[str, Any], key: str, text: str
) -> None:
    config = {k: v for k, v in {**LLAMA_70B, **change}.items() if v is not None}
    path = write(tmp_path, config)
    with pytest.raises(KvlintError) as info:
        load_config_file(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert key in message
    assert text in message
    if key in config:  # the key's own line and column
        lines = path.read_text().splitlines()
        assert info.value.span is not None
        line, column = info.value.span.line, info.value.span.column
        assert lines[line - 1][column - 1 :].startswith(f'"{key}"')


def test_error_inside_text_config_points_there(tmp_path: Path) -> None:
    config = {"model_type": "llava", "num_hidden_layers": 3,
              "text_config": {**LLAMA_70B, "num_hidden_layers": "x"}}  # fmt: skip
    path = write(tmp_path, config)
    with pytest.raises(KvlintError) as info:
        load_config_file(path)
    assert "`text_config.num_hidden_layers` must be an integer" in str(info.value)
    assert info.value.span is not None
    assert info.value.span.line > 3  # the nested key, not the top-level one


def test_unknown_model_type_without_standard_keys(tmp_path: Path) -> None:
    path = write(tmp_path, {"model_type": "mystery", "layers": 3})
    with pytest.raises(UnsizedArchitecture, match="model_type 'mystery'") as info:
        load_config_file(path)
    assert info.value.span is not None
    assert info.value.span.line == 2


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_unreadable_file(tmp_path: Path, content: bytes, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(KvlintError, match=text) as info:
        load_config_file(path)
    assert str(info.value).startswith(str(path))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(KvlintError, match="cannot read"):
        load_config_file(tmp_path / "absent.json")


def test_directory_reads_its_config_json(tmp_path: Path) -> None:
    model = tmp_path / "my-model"
    model.mkdir()
    write(model, LLAMA_70B)
    spec = load_config_file(model)
    assert spec.name == "my-model"
    assert spec.source == str(model / "config.json")


def test_key_positions() -> None:
    text = '{\n  "a": {"b": [ {"c": 1} ], "d\\"e": 2},\n  "f": Infinity\n}'
    positions = key_positions(text)
    assert positions[("a",)] == (2, 3)
    assert positions[("a", "b")] == (2, 9)
    assert positions[("a", "b", "[]", "c")] == (2, 17)
    assert positions[("a", 'd"e')] == (2, 28)
    assert positions[("f",)] == (3, 3)


@pytest.mark.parametrize("path", hf_config_files(), ids=lambda p: p.stem)
def test_every_fixture_builds(path: Path) -> None:
    """Every real config: layer count and KV heads as the config states them."""
    config = json.loads(path.read_text())
    text = config.get("text_config", config)
    spec = load_config_file(path)
    layers = text.get("num_hidden_layers", text.get("n_layer"))
    assert spec.num_layers == layers
    kv = next(
        (text[key] for key in ("n_head_kv", "num_kv_heads", "num_key_value_heads") if key in text),
        text["num_attention_heads"],
    )
    if "kv_lora_rank" in text:  # MLA: one latent, whatever num_key_value_heads says
        kv = 1
    assert spec.num_key_value_heads == kv
    assert spec.param_count is not None and spec.param_count > 0
    assert all(layer.kind is not CacheKind.FULL or layer.kv_heads == kv for layer in spec.layers)


def test_fixtures_present_or_skipped() -> None:
    shared_file(HF_CONFIGS)
    assert len(hf_config_files()) >= 30


KEYS = [
    "model_type", "num_hidden_layers", "hidden_size", "num_attention_heads",
    "num_key_value_heads", "head_dim", "sliding_window", "layer_types", "rope_scaling",
    "rope_parameters", "quantization_config", "torch_dtype", "kv_lora_rank", "qk_rope_head_dim",
    "hybrid_override_pattern", "full_attention_interval", "linear_num_key_heads",
    "num_kv_shared_layers", "attention_chunk_size", "no_rope_layers", "use_sliding_window",
    "max_window_layers", "multi_query", "text_config", "max_position_embeddings", "vocab_size",
    "num_local_experts", "global_head_dim", "mamba_n_heads", "intermediate_size",
]  # fmt: skip
MODEL_TYPES = ["llama", "gemma2", "gemma3", "gemma4", "gemma3n", "llama4", "deepseek_v3",
               "qwen3_next", "nemotron_h", "jamba", "falcon_h1", "falcon", "chatglm",
               "cohere2", "mystery"]  # fmt: skip


def test_any_config_is_a_spec_or_a_kvlint_error() -> None:
    """No config, however broken, ends in anything but a ModelSpec or a KvlintError."""
    from hypothesis import given
    from hypothesis import settings
    from hypothesis import strategies as st

    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-2, 300), st.floats(allow_nan=False),
        st.text(max_size=8), st.sampled_from(MODEL_TYPES),
    )  # fmt: skip
    values = st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=6), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
        ),
        max_leaves=12,
    )
    base = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 64,
            "num_attention_heads": 4}  # fmt: skip

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.dictionaries(st.sampled_from(KEYS), values, max_size=6), st.booleans())
    def check(extra: dict[str, Any], keep_base: bool) -> None:
        config = {**base, **extra} if keep_base else extra
        try:
            spec = spec_from_config(config, name="fuzz")
        except KvlintError as error:
            assert "\n" not in str(error)
            return
        assert spec.num_layers >= 1

    check()


def test_mpt_attn_config_kv_heads() -> None:
    config = {"model_type": "mpt", "n_layers": 32, "d_model": 4096, "n_heads": 32,
              "max_seq_len": 2048, "attn_config": {"kv_n_heads": 8},
              "vocab_size": 50432}  # fmt: skip
    spec = spec_from_config(config, name="mpt")
    assert (spec.num_layers, spec.num_key_value_heads, spec.head_dim) == (32, 8, 128)
    assert spec.max_length_key == "max_seq_len"


def test_hidden_smaller_than_heads_without_head_dim() -> None:
    with pytest.raises(KvlintError, match="smaller than the 64 attention heads"):
        spec_from_config({**LLAMA_70B, "hidden_size": 32}, name="m")


def test_duplicate_key_points_at_the_value_json_keeps(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    text = json.dumps(LLAMA_70B, indent=2)[:-2] + ',\n  "num_hidden_layers": "x"\n}\n'
    path.write_text(text)
    with pytest.raises(KvlintError, match="must be an integer") as info:
        load_config_file(path)
    assert info.value.span is not None
    assert info.value.span.line == len(text.splitlines()) - 1
