"""A parameter-count estimate from the config: total, and active per token for MoE models.

Counts the matrices (embeddings, attention or MLA projections, MLPs, experts, routers, the
linear-attention / Mamba mixers); norms and biases are left out (well under 0.1%).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from kvlint.model.families.base import Architecture
from kvlint.model.families.base import ConfigView
from kvlint.model.families.nemotron_h import layer_pattern
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerParams
from kvlint.model.spec import LayerSpec

EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "experts_per_token", "top_k_experts", "moe_top_k")
INTERMEDIATE_KEYS = ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim")

# Two-matrix MLPs (up, down); every other family gates (gate, up, down).
UNGATED_MLP = frozenset(
    {"gpt2", "gpt_bigcode", "falcon", "gpt_neox", "gptj", "bloom", "opt", "mpt", "phi",
     "starcoder2", "nemotron_h", "nemotron", "dbrx"}
)  # fmt: skip


_LLAMA4 = frozenset({"llama4", "llama4_text"})


@dataclass(frozen=True)
class ParamEstimate:
    """A model's parameter counts as estimated from its config."""

    total: int | None
    active: int | None
    num_experts: int | None
    intermediate_size: int | None
    routed_experts: int | None = None  # the routed experts' parameters, in ``total``
    # Each decoder layer's parameters by role (the embeddings and head apart); empty where the
    # family's count is not layer by layer (Gemma 3n / 4 E-models' per-layer inputs).
    layers: tuple[LayerParams, ...] = ()


def estimate_params(
    cfg: ConfigView, arch: Architecture, model_type: str, *, vocab: int, tie: bool
) -> ParamEstimate:
    shape = arch.shape
    hidden = shape.hidden_size
    intermediate = cfg.opt_int_of(INTERMEDIATE_KEYS, minimum=0) or 4 * hidden
    experts = cfg.opt_int_of(EXPERT_KEYS, minimum=0) or None
    top_k = cfg.opt_int_of(TOP_K_KEYS, minimum=0) or (2 if experts else None)
    mlp_matrices = 2 if model_type in UNGATED_MLP else 3
    # Llama 4's dense layers (the 128E model interleaves them) use intermediate_size_mlp, its
    # experts intermediate_size (transformers Llama4TextDecoderLayer; the config's default 16384).
    dense_size = intermediate
    if model_type == "qwen":
        # Qwen (1)'s `intermediate_size` counts both gated halves: its MLP is w1, w2 (hidden ->
        # intermediate / 2) and c_proj back (Qwen's modeling_qwen.py QWenMLP, ff_dim_in).
        dense_size = intermediate // 2
    if model_type in _LLAMA4:
        dense_size = cfg.opt_int("intermediate_size_mlp", minimum=0) or 16384
    dense_mlp = mlp_matrices * hidden * dense_size

    embed = vocab * hidden
    head = 0 if tie else vocab * hidden
    total = embed + head
    routed = 0
    active = head  # the input embedding is a lookup, not compute
    per_layer: list[LayerParams] = []
    for index, layer in enumerate(arch.layers):
        mixer = _mixer_params(cfg, shape.hidden_size, shape.num_attention_heads, layer)
        total += mixer
        active += mixer
        if model_type == "nemotron_h":
            per_layer.append(_nemotron_layer(cfg, hidden, intermediate, experts, index, mixer))
            continue  # its MLPs are separate layers: see _nemotron_mlp
        if model_type == "nemotron-nas":
            mlp = _nas_mlp(cfg, hidden, index)
            total += mlp
            active += mlp
            per_layer.append(LayerParams(mixer=mixer, mlp=mlp))
            continue
        if experts and _is_moe_layer(cfg, index):
            expert_size = cfg.opt_int("moe_intermediate_size", minimum=0) or intermediate
            one = mlp_matrices * hidden * expert_size
            shared = _shared_expert_params(cfg, hidden, expert_size, mlp_matrices)
            if model_type in _LLAMA4:
                # Llama4TextMoe always adds one shared expert of the experts' size; the config
                # has no key for it (transformers models/llama4/modeling_llama4.py).
                shared = mlp_matrices * hidden * expert_size
            router = hidden * experts
            total += experts * one + shared + router
            routed += experts * one
            active += (top_k or 1) * one + shared + router
            beside = 0
            if cfg.opt_bool("enable_moe_block"):  # Gemma 4: a dense MLP beside the experts
                total += dense_mlp
                active += dense_mlp
                beside = dense_mlp
            per_layer.append(LayerParams(mixer, beside, shared, 0, experts * one, router))
        else:
            # Gemma 4 E2B: the layers that reuse an earlier layer's cache have an MLP twice as
            # wide (google-deepmind/gemma gemma4/_gemma4.py: override_kv_shared_ffw_hidden =
            # embed_dim x 4 x 2 when override_ffw_hidden_for_kv_cache_sharing)
            wide = (
                2 if layer.kind is CacheKind.SHARED and cfg.opt_bool("use_double_wide_mlp") else 1
            )
            total += wide * dense_mlp
            active += wide * dense_mlp
            per_layer.append(LayerParams(mixer=mixer, mlp=wide * dense_mlp))
    shares = any(layer.kind is CacheKind.SHARED for layer in arch.layers)
    per_layer_table, per_layer_compute = _per_layer_input_params(
        cfg, hidden, len(arch.layers), vocab, shares=shares
    )
    total += per_layer_table + per_layer_compute
    active += per_layer_compute
    if per_layer_table or per_layer_compute:
        per_layer = []  # not layer by layer: the per-layer inputs are one table
    if model_type == "nemotron_h":
        extra_total, extra_active = _nemotron_mlp(cfg, hidden, intermediate, experts, top_k)
        total += extra_total
        active += extra_active
        routed += _nemotron_routed(cfg, hidden, intermediate, experts)
    return ParamEstimate(
        total=total,
        active=active if experts else None,
        num_experts=experts,
        intermediate_size=intermediate,
        routed_experts=routed if experts else None,
        layers=tuple(per_layer),
    )


