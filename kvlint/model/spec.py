"""ModelSpec: the normalised facts about a model that the KV arithmetic needs, layer by layer."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property


class CacheKind(str, enum.Enum):
    """What one decoder layer keeps per sequence."""

    FULL = "full"  # K and V for every token (MHA / GQA / MQA)
    FULL_KV_SHARED = "full_kv_shared"  # one tensor serves as K and V (Gemma 4 attention_k_eq_v)
    SLIDING = "sliding"  # as FULL, bounded at `window` tokens
    CHUNKED = "chunked"  # as FULL, bounded at `window` = attention_chunk_size (Llama 4)
    MLA = "mla"  # one latent vector per token (kv_lora_rank + qk_rope_head_dim)
    SHARED = "shared"  # reuses another layer's cache (Gemma 3n num_kv_shared_layers)
    STATE = "state"  # linear attention / Mamba: a fixed state per sequence
    NONE = "none"  # no cache at all: an MLP-only or MoE-only block (Nemotron-H `-` / `E`)

    @property
    def grows(self) -> bool:
        """True when the layer's cache grows with every token of the context."""
        return self in (CacheKind.FULL, CacheKind.FULL_KV_SHARED, CacheKind.MLA)

    @property
    def bounded(self) -> bool:
        return self in (CacheKind.SLIDING, CacheKind.CHUNKED)


@dataclass(frozen=True)
class LayerSpec:
    """One decoder layer's cache.

    Per token the layer stores ``kv_heads * (head_dim_k + head_dim_v)`` elements. MLA and
    K=V-shared layers store a single tensor, so ``head_dim_v`` is 0 there. ``window`` is the
    sliding window or chunk size of bounded layers; ``state_elements`` the per-sequence state of
    linear-attention / Mamba layers, stored in the model dtype unless the engine says otherwise.
    ``conv_elements`` is the conv state's share of it (engines may store it in another dtype
    than the recurrent state) and ``conv_width`` the values one more conv row holds (vLLM adds
    a row per speculative token; 0 where it adds none).
    """

    kind: CacheKind
    kv_heads: int = 0
    head_dim_k: int = 0
    head_dim_v: int = 0
    window: int | None = None
    state_elements: int = 0
    conv_elements: int = 0
    conv_width: int = 0

    @property
    def elements_per_token(self) -> int:
        if self.kind in (CacheKind.SHARED, CacheKind.STATE, CacheKind.NONE):
            return 0
        return self.kv_heads * (self.head_dim_k + self.head_dim_v)


@dataclass(frozen=True)
class RopeScaling:
    """RoPE scaling as the config states it (`rope_scaling` or `rope_parameters`)."""

    rope_type: str
    factor: float | None = None
    original_max_position_embeddings: int | None = None


@dataclass(frozen=True)
class RoleBits:
    """Bits per weight (scales included) of one kind of module, ``role``, in the decoder layers
    ``layers`` (every layer when empty), as a checkpoint's per-module quantisation states it.

    Roles: ``mixer`` (attention, MLA, linear-attention or Mamba projections), ``mlp`` (a dense
    MLP), ``shared`` (shared experts), ``latent`` (latent-MoE projections), ``experts`` (the
    routed experts), ``router``, ``head`` (``lm_head``), ``embedding``, ``mtp`` (the
    multi-token-prediction layers), ``vision``.
    """

    role: str
    bits: float
    layers: tuple[int, ...] = ()


@dataclass(frozen=True)
class WeightLayout:
    """Which modules of a checkpoint are stored at which precision: a ModelOpt
    ``MIXED_PRECISION`` layer map, an ``exclude_modules`` / ``ignore`` list, compressed-tensors
    ``config_groups`` targets, GPTQ / AutoRound per-module bits.

    ``default`` is the bits of a linear layer no rule names (None: kept at the model dtype, as
    a ModelOpt layer map leaves every module it does not list). A rule listing layers wins over
    one for every layer.
    """

    rules: tuple[RoleBits, ...]
    default: float | None = None

    def bits(self, role: str, layer: int | None = None) -> float | None:
        """The bits of ``role`` in decoder ``layer`` (None: the model dtype)."""
        general: float | None = None
        found = False
        for rule in self.rules:
            if rule.role != role:
                continue
            if rule.layers:
                if layer is not None and layer in rule.layers:
                    return rule.bits
            elif not found:
                general, found = rule.bits, True
        if found:
            return general
        if role in _NEVER_DEFAULT:
            return None
        return self.default


