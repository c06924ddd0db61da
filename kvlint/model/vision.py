"""The largest image a vision tower takes: what an engine's encoder profile run feeds it.

vLLM profiles a multimodal model with dummy images "of the maximum feature size" (the V1
``profile_run``; V0's dummy sequences carry them too), so the activation peak of that run
grows with the tower's longest sequence of patches. Two layouts are read:

* Qwen2-VL and Qwen2.5-VL size an image by pixels: the processor resizes it to at most
  ``max_pixels``, in 28 x 28 squares (a 14-pixel patch, 2 x 2 patches merged into one token).
  Qwen's processor bound is 16384 tokens' worth, ``MAX_PIXELS = 16384 * 28 * 28``
  (QwenLM/Qwen2.5-VL@f0af299 qwen-vl-utils/src/qwen_vl_utils/vision_process.py; the published
  preprocessor configs say ``max_pixels: 12845056``), so the largest image is 16,384 tokens and
  65,536 patches: vLLM 0.10.2 with Qwen2-VL-2B and 0.11 with Qwen2.5-VL-3B log "Encoder cache
  will be initialized with a budget of 16384 tokens, and profiled with 1 image items".
  ``--mm-processor-kwargs '{"max_pixels": N}'`` lowers the bound (``VisionEncoder.at_max_pixels``).
* Qwen3-VL and Qwen3.5 / Qwen3.6 do the same in 32 x 32 squares (a 16-pixel patch merged 2 x 2)
  up to 16,384 tokens an image (``IMAGE_MAX_TOKEN_NUM = 16384``, max_pixels = 16384 x 32^2:
  QwenLM/Qwen3-VL@9658872 qwen-vl-utils/src/qwen_vl_utils/vision_process.py). Where a release
  profiles video instead, its items fill the same budget at the
  same four patches a token (two frames of 2 x 2 patches in each 3D patch), so the patches are
  the same. Their embeddings carry the DeepStack levels beside the last layer's (vLLM's
  visual_dim x (1 + the DeepStack levels)).
* Gemma 3's SigLIP takes one ``image_size`` square (896 / 14 = 64 x 64 = 4,096 patches), pooled
  to ``mm_tokens_per_image`` (256) soft tokens, which vLLM's prompt update wraps in "\\n\\n",
  ``<start_of_image>``, ``<end_of_image>`` and "\\n\\n": 260 tokens an image. vLLM 0.11.2 logs
  "Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 63 image
  items" for gemma-3-27b-it (GoogleCloudPlatform/kubernetes-engine-samples@2b50365
  ai-ml/nemo-rl-on-gke/nemoRL/gemma3-27b-it/logs/eval-logs.log): 16384 // 260 = 63.

Other towers (Llama 4's tiles, Pixtral's, InternViT's, Gemma 4's) return None: their weights
may be counted (kvlint.model.params), their profile is not modelled.
"""

from __future__ import annotations

from kvlint.model.families.base import ConfigView
from kvlint.model.params import qwen_vl_tower
from kvlint.model.spec import VisionEncoder

# Qwen's image processor bound (see above) and the pixels of one placeholder token at a 14-pixel
# patch merged 2 x 2.
QWEN_VL_MAX_PIXELS = 16384 * 28 * 28
QWEN3_VL_MAX_TOKENS = 16384
QWEN3_VL_TYPES = frozenset({"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"})
# The tokens vLLM's Gemma 3 prompt update adds around an image's soft tokens (see above).
GEMMA3_IMAGE_WRAPPING_TOKENS = 4
GEMMA3_TOKENS_PER_IMAGE = 256  # Gemma3Config's mm_tokens_per_image, as every checkpoint sets it


def vision_encoder(top: ConfigView, text_hidden: int) -> VisionEncoder | None:
    """The largest image of the config's vision tower, where its layout is one of the above."""
    vision = top.opt_mapping("vision_config")
    if vision is None:
        return None
    cfg = top.child(vision, "vision_config")
    model_type = top.opt_str("model_type") or ""
    tower = qwen_vl_tower(model_type, cfg, text_hidden)
    if tower is not None:
        patch = cfg.opt_int("patch_size", minimum=1) or 14
        merge = cfg.opt_int("spatial_merge_size", minimum=1) or 2
        per_token = (patch * merge) ** 2
        tokens = QWEN_VL_MAX_PIXELS // per_token
        return VisionEncoder(
            width=tower.width,
            intermediate=tower.intermediate,
            patches=tokens * merge * merge,
            tokens=tokens,
            output_width=tower.output,
            gated=tower.gated,
            rotary=True,
            max_pixels=QWEN_VL_MAX_PIXELS,
            pixels_per_token=per_token,
            patches_per_token=merge * merge,
        )
    if model_type in QWEN3_VL_TYPES:
        width = cfg.opt_int("hidden_size", minimum=1)
        intermediate = cfg.opt_int("intermediate_size", minimum=1)
        if width is None or intermediate is None:
            return None
        patch = cfg.opt_int("patch_size", minimum=1) or 16
        merge = cfg.opt_int("spatial_merge_size", minimum=1) or 2
        per_token = (patch * merge) ** 2
        levels = 1 + len(cfg.opt_list("deepstack_visual_indexes") or [])
        return VisionEncoder(
            width=width,
            intermediate=intermediate,
            patches=QWEN3_VL_MAX_TOKENS * merge * merge,
            tokens=QWEN3_VL_MAX_TOKENS,
            output_width=(cfg.opt_int("out_hidden_size", minimum=1) or text_hidden) * levels,
            rotary=True,
            max_pixels=QWEN3_VL_MAX_TOKENS * per_token,
            pixels_per_token=per_token,
            patches_per_token=merge * merge,
        )
    if model_type == "gemma3" and cfg.opt_str("model_type") == "siglip_vision_model":
        width = cfg.opt_int("hidden_size", minimum=1)
        image = cfg.opt_int("image_size", minimum=1)
        if width is None or image is None:
            return None
        patch = cfg.opt_int("patch_size", minimum=1) or 14
        soft = top.opt_int("mm_tokens_per_image", minimum=1) or GEMMA3_TOKENS_PER_IMAGE
        return VisionEncoder(
            width=width,
            intermediate=cfg.opt_int("intermediate_size", minimum=1) or 4 * width,
            patches=(image // patch) ** 2,
            tokens=soft + GEMMA3_IMAGE_WRAPPING_TOKENS,
            output_width=text_hidden,
        )
    return None