def _nemotron_layer(
    cfg: ConfigView, hidden: int, intermediate: int, experts: int | None, index: int, mixer: int
) -> LayerParams:
    """Nemotron-H layer ``index`` by role: a Mamba or attention mixer, a dense MLP (``-``) or a
    (latent) MoE (``E``), as ``hybrid_override_pattern`` lays them out (see _nemotron_mlp)."""
    pattern = layer_pattern(cfg) or ""
    kind = pattern[index] if index < len(pattern) else ""
    if kind == "-":
        return LayerParams(mixer=mixer, mlp=2 * hidden * intermediate)
    if kind != "E" or not experts:
        return LayerParams(mixer=mixer)
    size = cfg.opt_int("moe_intermediate_size") or intermediate
    width = _expert_width(cfg, hidden)
    shared = (
        (cfg.opt_int("n_shared_experts") or 0)
        * 2
        * hidden
        * (cfg.opt_int("moe_shared_expert_intermediate_size") or size)
    )
    latent = 2 * hidden * width if width != hidden else 0
    return LayerParams(mixer, 0, shared, latent, experts * 2 * width * size, hidden * experts)


def _per_layer_input_params(
    cfg: ConfigView, hidden: int, layers: int, vocab: int, *, shares: bool
) -> tuple[int, int]:
    """Gemma 3n / Gemma 4 E-models' per-layer inputs: a second embedding table of
    ``hidden_size_per_layer_input`` per layer, a projection from the hidden state to it, and in
    each layer a gate and a projection back (google-deepmind/gemma gemma4/_modules.py:
    ``(vocab_size, num_layers, per_layer_input_dim)``, ``(embed_dim, num_layers,
    per_layer_input_dim)``, and per block ``(embed_dim, per_layer_input_dim)`` and
    ``(per_layer_input_dim, embed_dim)``). The table is weights on the GPU but a lookup, not
    compute: (table, the rest)."""
    if not shares:  # only the E-models have them, and they all reuse caches: the 26B and 31B
        return 0, 0  # configs say `hidden_size_per_layer_input: 0`, left unread (and unkept)
    per_layer = cfg.opt_int("hidden_size_per_layer_input", minimum=0) or 0
    if not per_layer:
        return 0, 0
    table_vocab = cfg.opt_int("vocab_size_per_layer_input", minimum=1) or vocab
    table = table_vocab * layers * per_layer
    return table, hidden * layers * per_layer + layers * 2 * hidden * per_layer


