"""Parameter-count estimates within 3% of the published counts."""

from __future__ import annotations

import pytest

from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.model.catalog import lookup
from kvlint.model.hf import load_config_file
from kvlint.model.hf import spec_from_config
from kvlint.model.spec import ModelSpec
from kvlint.units import GiB
from testing.shared import HF_CONFIGS
from testing.shared import shared_file


def fixture(name: str) -> ModelSpec:
    return load_config_file(shared_file(HF_CONFIGS / f"{name}.json"))


def near(value: int | None, published: float) -> bool:
    assert value is not None
    return abs(value - published) <= 0.03 * published


@pytest.mark.parametrize(
    ("name", "total"),
    [
        ("meta-llama__Meta-Llama-3.1-8B", 8.03e9),
        ("meta-llama__Meta-Llama-3.1-70B", 70.6e9),
        ("meta-llama__Meta-Llama-3.1-405B", 405.8e9),
        ("mistralai__Mixtral-8x7B-v0.1", 46.7e9),
        ("deepseek-ai__DeepSeek-V3", 671e9),
        ("Qwen__Qwen3-30B-A3B", 30.5e9),
        ("openai__gpt-oss-120b", 116.83e9),
        ("openai__gpt-oss-20b", 20.91e9),
        ("moonshotai__Kimi-K2-Instruct", 1.04e12),
        ("Qwen__Qwen3-235B-A22B", 235e9),
        ("nvidia__Nemotron-H-56B-Base-8K", 56e9),
    ],
)
def test_total(name: str, total: float) -> None:
    assert near(fixture(name).param_count, total)


@pytest.mark.parametrize(
    ("name", "active"),
    [
        # Active counts leave the input embedding out (a lookup), as OpenAI and DeepSeek count.
        ("openai__gpt-oss-120b", 5.13e9),
        ("openai__gpt-oss-20b", 3.61e9),
        ("deepseek-ai__DeepSeek-V3", 37e9),
        ("mistralai__Mixtral-8x7B-v0.1", 12.9e9),
        ("Qwen__Qwen3-235B-A22B", 22e9),
    ],
)
def test_active(name: str, active: float) -> None:
    assert near(fixture(name).active_param_count, active)


def test_qwen3_30b_a3b_active_with_embeddings() -> None:
    # Qwen counts the embedding table in its 3.3B activated parameters.
    spec = fixture("Qwen__Qwen3-30B-A3B")
    assert spec.active_param_count is not None
    assert near(spec.active_param_count + spec.vocab_size * spec.hidden_size, 3.3e9)
    assert spec.num_experts == 128


def test_dense_models_have_no_active_count() -> None:
    assert fixture("meta-llama__Meta-Llama-3.1-8B").active_param_count is None


def test_minimal_llama_31_8b() -> None:
    config = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
              "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
              "vocab_size": 128256}  # fmt: skip
    spec = spec_from_config(config, name="m")
    # 32 x (attention 4096 x (4096 + 1024 + 1024 + 4096) + MLP 3 x 4096 x 14336) + 2 embeddings
    assert spec.param_count == 32 * (4096 * 10240 + 3 * 4096 * 14336) + 2 * 128256 * 4096
    tied = spec_from_config({**config, "tie_word_embeddings": True}, name="m")
    assert spec.param_count - (tied.param_count or 0) == 128256 * 4096


def test_minimal_mixtral_8x7b() -> None:
    config = {"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096,
              "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
              "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000}  # fmt: skip
    spec = spec_from_config(config, name="m")
    assert near(spec.param_count, 46.7e9)
    assert near(spec.active_param_count, 12.9e9)
    assert spec.num_experts == 8


@pytest.mark.parametrize(
    ("ref", "total"),
    [
        # The catalog once sized each of V2-Lite's 64 experts at 4 x hidden (87B): the entry
        # lacked moe_intermediate_size.
        ("deepseek-ai/DeepSeek-V2-Lite", 15.7e9),
        ("deepseek-ai/DeepSeek-V2", 236e9),
        # Gemma ties its embeddings without saying so in config.json (the class default).
        ("google/gemma-2-27b-it", 27.2e9),
        ("google/gemma-2-9b-it", 9.24e9),
        # Llama 4: one shared expert per MoE layer; the 128E model's dense layers are
        # intermediate_size_mlp wide (109B and 400B published, vision tower included).
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 109e9),
        ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 400e9),
    ],
)
def test_catalog_total(ref: str, total: float) -> None:
    spec = lookup(ref)
    assert spec is not None
    assert near((spec.param_count or 0) + (spec.vision_param_count or 0), total)