# Modules a quantisation recipe leaves at the model dtype unless it names them: embeddings are
# lookups (no recipe kvlint reads quantises them unasked), routers and vision towers are left out
# by every recipe's defaults, and the MTP layers are ignored by the ModelOpt recipes read.
_NEVER_DEFAULT = frozenset({"embedding", "router", "vision", "mtp"})


@dataclass(frozen=True)
class Drafter:
    """What a speculative drafter's checkpoint states beyond its decoder layers (a DFlash or
    EAGLE head, kvlint.model.drafters): the method its architecture runs as, the parameters
    every tensor-parallel rank holds whole (the fc over the target's hidden states, a
    ReplicatedLinear), the vocabulary of an output head of its own (0: it runs the target's
    head) and whether it ships its own token embedding (else it runs the target's)."""

    method: str
    replicated_params: int = 0
    head_vocab: int = 0
    own_embedding: bool = False


@dataclass(frozen=True)
class LayerParams:
    """One decoder layer's parameters by role (see RoleBits): what a per-module quantisation
    charges at its own precision."""

    mixer: int = 0
    mlp: int = 0
    shared: int = 0
    latent: int = 0
    experts: int = 0
    router: int = 0


@dataclass(frozen=True)
class Quantization:
    """The checkpoint's weight quantisation, and any KV-cache scheme it declares."""

    method: (
        str  # quant_method: awq, gptq, fp8, mxfp4, modelopt, compressed-tensors, bitsandbytes ...
    )
    weight_bits: float | None = None
    kv_cache_dtype: str | None = None  # only when the config declares a cache scheme
    # Values per scale group, where the layout has groups the config states (MLX's affine
    # quantisation: a scale and a bias in the model dtype per ``group_size`` weights;
    # compressed-tensors: a scale per group of its ``config_groups`` weights).
    group_size: int | None = None
    # The config keeps the attention at 16 bits (compressed-tensors ``ignore`` naming
    # ``self_attn``): in a mixture of experts only the routed experts are quantised.
    attention_kept: bool = False
    # Per-module precisions where the checkpoint states them (mixed-precision recipes,
    # exclude / ignore lists); None where one precision stands for every linear layer.
    layout: WeightLayout | None = None