def _mixer_params(cfg: ConfigView, hidden: int, heads: int, layer: LayerSpec) -> int:
    """Attention, MLA, or linear-attention / Mamba mixer weights of one layer."""
    if layer.kind is CacheKind.MLA:
        return _mla_params(cfg, hidden, heads)
    if layer.kind is CacheKind.STATE:
        return _state_params(cfg, hidden)
    if layer.kind is CacheKind.NONE:
        return 0
    head_dim = layer.head_dim_k
    kv_matrices = 1 if layer.kind is CacheKind.FULL_KV_SHARED else 2
    q_and_o = 2 * hidden * heads * head_dim
    params = q_and_o + kv_matrices * hidden * layer.kv_heads * head_dim
    return params + (_state_params(cfg, hidden) if layer.state_elements else 0)


def _mla_params(cfg: ConfigView, hidden: int, heads: int) -> int:
    """DeepSeek V2/V3 attention: low-rank Q and a shared KV latent (modeling_deepseek.py)."""
    q_lora = cfg.opt_int("q_lora_rank") or 0
    kv_lora = cfg.opt_int("kv_lora_rank") or 0
    nope = cfg.opt_int("qk_nope_head_dim") or 0
    rope = cfg.opt_int("qk_rope_head_dim") or 0
    v_head = cfg.opt_int("v_head_dim") or nope
    q_head = nope + rope
    q = hidden * q_lora + q_lora * heads * q_head if q_lora else hidden * heads * q_head
    kv_a = hidden * (kv_lora + rope)
    kv_b = kv_lora * heads * (nope + v_head)
    o = heads * v_head * hidden
    return q + kv_a + kv_b + o


