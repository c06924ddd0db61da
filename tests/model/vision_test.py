"""The largest image of each vision tower kvlint reads (kvlint/model/vision.py)."""

from __future__ import annotations

from kvlint.model.catalog import lookup
from kvlint.model.spec import VisionEncoder
from kvlint.model.vision import QWEN_VL_MAX_PIXELS


def _encoder(model: str) -> VisionEncoder:
    spec = lookup(model)
    assert spec is not None and spec.vision_encoder is not None
    return spec.vision_encoder


def test_qwen_vl_towers_take_16384_tokens_of_65536_patches() -> None:
    # Qwen's processor bound, 16384 * 28 * 28 pixels (qwen-vl-utils MAX_PIXELS): vLLM logs "a
    # budget of 16384 tokens, and profiled with 1 image items" for Qwen2-VL-2B and Qwen2.5-VL.
    qwen2 = _encoder("Qwen/Qwen2-VL-2B-Instruct")
    assert (qwen2.tokens, qwen2.patches, qwen2.width, qwen2.intermediate) == (
        16384,
        65536,
        1280,
        5120,
    )
    assert not qwen2.gated and qwen2.rotary and qwen2.output_width == 1536
    qwen25 = _encoder("Qwen/Qwen2.5-VL-7B-Instruct")
    assert (qwen25.tokens, qwen25.patches, qwen25.intermediate) == (16384, 65536, 3420)
    assert qwen25.gated and qwen25.output_width == 3584
    assert qwen25.max_pixels == QWEN_VL_MAX_PIXELS == 12845056


def test_max_pixels_from_the_processor_kwargs_shrinks_the_image() -> None:
    qwen = _encoder("Qwen/Qwen2.5-VL-7B-Instruct")
    smaller = qwen.at_max_pixels(1280 * 28 * 28)  # the README's example bound
    assert (smaller.tokens, smaller.patches) == (1280, 5120)
    assert qwen.at_max_pixels(None) == qwen and qwen.at_max_pixels(0) == qwen


def test_gemma3_siglip_takes_one_896_square_as_260_tokens() -> None:
    # 64 x 64 patches of 14 pixels pooled to 256 soft tokens, wrapped in four more: vLLM 0.11.2
    # profiles 63 images at a 16,384-token budget (16384 // 260).
    gemma = _encoder("google/gemma-3-27b-it")
    assert (gemma.patches, gemma.tokens, gemma.width, gemma.intermediate) == (4096, 260, 1152, 4304)
    assert not gemma.gated and not gemma.rotary and gemma.output_width == 5376
    assert gemma.at_max_pixels(1003520) == gemma  # a fixed square: no pixel bound to change


def test_towers_of_other_layouts_have_no_profile_and_text_models_no_tower() -> None:
    scout = lookup("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    text = lookup("meta-llama/Meta-Llama-3.1-8B")
    assert scout is not None and scout.vision_param_count and scout.vision_encoder is None
    assert text is not None and text.vision_encoder is None


def test_qwen3_vl_and_qwen35_towers_take_16384_tokens_in_32_pixel_squares() -> None:
    # qwen-vl-utils' IMAGE_MAX_TOKEN_NUM = 16384 at a 16-pixel patch merged 2 x 2; the
    # embeddings carry the three DeepStack levels beside the last layer's (2048 x 4).
    qwen3 = _encoder("Qwen/Qwen3-VL-30B-A3B-Instruct")
    assert (qwen3.tokens, qwen3.patches, qwen3.max_pixels) == (16384, 65536, 16384 * 32 * 32)
    assert qwen3.rotary and not qwen3.gated and qwen3.output_width == 2048 * 4
    qwen35 = _encoder("Qwen/Qwen3.6-27B")
    assert (qwen35.width, qwen35.intermediate, qwen35.output_width) == (1152, 4304, 5120)
    assert qwen35.at_max_pixels(1280 * 32 * 32).tokens == 1280  # the README's image budget
