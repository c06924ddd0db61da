"""Derivatives by name: a catalog name followed only by known suffixes, and Ollama tags."""

from __future__ import annotations

import pytest

from kvlint.arith.kv import kv_size
from kvlint.errors import ModelNotResolved
from kvlint.model import catalog
from kvlint.model import derive
from kvlint.model.resolve import resolve_model


@pytest.mark.parametrize(
    ("ref", "taken_as"),
    [
        ("unsloth/Qwen2.5-7B-Instruct-bnb-4bit",
         "Qwen/Qwen2.5-7B-Instruct with bitsandbytes 4-bit weights"),
        ("mlx-community/Llama-3.2-3B-Instruct-4bit",
         "meta-llama/Llama-3.2-3B-Instruct with MLX 4-bit weights"),
        ("hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4",
         "meta-llama/Meta-Llama-3.1-8B-Instruct with GPTQ 4-bit weights"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-7B-Instruct with GPTQ 8-bit weights"),
        ("TheBloke/Llama-2-7B-Chat-AWQ", "meta-llama/Llama-2-7b-chat-hf with AWQ 4-bit weights"),
        ("RedHatAI/Qwen3-32B-quantized.w4a16",
         "Qwen/Qwen3-32B with compressed-tensors 4-bit weights"),
        ("nm-testing/Qwen3-8B-W8A8", "Qwen/Qwen3-8B with compressed-tensors 8-bit weights"),
        ("nvidia/Llama-3.3-70B-Instruct-NVFP4",
         "meta-llama/Llama-3.3-70B-Instruct with NVFP4 4.5-bit weights"),
        ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "meta-llama/Meta-Llama-3.1-8B-Instruct"),
        ("Qwen/Qwen2.5-7B-Instruct-Q4_K_M", "Qwen/Qwen2.5-7B-Instruct with Q4_K_M weights"),
        ("google/gemma-3-27b-it-qat-q4_0-unquantized", "google/gemma-3-27b-it"),
        ("unsloth/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B-Instruct"),  # a mirror
        ("QuantTrio/Qwen3-235B-A22B-Instruct-2507-AWQ",
         "Qwen/Qwen3-235B-A22B-Instruct-2507 with AWQ 4-bit weights"),  # now a catalog entry
    ],
)  # fmt: skip
def test_a_catalog_name_with_known_suffixes(ref: str, taken_as: str) -> None:
    found = derive.derive(ref)
    assert found is not None
    assert derive.describe(found) == taken_as


@pytest.mark.parametrize(
    "ref",
    [
        "NousResearch/Hermes-3-Llama-3.1-8B",  # words of its own before the name
        "acme/Qwen2.5-7B-Instruct-customer-support",  # and after it
        "acme/Qwen2.5-3B-Instruct-1M",  # a different model with a longer context (none at 3B)
        "mistralai/Mistral-7B-Instruct-v0.9",  # a version the catalog does not have
        "acme/not-a-model",
        "",
    ],
)
def test_a_name_with_words_of_its_own_is_not_guessed(ref: str) -> None:
    assert derive.derive(ref) is None


def test_the_stated_weights_and_the_architecture() -> None:
    found = derive.derive("TheBloke/Llama-2-7B-Chat-AWQ")
    assert found is not None
    spec = derive.spec_of(found)
    base = catalog.lookup("meta-llama/Llama-2-7b-chat-hf")
    assert base is not None and spec.layers == base.layers
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.weight_bits) == ("awq", 4)
    assert spec.dtype == "float16"  # AWQ checkpoints are float16: so is an `auto` cache
    gguf = derive.spec_of(derive.derive("Qwen/Qwen2.5-7B-Instruct-Q4_K_M"))  # type: ignore[arg-type]
    assert gguf.dtype == "float16" and gguf.quantization is not None
    assert gguf.quantization.weight_bits == pytest.approx(4.89)


@pytest.mark.parametrize(
    ("tag", "taken_as"),
    [
        ("llama3.1:8b-instruct-q4_K_M",
         "meta-llama/Meta-Llama-3.1-8B-Instruct with Q4_K_M weights"),
        ("llama3.1:70b-instruct-fp16", "meta-llama/Meta-Llama-3.1-70B-Instruct with F16 weights"),
        ("llama3.1", "meta-llama/Meta-Llama-3.1-8B-Instruct with Q4_K_M weights"),  # latest
        ("qwen3:latest", "Qwen/Qwen3-8B with Q4_K_M weights"),
        ("mistral", "mistralai/Mistral-7B-v0.3 with Q4_K_M weights"),
        ("phi4", "microsoft/phi-4 with Q4_K_M weights"),
        ("gemma3:27b-it-qat", "google/gemma-3-27b-it with Q4_0 weights"),  # QAT tags are Q4_0
        ("registry.ollama.ai/library/llama3.2:3b",
         "meta-llama/Llama-3.2-3B-Instruct with Q4_K_M weights"),
        ("deepseek-r1:32b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B with Q4_K_M weights"),
        ("qwen2.5-coder", "Qwen/Qwen2.5-Coder-7B-Instruct with Q4_K_M weights"),
        ("codellama:34b-instruct-q8_0", "codellama/CodeLlama-34b-Instruct-hf with Q8_0 weights"),
        ("smollm2:135m", "HuggingFaceTB/SmolLM2-135M-Instruct with Q4_K_M weights"),
        ("falcon3", "tiiuae/Falcon3-7B-Instruct with Q4_K_M weights"),
        ("phi4-mini", "microsoft/Phi-4-mini-instruct with Q4_K_M weights"),
    ],
)  # fmt: skip
def test_ollama_tags(tag: str, taken_as: str) -> None:
    found = derive.derive(tag)
    assert found is not None and found.stated.gguf
    assert derive.describe(found) == taken_as


def test_an_ollama_tag_of_a_library_model_kvlint_does_not_know_is_not_guessed() -> None:
    assert derive.derive("moondream:1.8b") is None
    assert derive.derive("deepseek-r1:8b") is None  # since 2025-05 the R1-0528 Qwen3-8B distill
    assert derive.derive("llama3.1:8b-instruct-abliterated") is None


def test_resolution_says_it_was_by_name_and_the_catalog_is_read_first() -> None:
    resolved = resolve_model("unsloth/Qwen2.5-7B-Instruct-bnb-4bit", offline=True)
    assert resolved.by_name == "Qwen/Qwen2.5-7B-Instruct with bitsandbytes 4-bit weights"
    assert kv_size(resolved.spec).per_token_bytes == 28 * 4 * 128 * 2 * 2
    exact = resolve_model("Qwen/Qwen2.5-7B-Instruct", offline=True)
    assert exact.by_name == "" and exact.origin == "catalog"
    ollama = resolve_model("llama3.1:8b-instruct-q4_K_M", offline=True)
    assert ollama.spec.quantization is not None
    assert ollama.spec.quantization.method == "gguf:Q4_K_M"


def test_a_container_path_ending_in_a_derivative_name() -> None:
    resolved = resolve_model("/models/Qwen2.5-7B-Instruct-GPTQ-Int4/", offline=True)
    assert resolved.by_name == "Qwen/Qwen2.5-7B-Instruct with GPTQ 4-bit weights"
    assert "is not on this machine" in resolved.detail
    with pytest.raises(ModelNotResolved):
        resolve_model("/models/Qwen2.5-7B-Instruct-custom-dir/", offline=True)