def _state_params(cfg: ConfigView, hidden: int) -> int:
    """A linear-attention (gated DeltaNet) or Mamba-2 / Mamba-1 mixer, roughly."""
    nk = cfg.opt_int("linear_num_key_heads")
    if nk:
        nv = cfg.opt_int("linear_num_value_heads") or nk
        dk = cfg.opt_int("linear_key_head_dim") or 128
        dv = cfg.opt_int("linear_value_head_dim") or 128
        key_dim, value_dim = nk * dk, nv * dv
        return hidden * (2 * key_dim + 2 * value_dim + 2 * nv) + value_dim * hidden
    heads = cfg.opt_int_of(("mamba_num_heads", "mamba_n_heads"))
    head_dim = cfg.opt_int_of(("mamba_head_dim", "mamba_d_head"))
    state = cfg.opt_int_of(("ssm_state_size", "mamba_d_state", "state_size"), minimum=0) or 16
    if heads and head_dim:
        inner = heads * head_dim
        groups = cfg.opt_int_of(("n_groups", "mamba_n_groups")) or 1
        return hidden * (2 * inner + 2 * groups * state + heads) + inner * hidden
    expand = cfg.opt_int_of(("mamba_expand", "expand")) or 2
    inner = expand * hidden
    rank = cfg.opt_int_of(("mamba_dt_rank", "time_step_rank")) or -(-hidden // 16)
    return hidden * 2 * inner + inner * (rank + 2 * state) + rank * inner + inner * hidden


def _is_moe_layer(cfg: ConfigView, index: int) -> bool:
    """Whether decoder layer ``index`` has experts (DeepSeek, Qwen-MoE, Llama 4 conventions)."""
    first_dense = cfg.opt_int("first_k_dense_replace") or 0
    if index < first_dense:
        return False
    freq = cfg.opt_int("moe_layer_freq") or 1
    if index % freq:
        return False
    only_dense = cfg.opt_list("mlp_only_layers") or []
    if index in only_dense:
        return False
    step = cfg.opt_int("decoder_sparse_step") or cfg.opt_int("interleave_moe_layer_step") or 1
    return (index + 1) % step == 0


def _shared_expert_params(cfg: ConfigView, hidden: int, expert_size: int, matrices: int) -> int:
    shared = cfg.opt_int("n_shared_experts") or 0
    if shared:
        return shared * matrices * hidden * expert_size
    size = cfg.opt_int("shared_expert_intermediate_size") or 0
    if size:
        return matrices * hidden * size + hidden  # Qwen's shared expert has a scalar gate
    return 0


def _nas_mlp(cfg: ConfigView, hidden: int, index: int) -> int:
    """Nemotron-NAS layer ``index``'s gated MLP, sized by its block's ``ffn_mult`` (none when
    the block's ``ffn.no_op`` is true)."""
    from kvlint.model.families.nemotron_nas import ffn_intermediate_size

    items = cfg.opt_list("block_configs") or []
    block = items[index] if index < len(items) and isinstance(items[index], Mapping) else {}
    ffn = block.get("ffn") or {}
    mult = ffn.get("ffn_mult")
    if ffn.get("no_op") or isinstance(mult, bool) or not isinstance(mult, (int, float)):
        return 0
    return 3 * hidden * ffn_intermediate_size(float(mult), hidden)


def _nemotron_routed(cfg: ConfigView, hidden: int, intermediate: int, experts: int | None) -> int:
    """The routed experts of Nemotron-H's MoE (``E``) layers."""
    if not experts:
        return 0
    size = cfg.opt_int("moe_intermediate_size") or intermediate
    pattern = layer_pattern(cfg) or ""
    return pattern.count("E") * experts * 2 * _expert_width(cfg, hidden) * size


def _expert_width(cfg: ConfigView, hidden: int) -> int:
    """The width Nemotron-H's routed experts work in: ``moe_latent_size`` for the latent MoE of
    Nemotron 3 Super and Ultra (vllm/model_executor/models/nemotron_h.py `NemotronHMoE`: the
    token is projected from the hidden size to the latent size, through the experts, and back),
    else the hidden size."""
    return cfg.opt_int("moe_latent_size", minimum=1) or hidden


def _nemotron_mlp(
    cfg: ConfigView, hidden: int, intermediate: int, experts: int | None, top_k: int | None
) -> tuple[int, int]:
    """Nemotron-H's MLP (``-``) and MoE (``E``) layers, from ``hybrid_override_pattern``."""
    pattern = layer_pattern(cfg) or ""
    dense = 2 * hidden * intermediate  # relu2, not gated
    total = active = pattern.count("-") * dense
    moe_layers = pattern.count("E")
    if moe_layers and experts:
        size = cfg.opt_int("moe_intermediate_size") or intermediate
        width = _expert_width(cfg, hidden)
        one = 2 * width * size
        latent = 2 * hidden * width if width != hidden else 0  # fc1/fc2_latent_proj
        shared = (
            (cfg.opt_int("n_shared_experts") or 0)
            * 2
            * hidden
            * (cfg.opt_int("moe_shared_expert_intermediate_size") or size)
        )
        router = hidden * experts
        total += moe_layers * (experts * one + shared + router + latent)
        active += moe_layers * ((top_k or 1) * one + shared + router + latent)
    return total, active


# Vision encoders laid out as a ViT with a plain (fc1, fc2) MLP: SiglipVisionModel (Gemma 3)
# and Llama4VisionModel (transformers' modeling_siglip.py and modeling_llama4.py).
_VISION_TYPES = frozenset({"siglip_vision_model", "llama4_vision_model"})


# Qwen2-VL's and Qwen2.5-VL's vision transformers (transformers' modeling_qwen2_vl.py
# Qwen2VisionTransformerPretrainedModel, modeling_qwen2_5_vl.py Qwen2_5_VisionTransformer...):
# a Conv3d patch embedding (channels x temporal patch x patch^2 x width, no bias), ``depth``
# blocks of fused qkv + proj (4 w^2) and an MLP, and the patch merger folding merge^2 patches
# into one token: Linear(w m^2, w m^2) then Linear(w m^2, the language model's width). Qwen2-VL's
# MLP is fc1/fc2 at ``mlp_ratio`` (2 w i), Qwen2.5-VL's gated SiLU (3 w i). A key the config
# leaves out is the config class's own default (Qwen2VLVisionConfig: depth 32, embed_dim 1280,
# mlp_ratio 4; Qwen2_5_VLVisionConfig: depth 32, intermediate_size 3420), as the engine loading
# that config.json would take it; every published checkpoint of both families has the 32-block,
# 1280-wide tower (Qwen2.5-VL-7B-Instruct's config: depth 32, hidden_size 1280,
# intermediate_size 3420, out_hidden_size 3584), 0.67B parameters: Qwen2-VL-2B-Instruct's
# 2.21B are 1.54B of language model and this tower.
_QWEN_VL_TOWERS = {
    # model_type: (width key, default width, gated MLP, default intermediate or None for ratio)
    "qwen2_vl": ("embed_dim", 1280, False, None),
    "qwen2_5_vl": ("hidden_size", 1280, True, 3420),
}


class QwenVlTower(NamedTuple):
    """The sizes of a Qwen2-VL / Qwen2.5-VL vision transformer (see above)."""

    width: int
    depth: int
    intermediate: int
    gated: bool
    patch: int
    channels: int
    temporal: int
    merge: int
    output: int

    @property
    def params(self) -> int:
        mlp = (3 if self.gated else 2) * self.width * self.intermediate
        embed = self.channels * self.temporal * self.patch * self.patch * self.width
        merged = self.width * self.merge**2
        return (
            embed + self.depth * (4 * self.width**2 + mlp) + merged * merged + merged * self.output
        )


def qwen_vl_tower(model_type: str | None, cfg: ConfigView, text_hidden: int) -> QwenVlTower | None:
    """The Qwen2-VL / Qwen2.5-VL tower of ``vision_config`` (``cfg``), None for other models."""
    tower = _QWEN_VL_TOWERS.get(model_type or "")
    if tower is None:
        return None
    width_key, default_width, gated, default_intermediate = tower
    width = cfg.opt_int(width_key, minimum=1) or default_width
    if default_intermediate is None:
        intermediate = round(width * (cfg.opt_float("mlp_ratio") or 4.0))
    else:
        intermediate = cfg.opt_int("intermediate_size", minimum=1) or default_intermediate
    # Qwen2-VL names the merger's output ``hidden_size``, Qwen2.5-VL ``out_hidden_size``.
    out_key = "hidden_size" if model_type == "qwen2_vl" else "out_hidden_size"
    return QwenVlTower(
        width=width,
        depth=cfg.opt_int("depth", minimum=1) or 32,
        intermediate=intermediate,
        gated=gated,
        patch=cfg.opt_int("patch_size", minimum=1) or 14,
        channels=cfg.opt_int("in_chans", minimum=1) or cfg.opt_int("in_channels", minimum=1) or 3,
        temporal=cfg.opt_int("temporal_patch_size", minimum=1) or 2,
        merge=cfg.opt_int("spatial_merge_size", minimum=1) or 2,
        output=cfg.opt_int(out_key, minimum=1) or text_hidden,
    )


# Qwen3-VL's and Qwen3.5's vision transformers (transformers' modeling_qwen3_vl.py
# Qwen3VLVisionModel; Qwen3.5's tower is the same without DeepStack): a Conv3d patch embedding
# with a bias (channels x temporal patch x patch^2 x width), learned position embeddings
# (``num_position_embeddings`` x width), ``depth`` blocks of fused qkv + proj (4 w^2) and an
# ungated MLP (linear_fc1, linear_fc2: 2 w i), the patch merger folding merge^2 patches into one
# token (Linear(w m^2, w m^2) then Linear(w m^2, out_hidden_size)), and one more merger of the
# same shape per DeepStack layer (``deepstack_visual_indexes``). Counted only where the config
# states ``depth`` (published configs do: Qwen3-VL-30B-A3B-Instruct's 27 blocks of 1152, MLP
# 4304, patch 16, DeepStack [8, 16, 24], out 2048: 0.54B parameters).
_QWEN3_VL_TYPES = frozenset({"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"})


def _qwen3_vl_vision(model_type: str | None, cfg: ConfigView, text_hidden: int) -> int | None:
    if model_type not in _QWEN3_VL_TYPES:
        return None
    depth = cfg.opt_int("depth", minimum=1)
    width = cfg.opt_int("hidden_size", minimum=1)
    intermediate = cfg.opt_int("intermediate_size", minimum=1)
    if depth is None or width is None or intermediate is None:
        return None
    patch = cfg.opt_int("patch_size", minimum=1) or 16
    temporal = cfg.opt_int("temporal_patch_size", minimum=1) or 2
    channels = cfg.opt_int("in_channels", minimum=1) or 3
    merged = width * (cfg.opt_int("spatial_merge_size", minimum=1) or 2) ** 2
    output = cfg.opt_int("out_hidden_size", minimum=1) or text_hidden
    positions = cfg.opt_int("num_position_embeddings", minimum=0) or 0
    mergers = 1 + len(cfg.opt_list("deepstack_visual_indexes") or [])
    embed = channels * temporal * patch * patch * width + width + positions * width
    blocks = depth * (4 * width * width + 2 * width * intermediate)
    return embed + blocks + mergers * (merged * merged + merged * output)


# Pixtral's vision transformer under Mistral 3's projector (transformers' modeling_pixtral.py
# PixtralVisionModel, modeling_mistral3.py Mistral3MultiModalProjector): a patch convolution
# without bias (channels x patch^2 x width), ``num_hidden_layers`` blocks of q, k, v, o (heads x
# head_dim wide) and a gated SiLU MLP (gate, up, down: 3 w i), then the projector's patch merger
# (Linear(w m^2, w), m = the top-level ``spatial_merge_size``) and two layers into the language
# model (Linear(w, text), Linear(text, text)); LLaVA's projector over a Pixtral tower has the two
# layers and no merger. A key the config leaves out is PixtralVisionConfig's default (patch 16).
# Mistral-Small-3.1-24B: 24 blocks of 1024, MLP 4096, patch 14: 0.439B parameters, with the
# text model's 23.57B the 24.0B its model card gives.
_PIXTRAL_MERGING = frozenset({"mistral3", "ministral3"})


def _pixtral_vision(top: ConfigView, cfg: ConfigView, text_hidden: int) -> int | None:
    if cfg.opt_str("model_type") != "pixtral":
        return None
    width = cfg.opt_int("hidden_size", minimum=1)
    intermediate = cfg.opt_int("intermediate_size", minimum=1)
    layers = cfg.opt_int("num_hidden_layers", minimum=1)
    if width is None or intermediate is None or layers is None:
        return None
    heads = cfg.opt_int("num_attention_heads", minimum=1)
    head_dim = cfg.opt_int("head_dim", minimum=1)
    attention = heads * head_dim if heads and head_dim else width
    patch = cfg.opt_int("patch_size", minimum=1) or 16
    channels = cfg.opt_int("num_channels", minimum=1) or 3
    total = channels * patch * patch * width
    total += layers * (4 * width * attention + 3 * width * intermediate)
    if top.opt_str("model_type") in _PIXTRAL_MERGING:
        merge = top.opt_int("spatial_merge_size", minimum=1) or 2
        total += width * merge * merge * width
    return total + width * text_hidden + text_hidden * text_hidden


def estimate_vision_params(top: ConfigView, text_hidden: int) -> int | None:
    """The vision tower of a multimodal config (``vision_config``): a ViT and its projector.

    Per encoder layer the attention (q, k, v, o: ``4 h^2``) and the MLP (``2 h i``); the patch
    embedding (``channels x patch^2 x h``); learned position embeddings (one per patch of the
    image); Llama 4's pixel-shuffle adapter; and the projector into the language model's hidden
    size. Only the encoders whose layout was read in transformers are counted (SigLIP for
    Gemma 3, Llama 4's); norms and biases are left out as for the text model. None when the
    config has no vision tower, or one of another layout (its weights stay uncounted).
    """
    vision = top.opt_mapping("vision_config")
    if vision is None:
        return None
    cfg = top.child(vision, "vision_config")
    qwen = qwen_vl_tower(top.opt_str("model_type"), cfg, text_hidden)
    if qwen is not None:
        return qwen.params
    qwen3 = _qwen3_vl_vision(top.opt_str("model_type"), cfg, text_hidden)
    if qwen3 is not None:
        return qwen3
    pixtral = _pixtral_vision(top, cfg, text_hidden)
    if pixtral is not None:
        return pixtral
    if cfg.opt_str("model_type") not in _VISION_TYPES:
        return None
    hidden = cfg.opt_int("hidden_size", minimum=1)
    layers = cfg.opt_int("num_hidden_layers", minimum=1)
    if hidden is None or layers is None:
        return None
    intermediate = cfg.opt_int("intermediate_size", minimum=1) or 4 * hidden
    total = layers * (4 * hidden * hidden + 2 * hidden * intermediate)
    patch = cfg.opt_int("patch_size", minimum=1) or 14
    total += (cfg.opt_int("num_channels", minimum=1) or 3) * patch * patch * hidden
    image = cfg.opt_int("image_size", minimum=1)
    if image is not None:
        total += (image // patch) ** 2 * hidden
    output = hidden
    ratio = cfg.opt_float("pixel_shuffle_ratio")
    adapter_in = cfg.opt_int("projector_input_dim", minimum=1)
    adapter_out = cfg.opt_int("projector_output_dim", minimum=1)
    if ratio and adapter_in and adapter_out:
        # Llama 4: pixel shuffle folds 1/ratio^2 patches into one, then a two-layer MLP
        # (Llama4VisionMLP2: fc1 hidden/ratio^2 -> projector_input_dim, fc2 -> output dim).
        total += round(hidden / (ratio * ratio)) * adapter_in + adapter_in * adapter_out
        output = cfg.opt_int("vision_output_dim", minimum=1) or adapter_out
    return total + output * text_hidden


def estimate_mtp_params(
    cfg: ConfigView, arch: Architecture, model_type: str, layers: tuple[LayerParams, ...]
) -> int | None:
    """The multi-token-prediction layers' own weights (``mtp_num_hidden_layers``,
    ``num_nextn_predict_layers``): per MTP layer a full-attention mixer and the model's last
    MLP or MoE, and the projection of the embedding and hidden state together (``eh_proj`` /
    ``fc``: 2 x hidden -> hidden); the embedding and head are the target's (vLLM's
    deepseek_mtp.py, qwen3_5_mtp.py, nemotron_h_mtp.py share them). Nemotron-H's MTP block is
    ``mtp_hybrid_override_pattern`` (Nemotron 3 Super: ``*E``, an attention layer and a latent
    MoE layer). None when the config names no MTP layers or the layers are not counted."""
    count = cfg.opt_int_of(("mtp_num_hidden_layers", "num_nextn_predict_layers"), minimum=0)
    if not count or not layers or len(layers) != len(arch.layers):
        return None
    hidden = arch.shape.hidden_size
    attention = next(
        (p.mixer for p, layer in zip(layers, arch.layers, strict=True) if layer.kind.grows),
        None,
    )
    if attention is None:
        return None
    projection = 2 * hidden * hidden
    if model_type == "nemotron_h":
        pattern = cfg.opt_str("mtp_hybrid_override_pattern") or "*E"
        moe = next((p for p in layers if p.experts), None)
        block = 0
        for kind in pattern:
            if kind == "*":
                block += attention
            elif kind == "E" and moe is not None:
                block += moe.shared + moe.latent + moe.experts + moe.router
        return count * (block + projection)
    last = layers[-1]
    return count * (attention + last.mlp + last.shared + last.latent + last.experts + last.router
                    + projection)  # fmt: skip