@dataclass(frozen=True)
class VisionEncoder:
    """A vision tower as the engine's profile run feeds it: the largest image it can be given.

    ``patches`` is that image's length through the tower (the encoder's sequence), ``tokens``
    the placeholder tokens it takes in the prompt (what the encoder budget counts), ``width``
    and ``intermediate`` the tower's hidden and MLP sizes, ``output_width`` the width of the
    embeddings it hands the language model; ``gated`` and ``rotary`` say how its blocks are
    built, which decides where their activations peak. A tower whose largest image follows a
    pixel bound (Qwen2-VL's ``max_pixels``) keeps that bound and the pixels one placeholder
    token covers, so that a deployment's ``mm_processor_kwargs`` can change it
    (``at_max_pixels``).
    """

    width: int
    intermediate: int
    patches: int
    tokens: int
    output_width: int
    gated: bool = False  # a gated MLP (gate and up projections) rather than fc1 alone
    rotary: bool = False  # 2D rotary position embeddings on the queries and keys
    max_pixels: int | None = None
    pixels_per_token: int | None = None  # (patch x spatial merge)^2
    patches_per_token: int = 1  # spatial merge^2

    def at_max_pixels(self, max_pixels: int | None) -> VisionEncoder:
        """The tower's largest image under another pixel bound (None, or a tower without one:
        unchanged)."""
        if max_pixels is None or self.pixels_per_token is None or max_pixels <= 0:
            return self
        tokens = max(1, max_pixels // self.pixels_per_token)
        return VisionEncoder(
            self.width,
            self.intermediate,
            tokens * self.patches_per_token,
            tokens,
            self.output_width,
            self.gated,
            self.rotary,
            max_pixels,
            self.pixels_per_token,
            self.patches_per_token,
        )


@dataclass(frozen=True)
class ModelSpec:
    """Everything kvlint knows about a model's shape. Built by a family module, never by hand."""

    name: str
    model_type: str
    layers: tuple[LayerSpec, ...]
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int  # of the full-attention layers (1 for MQA; 1 stands for MLA's latent)
    head_dim: int
    vocab_size: int
    dtype: str  # the model dtype: what a `kv_cache_dtype: auto` cache uses
    max_position_embeddings: int | None = None
    max_length_key: str | None = None  # which config key gave the length (vLLM takes the minimum)
    rope_scaling: RopeScaling | None = None
    quantization: Quantization | None = None
    param_count: int | None = None  # total parameters, experts included
    active_param_count: int | None = None  # per token, for MoE
    weight_bytes: int | None = None  # the real checkpoint size when known (safetensors index)
    tie_word_embeddings: bool = False
    num_experts: int | None = None
    intermediate_size: int | None = None
    # The routed experts' parameters (in param_count): what expert and data parallelism shard
    # across ranks while attention, dense layers and shared experts stay whole per TP group.
    expert_param_count: int | None = None
    # The vision encoder and its projector (not in param_count): vLLM loads them with the
    # language model, at the model dtype (weight quantisation recipes leave them out).
    vision_param_count: int | None = None
    # The vision tower's largest image, for the engine's encoder profile (None: no tower, or
    # one whose image size kvlint does not read).
    vision_encoder: VisionEncoder | None = None
    source: str = ""  # where the facts came from: a path, a catalog entry, a hub id
    notes: tuple[str, ...] = field(default=())
    # The head_dim a config.json wrote as hidden_size / KV heads (the cancelling formula, in a
    # shape no published checkpoint has); ``head_dim`` is then hidden_size / query heads.
    config_head_dim: int | None = None
    # The recurrent-state dtype the config states (``mamba_ssm_dtype``, Nemotron-H's
    # ``mamba_ssm_cache_dtype``); engines decide whether they honour it.
    ssm_state_dtype: str | None = None
    # Multi-token-prediction layers the checkpoint ships (``mtp_num_hidden_layers``,
    # ``num_nextn_predict_layers``; None when the config does not say): an MTP drafter runs
    # them, each with an attention cache of its own.
    mtp_layers: int | None = None
    # MLA models: the layer an engine that does not run MLA caches in place of each latent one
    # (every attention head's K of qk_nope_head_dim + qk_rope_head_dim, and V padded to that
    # width: vLLM before 0.7.1); None for other models.
    mla_expanded: LayerSpec | None = None
    # The Mamba-2 scan's chunk (``mamba_chunk_size``, else ``chunk_size``; vLLM's
    # ModelConfig.get_mamba_chunk_size), which vLLM aligns blocks to when it caches every state.
    mamba_chunk_size: int | None = None
    # Each decoder layer's parameters by role (embeddings and head apart), where the family's
    # parameter count is layer by layer: a per-module quantisation charges each at its bits.
    layer_params: tuple[LayerParams, ...] = ()
    # The multi-token-prediction layers' own parameters (the MTP drafter vLLM loads beside the
    # target when speculative decoding runs them; embeddings and head are the target's).
    mtp_param_count: int | None = None
    # A speculative drafter checkpoint (DFlash, EAGLE heads): what it shares with its target
    # and what every rank holds whole; None for a model that runs on its own.
    drafter: Drafter | None = None

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    # A model repeats a few layer shapes (Llama 3.3 70B: one shape, 80 layers); the accounting
    # computes each shape's figures once. Kept on the instance (a frozen record: the layers
    # never change), not a field: equality, hashing and the repr stay the fields'.
    @cached_property
    def layer_shapes(self) -> tuple[tuple[LayerSpec, int], ...]:
        """Each distinct layer, in order of first occurrence, and how many layers have it."""
        return tuple(Counter(self.layers).items())

    @cached_property
    def shape_indexes(self) -> tuple[int, ...]:
        """For each layer, the index of its shape in ``layer_shapes``."""
        index = {layer: i for i, (layer, _) in enumerate(self.layer_shapes)}
        return tuple(index[layer] for layer in self.layers)

    def layer_counts(self) -> dict[str, int]:
        """Layers per cache kind, in a stable order."""
        counts = Counter(layer.kind.value for layer in self.layers)
        return {kind.value: counts[kind.value] for kind in CacheKind if counts[kind.value]}

    @property
    def attention_kind(self) -> str:
        """MHA, GQA, MQA or MLA, as people name it."""
        if any(layer.kind is CacheKind.MLA for layer, _ in self.layer_shapes):
            return "MLA"
        if self.num_key_value_heads == self.num_attention_heads:
            return "MHA"
        if self.num_key_value_heads == 1:
            return "MQA"
        return "GQA"

    @property
    def sliding_window(self) -> int | None:
        """The window of the model's sliding layers, when it has any."""
        windows = [
            layer.window for layer, _ in self.layer_shapes if layer.kind is CacheKind.SLIDING
        ]
        return max((w for w in windows if w), default=None)

    @property
    def every_layer_windowed(self) -> bool:
        return all(
            layer.kind.bounded
            for layer, _ in self.layer_shapes
            if layer.kind not in (CacheKind.SHARED, CacheKind.NONE)
        )