# SigLIP (Gemma 3): 27 x (4 x 1152^2 + 2 x 1152 x 4304) + 3 x 14^2 x 1152 + 64^2 x 1152, and the
# projector 1152 x the text hidden size. Llama 4: 34 x (4 x 1408^2 + 2 x 1408 x 5632), the
# patch and 24^2 position embeddings, the pixel-shuffle MLP (5632 x 4096 + 4096 x 4096) and the
# projector 4096 x 5120.
SIGLIP = 27 * (4 * 1152**2 + 2 * 1152 * 4304) + 3 * 14 * 14 * 1152 + 64 * 64 * 1152
LLAMA4_VISION = (
    34 * (4 * 1408**2 + 2 * 1408 * 5632)
    + 3 * 14 * 14 * 1408
    + 24 * 24 * 1408
    + 5632 * 4096
    + 4096 * 4096
    + 4096 * 5120
)

# Qwen2-VL: a 3 x 2 x 14^2 x 1280 Conv3d, 32 blocks of 4 x 1280^2 + 2 x 1280 x 5120, and the
# merger 5120^2 + 5120 x the text width; Qwen2.5-VL's blocks gate their MLP (3 x 1280 x 3420).
QWEN2_VL_TOWER = 3 * 2 * 14 * 14 * 1280 + 32 * (4 * 1280**2 + 2 * 1280 * 5120) + 5120**2
QWEN25_VL_TOWER = 3 * 2 * 14 * 14 * 1280 + 32 * (4 * 1280**2 + 3 * 1280 * 3420) + 5120**2
# Qwen3-VL-30B-A3B: a 3 x 2 x 16^2 x 1152 Conv3d with its bias, 2,304 learned positions, 27
# blocks of 4 x 1152^2 + 2 x 1152 x 4304, and four mergers of 4608^2 + 4608 x 2048 (the final
# one and the DeepStack ones at blocks 8, 16 and 24); Qwen3.5's tower has no DeepStack.
QWEN3_VL_30B_TOWER = (
    3 * 2 * 16 * 16 * 1152
    + 1152
    + 2304 * 1152
    + 27 * (4 * 1152**2 + 2 * 1152 * 4304)
    + 4 * (4608**2 + 4608 * 2048)
)


@pytest.mark.parametrize(
    ("ref", "vision", "total"),
    [
        # The Hub's safetensors counts: Qwen2-VL-2B-Instruct 2,208,985,600 parameters,
        # Qwen2.5-VL-7B-Instruct 8,292,166,656 (norms and biases are the rest).
        ("Qwen/Qwen2-VL-2B-Instruct", QWEN2_VL_TOWER + 5120 * 1536, 2.209e9),
        ("Qwen/Qwen2.5-VL-7B-Instruct", QWEN25_VL_TOWER + 5120 * 3584, 8.292e9),
        # Google's model cards: 4.3B and 27.4B with the vision encoder (400M).
        ("google/gemma-3-4b-it", SIGLIP + 1152 * 2560, 4.30e9),
        ("google/gemma-3-27b-it", SIGLIP + 1152 * 5376, 27.4e9),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", LLAMA4_VISION, 109e9),
        # The Hub's model pages: Qwen3-VL-30B-A3B-Instruct 31.1B, Qwen3-VL-8B-Instruct 8.8B
        # (rounded to 0.1B: 1%).
        ("Qwen/Qwen3-VL-30B-A3B-Instruct", QWEN3_VL_30B_TOWER, 31.1e9),
        (
            "Qwen/Qwen3-VL-8B-Instruct",
            QWEN3_VL_30B_TOWER - 4 * 4608 * 2048 + 4 * 4608 * 4096,
            8.8e9,
        ),
    ],
)
def test_vision_tower(ref: str, vision: int, total: float) -> None:
    spec = lookup(ref)
    assert spec is not None and spec.param_count is not None
    assert spec.vision_param_count == vision
    assert abs(spec.param_count + vision - total) <= 0.01 * total


def test_real_qwen2_vl_weights_include_the_vision_tower() -> None:
    # mrpid12org/imageworks (vLLM 0.10.2, Qwen2-VL-2B-Instruct in bf16 on a 16 GB card): "Model
    # loading took 4.1513 GiB"; the language model alone is 2.88 GiB. 2% for norms and biases.
    spec = lookup("Qwen/Qwen2-VL-2B-Instruct")
    assert spec is not None
    weights = weight_bytes_per_gpu(spec)
    assert abs(weights / GiB - 4.1513) / 4.1513 <= 0.02


def test_a_qwen_vl_config_without_the_tower_keys_takes_the_config_class_defaults() -> None:
    text = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100}  # fmt: skip
    bare = spec_from_config({**text, "model_type": "qwen2_vl", "vision_config": {}}, name="m")
    assert bare.vision_param_count == QWEN2_VL_TOWER + 5120 * 64
    small = {"depth": 2, "embed_dim": 16, "mlp_ratio": 2, "hidden_size": 64, "patch_size": 2}
    spec = spec_from_config({**text, "model_type": "qwen2_vl", "vision_config": small}, name="m")
    assert spec.vision_param_count == 3 * 2 * 2 * 2 * 16 + 2 * (4 * 16**2 + 2 * 16 * 32) + (
        64**2 + 64 * 64
    )


