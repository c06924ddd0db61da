"""GGUF models: a tiny real GGUF file written by gguf.GGUFWriter (metadata only), and names
matched to the catalog."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import KvlintError
from kvlint.model.gguf import is_gguf_reference
from kvlint.model.gguf import parse_gguf_name
from kvlint.model.resolve import resolve_model


def gguf_package() -> Any:
    """The optional ``gguf`` package (the ``gguf`` extra); its tests skip without it."""
    return pytest.importorskip("gguf", reason="the optional gguf extra is not installed")


def write_gguf(path: pathlib.Path, arch: str = "llama", **extra: int) -> pathlib.Path:
    gguf = gguf_package()
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name("Tiny Test Llama")
    writer.add_block_count(extra.get("blocks", 4))
    writer.add_context_length(8192)
    writer.add_embedding_length(512)
    writer.add_feed_forward_length(1024)
    writer.add_head_count(8)
    writer.add_head_count_kv(2)
    writer.add_key_length(64)
    writer.add_value_length(64)
    if "window" in extra:
        writer.add_sliding_window(extra["window"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_gguf_file_is_read_from_its_own_metadata(tmp_path: pathlib.Path) -> None:
    path = write_gguf(tmp_path / "tiny-Q4_K_M.gguf")
    resolved = resolve_model(str(path))
    assert resolved.origin == "gguf"
    assert "GGUF metadata" in resolved.detail and "llama" in resolved.detail
    spec = resolved.spec
    assert spec.name == "Tiny Test Llama"
    assert spec.num_layers == 4 and spec.num_key_value_heads == 2 and spec.head_dim == 64
    assert spec.max_position_embeddings == 8192
    assert spec.dtype == "float16"  # llama.cpp's default cache type
    assert spec.quantization is not None and spec.quantization.method == "gguf:Q4_K_M"
    assert kv_size(spec).per_token_bytes == 4 * 2 * 2 * 64 * 2


def test_a_gguf_sliding_window_is_read(tmp_path: pathlib.Path) -> None:
    path = write_gguf(tmp_path / "tiny-mistral.gguf", window=4096)
    spec = resolve_model(str(path)).spec
    assert spec.sliding_window == 4096


def test_a_file_that_is_not_gguf_is_one_clear_error(tmp_path: pathlib.Path) -> None:
    gguf_package()
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file at all")
    with pytest.raises(KvlintError) as info:
        resolve_model(str(bad))
    assert str(bad) in str(info.value) and "GGUF" in str(info.value)


@pytest.mark.parametrize(
    ("ref", "model_id", "quant"),
    [
        (
            "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "Q4_K_M",
        ),
        (
            "/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "Q4_K_M",
        ),
        (
            "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "Q4_K_M",
        ),
        ("qwen2.5-7b-instruct-q4_k_m.gguf", "Qwen/Qwen2.5-7B-Instruct", "Q4_K_M"),
        ("qwen1_5-72b-chat-q2_k.gguf", "Qwen/Qwen1.5-72B-Chat", "Q2_K"),
        ("mistral-7b-instruct-v0.2.Q5_K_M.gguf", "mistralai/Mistral-7B-Instruct-v0.2", "Q5_K_M"),
        ("gemma-4-31B-it-Q4_K_M.gguf", "google/gemma-4-31B-it", "Q4_K_M"),
        ("unsloth/gpt-oss-20b-GGUF", "openai/gpt-oss-20b", None),
        (
            "Llama-3.3-70B-Instruct-Q8_0-00001-of-00002.gguf",
            "meta-llama/Llama-3.3-70B-Instruct",
            "Q8_0",
        ),
    ],
)
def test_gguf_names_are_matched_to_the_catalog_and_the_match_is_shown(
    ref: str, model_id: str, quant: str | None
) -> None:
    assert is_gguf_reference(ref)
    resolved = resolve_model(ref, offline=True)
    assert resolved.origin == "gguf"
    assert resolved.spec.name == model_id
    assert model_id in resolved.detail
    assert resolved.spec.dtype == "float16"
    if quant:
        assert f"with {quant} weights" in resolved.detail
        assert resolved.spec.quantization is not None
        assert resolved.spec.quantization.method == f"gguf:{quant}"


def test_an_unmatched_gguf_name_says_what_to_do() -> None:
    with pytest.raises(KvlintError) as info:
        resolve_model("/models/my-private-finetune-Q4_K_M.gguf", offline=True)
    message = str(info.value)
    assert "my-private-finetune" in message and "kvlint models" in message and ".gguf" in message


def test_parse_gguf_name() -> None:
    assert parse_gguf_name("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf") == (
        "Meta-Llama-3.1-8B-Instruct",
        "Q4_K_M",
    )
    assert parse_gguf_name("org/Model-GGUF:iq4_xs") == ("Model", "IQ4_XS")
    assert parse_gguf_name("model-f16.gguf") == ("model", "F16")


def test_ollama_style_tags_are_not_gguf_references() -> None:
    assert not is_gguf_reference("gemma3:27b")
    assert not is_gguf_reference("meta-llama/Llama-3.1-8B-Instruct")
    assert resolve_model("gemma3:27b", offline=True).spec.name == "google/gemma-3-27b-it"


def test_an_mla_gguf_sizes_the_latent(tmp_path: pathlib.Path) -> None:
    """A deepseek2 GGUF as current llama.cpp converts it: key_length is the 576-wide latent,
    the per-head sizes are in key_length_mla / value_length_mla."""
    path = tmp_path / "tiny-deepseek.gguf"
    writer = gguf_package().GGUFWriter(str(path), "deepseek2")
    writer.add_block_count(3)
    writer.add_context_length(163840)
    writer.add_embedding_length(1024)
    writer.add_feed_forward_length(2048)
    writer.add_head_count(16)
    writer.add_head_count_kv(1)
    writer.add_key_length(576)
    writer.add_value_length(512)
    writer.add_key_length_mla(192)
    writer.add_value_length_mla(128)
    writer.add_kv_lora_rank(512)
    writer.add_rope_dimension_count(64)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    spec = resolve_model(str(path)).spec
    assert spec.layer_counts() == {"mla": 3}
    assert kv_size(spec).per_token_bytes == 3 * 576 * 2


def test_without_the_gguf_package_a_file_is_matched_by_name(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "gguf", None)  # `import gguf` now raises ImportError
    path = tmp_path / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
    path.write_bytes(b"GGUF")
    resolved = resolve_model(str(path))
    assert resolved.origin == "gguf"
    assert resolved.spec.name == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert "gguf package is not installed" in resolved.detail
    unknown = tmp_path / "private-model-Q8_0.gguf"
    unknown.write_bytes(b"GGUF")
    with pytest.raises(KvlintError, match=r"pip install .kvcache-lint\[gguf\]"):
        resolve_model(str(unknown))