def test_a_vision_tower_of_another_layout_is_not_guessed() -> None:
    text = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
            "vocab_size": 100}  # fmt: skip
    vision = {"model_type": "pixtral", "hidden_size": 32, "num_hidden_layers": 2}
    config = {"model_type": "llava", "text_config": text, "vision_config": vision}
    assert spec_from_config(config, name="m").vision_param_count is None
    assert spec_from_config(text, name="m").vision_param_count is None


def test_llama4_shared_expert_and_dense_width() -> None:
    config = {"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 64,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "intermediate_size": 32, "intermediate_size_mlp": 128, "num_local_experts": 4,
              "interleave_moe_layer_step": 2, "vocab_size": 100}  # fmt: skip
    spec = spec_from_config(config, name="m")
    attention = 64 * (2 * 4 * 16 + 2 * 2 * 16)
    moe = 4 * 3 * 64 * 32 + 3 * 64 * 32 + 64 * 4  # experts, the shared expert, the router
    dense = 3 * 64 * 128
    assert spec.param_count == 4 * attention + 2 * moe + 2 * dense + 2 * 100 * 64


def test_tie_word_embeddings_absent_is_the_class_default() -> None:
    base = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
            "vocab_size": 1000}  # fmt: skip
    assert spec_from_config({**base, "model_type": "gemma2"}, name="m").tie_word_embeddings
    assert not spec_from_config({**base, "model_type": "llama"}, name="m").tie_word_embeddings
    explicit = {**base, "model_type": "gemma2", "tie_word_embeddings": False}
    assert not spec_from_config(explicit, name="m").tie_word_embeddings


def test_nemotron_3_latent_moe_experts_work_in_the_latent_width() -> None:
    # Nemotron 3 Super / Ultra route each token through experts of moe_latent_size, not the
    # hidden size: the names state the totals (120B with 12B active; 550B with 55B active).
    from kvlint.model import catalog

    for ref, total, active in (
        ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120e9, 12e9),
        ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550e9, 55e9),
    ):
        spec = catalog.lookup(ref)
        assert spec is not None and spec.param_count and spec.active_param_count
        assert abs(spec.param_count / total - 1) < 0.03, ref
        assert abs(spec.active_param_count / active - 1) < 0.05, ref


def test_qwen3_vl_tower_is_counted_only_where_its_depth_is_stated() -> None:
    # Qwen3-VL-235B-A22B-Thinking's catalog copy is the older aiconfigurator file (patch 14, no
    # DeepStack key); a config trimmed to the widths names no depth and is left uncounted.
    older = lookup("Qwen/Qwen3-VL-235B-A22B-Thinking")
    assert older is not None and older.vision_param_count is not None
    from kvlint.model.families.base import ConfigView
    from kvlint.model.params import estimate_vision_params

    trimmed = {
        "model_type": "qwen3_vl",
        "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_heads": 16},
    }
    assert estimate_vision_params(ConfigView(trimmed, path="config.json"), 4096) is None


def test_real_qwen3_vl_weights_include_the_vision_tower() -> None:
    # Zzsf11/VideoCuttingAgent@dbf8adf vllm_serve.log: vLLM 0.12.0, Qwen3-VL-30B-A3B-Instruct
    # in bf16 at TP 2 on H100s, "Model loading took 29.3115 GiB memory" on a rank; the language
    # model's share is 28.44 GiB (-3.0%). The tower is split with the rest (vLLM's default
    # mm_encoder_tp_mode "weights"): 2% for norms, biases and what a rank keeps whole.
    spec = lookup("Qwen/Qwen3-VL-30B-A3B-Instruct")
    assert spec is not None
    weights = weight_bytes_per_gpu(spec, tp=2) / GiB
    assert abs(weights - 29.3115) / 29.3115 <= 0.02


# Pixtral under Mistral 3's projector: a 3 x 14^2 x 1024 patch convolution, 24 blocks of
# 4 x 1024^2 + 3 x 1024 x 4096, the 2 x 2 patch merger (4096 x 1024) and two layers into the
# 5,120-wide language model.
PIXTRAL_MISTRAL3 = (
    3 * 14 * 14 * 1024
    + 24 * (4 * 1024**2 + 3 * 1024 * 4096)
    + 4096 * 1024
    + 1024 * 5120
    + 5120 * 5120
)


def test_mistral3_pixtral_tower_and_the_real_weights_on_0_19() -> None:
    # Mistral-Small-3.1-24B-Instruct-2503: the model card's 24B parameters with the tower.
    # llm-d-incubation/llm-d-planner@d3121e0 (accuracy/results/v0.19.0/logs, H100, TP 1, bf16):
    # "Model loading took 44.76 GiB memory"; the language model alone is 43.91 GiB (-1.9%).
    spec = lookup("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    assert spec is not None and spec.param_count is not None
    assert spec.vision_param_count == PIXTRAL_MISTRAL3
    assert abs(spec.param_count + PIXTRAL_MISTRAL3 - 24.0e9) <= 0.01 * 24.0e9
    weights = weight_bytes_per_gpu(spec) / GiB
    # 0.5%: norms and biases are not counted
    assert abs(weights - 44.76) / 44.76 <= 0.005
