"""Weight bytes per GPU: the real checkpoint size when known, else parameters x bits.

Quantised checkpoints keep embeddings, the output head and norms in 16 bit; only the linear
layers shrink. Tensor parallelism splits everything (vLLM's ``VocabParallelEmbedding`` shards
the vocabulary too), so a rank holds ``1 / tp``; pipeline stages hold their own layers, the
first the embedding and the last the output head (``vllm/distributed/utils.py``
``get_pp_indices``; the calibration log of Llama-3.1-8B at PP 4 shows 4.26 GiB on stage 0 and
3.28 GiB on stage 2, the embedding's 0.98 GiB apart).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvlint.arith.memo import by_model
from kvlint.model.spec import LayerParams
from kvlint.model.spec import ModelSpec
from kvlint.model.spec import WeightLayout

# Bits per weight of the quantised linear layers, scales included.
_BITS: dict[str, float] = {
    # AWQ / GPTQ: 4-bit values, an fp16 scale and a packed zero point per group of 128.
    "awq": 4 + 32 / 128,
    "gptq": 4 + 32 / 128,
    "gptq_marlin": 4 + 32 / 128,
    "awq_marlin": 4 + 32 / 128,
    "marlin": 4 + 32 / 128,
    "w4a16": 4 + 16 / 128,
    "int4": 4 + 16 / 128,
    # fp8 (per-channel or per-tensor scales: negligible).
    "fp8": 8.0,
    "fbgemm_fp8": 8.0,
    "w8a8": 8.0,
    "int8": 8.0,
    "compressed-tensors": 8.0,
    "modelopt": 8.0,
    "experts_int8": 8.0,
    # NVFP4: 4-bit values, an fp8 scale per 16.
    "nvfp4": 4 + 8 / 16,
    "modelopt_fp4": 4 + 8 / 16,
    # MXFP4 (gpt-oss experts): 4-bit values, an e8m0 scale per 32.
    "mxfp4": 4 + 8 / 32,
    # bitsandbytes NF4 / FP4: 4 bits + an fp32 absmax per 64 (double-quantised: ~0.127 bit).
    "bitsandbytes": 4 + 0.127,
    "bitsandbytes-nf4": 4 + 0.127,
    "bitsandbytes-fp4": 4 + 0.127,
    "bitsandbytes-8bit": 8.0,
    "eetq": 8.0,
    "exl2": 4.0,
    # GGUF file types (llama.cpp: bits per weight of each quantisation mix, scales included).
    "gguf": 4.85,
    "q2_k": 3.35,
    "q3_k_m": 3.91,
    "q4_0": 4.5,
    "q4_k_s": 4.58,
    "q4_k_m": 4.85,
    "iq4_xs": 4.25,
    "q5_k_m": 5.69,
    "q6_k": 6.56,
    "q8_0": 8.5,
    "f16": 16.0,
}

# Bytes of ``params`` weights of one role (in one layer): what _by_layout charges.
_Charge = Callable[[str, int, "int | None"], int]

_DTYPE_BITS = {
    "float32": 32.0,
    "fp32": 32.0,
    "float": 32.0,
    "float16": 16.0,
    "fp16": 16.0,
    "half": 16.0,
    "bfloat16": 16.0,
    "bf16": 16.0,
    "fp8": 8.0,
}


@dataclass(frozen=True)
class WeightBreakdown:
    """A model's weights in bytes, split where parallelism splits them."""

    embedding: int  # input embedding
    head: int  # output head (0 when tied and not duplicated)
    per_layer: tuple[int, ...]  # each decoder layer
    method: str  # how the figure was obtained: "checkpoint size", "parameters x 4.25 bits", ...
    # The routed experts' share of each layer (included in ``per_layer``): what expert
    # parallelism splits across ranks instead of tensor parallelism alone.
    experts_per_layer: tuple[int, ...] = ()
    # A multimodal model's vision encoder and projector, on the first pipeline stage.
    vision: int = 0
    # The checkpoint's multi-token-prediction layers (not in ``total``): weights an MTP drafter
    # loads beside the target, on the last pipeline stage.
    mtp: int = 0

    @property
    def total(self) -> int:
        return self.embedding + self.head + sum(self.per_layer) + self.vision


def quantization_method(spec: ModelSpec, override: str | None = None) -> str | None:
    """The weight quantisation that applies: the deployment's flag, else the checkpoint's."""
    if override and override.lower() not in ("none", "auto"):
        return override.lower()
    if spec.quantization is not None:
        return spec.quantization.method.lower()
    return None


# MLX's affine quantisation (mlx.core.quantize): each group of ``group_size`` weights (64 unless
# the bundle says otherwise: mlx_lm/utils.py ``defaults_for_mode``) carries a scale and a bias in
# the model dtype, 2 x 16 bits; mxfp4 / mxfp8 / nvfp4 modes carry one 8-bit scale per group and
# no bias (ml-explore/mlx@846d176 mlx/ops.cpp ``quantize``).
MLX_GROUP_SIZE = 64


def mlx_bits(bits: float, group_size: int | None, method: str = "mlx") -> float:
    """Bits per weight of an MLX-quantised tensor, its group scales (and biases) included."""
    group = group_size or MLX_GROUP_SIZE
    return bits + (32 if method == "mlx" else 8) / group


def linear_bits(spec: ModelSpec, method: str | None, dtype: str | None = None) -> float:
    """Bits per weight of the linear layers (``dtype`` overrides the model's, ``--dtype``)."""
    if method is None:
        return _DTYPE_BITS.get((dtype or spec.dtype).lower(), 16.0)
    if method.startswith("mlx"):
        quant = spec.quantization
        bits = quant.weight_bits if quant is not None and quant.weight_bits else 4.0
        return mlx_bits(bits, quant.group_size if quant is not None else None, method)
    if spec.quantization is not None and spec.quantization.weight_bits:
        bits = spec.quantization.weight_bits
        if bits > 4:
            return bits
        # A 16-bit scale per group: 128 weights (and a zero point) unless the config says.
        group = spec.quantization.group_size
        return bits + (16 / group if group else 32 / 128)
    return _BITS.get(method, _DTYPE_BITS.get(spec.dtype.lower(), 16.0))


def _dense_bits(spec: ModelSpec, dtype: str | None = None) -> float:
    bits = _DTYPE_BITS.get((dtype or spec.dtype).lower(), 16.0)
    return 16.0 if bits == 8.0 else bits  # an fp8 checkpoint keeps 16-bit embeddings


def _attention_params(spec: ModelSpec) -> int:
    """Q, K, V and O projections of one layer."""
    q = spec.num_attention_heads * spec.head_dim
    kv = spec.num_key_value_heads * spec.head_dim
    return spec.hidden_size * (2 * q + 2 * kv)


def _layer_params(spec: ModelSpec) -> tuple[int, int]:
    """(non-expert, expert) parameters of one decoder layer."""
    embed = spec.vocab_size * spec.hidden_size
    heads = 1 if spec.tie_word_embeddings else 2
    attention = _attention_params(spec)
    if spec.param_count:
        body = max(0, spec.param_count - heads * embed)
        per_layer = body // max(1, spec.num_layers)
        if spec.num_experts and spec.expert_param_count is not None:
            routed = min(per_layer, spec.expert_param_count // max(1, spec.num_layers))
            return per_layer - routed, routed
        if spec.num_experts:
            return min(attention, per_layer), max(0, per_layer - attention)
        return per_layer, 0
    intermediate = spec.intermediate_size or 4 * spec.hidden_size
    mlp = 3 * spec.hidden_size * intermediate
    if spec.num_experts:
        return attention, mlp * spec.num_experts
    return attention + mlp, 0


def weight_breakdown(
    spec: ModelSpec, quantization: str | None = None, dtype: str | None = None
) -> WeightBreakdown:
    """The model's weights, from the checkpoint size when known, else from its parameters.

    ``dtype`` is the deployment's ``--dtype`` when it overrides the model's (``auto`` = none).
    """
    if dtype is not None and dtype.lower() in ("auto", ""):
        dtype = None
    method = quantization_method(spec, quantization)
    embed_params = spec.vocab_size * spec.hidden_size
    dense_bits = _dense_bits(spec, dtype)
    # MLX quantises embeddings too (nn.quantize converts every Embedding and Linear whose last
    # dimension the group size divides: ml-explore/mlx-lm@d78bf58 mlx_lm/utils.py quantize_model).
    mlx = method is not None and method.startswith("mlx")
    embed_bits = linear_bits(spec, method, dtype) if mlx else dense_bits
    embed = round(embed_params * embed_bits / 8)
    head = 0 if spec.tie_word_embeddings else embed
    # The vision tower stays at the model dtype: AWQ, GPTQ and FP8 recipes quantise only the
    # language model's linear layers.
    vision = round((spec.vision_param_count or 0) * dense_bits / 8)
    layers = max(1, spec.num_layers)
    layout = spec.quantization.layout if spec.quantization is not None else None
    by_layout = (
        _by_layout(spec, layout, dense_bits, vision)
        if layout is not None and spec.layer_params
        else None
    )
    plain, experts = _layer_params(spec)
    bits = linear_bits(spec, method, dtype)
    # MTP layers, where no per-module layout says: at the linear layers' bits (AutoRound's and
    # GPTQ's recipes quantise them with the rest: club-3090's Qwen3.6-27B AutoRound INT4 keeps
    # only its mtp.fc in BF16; ModelOpt's exclude them, which its layout states).
    mtp = by_layout.mtp if by_layout else round((spec.mtp_param_count or 0) * bits / 8)
    if spec.weight_bytes and dtype is None:
        # The checkpoint's size holds its MTP layers, which vLLM loads only for an MTP drafter
        # (deepseek_v2.py / qwen3_5.py skip their weights otherwise): kept apart.
        if by_layout is not None:
            embed, head = by_layout.embedding, by_layout.head
        body = max(0, spec.weight_bytes - embed - head - vision - mtp)
        weighed = sum(by_layout.per_layer) if by_layout is not None else 0
        if by_layout is not None and weighed > 0:
            # the layers' shares as the layout weighs them
            share = body / weighed
            per_layer = tuple(round(b * share) for b in by_layout.per_layer)
            routed = tuple(round(b * share) for b in by_layout.experts_per_layer)
        else:
            per = body // layers
            # The checkpoint does not say which bytes are experts: split by the parameter counts.
            expert_bytes = per * experts // (plain + experts) if plain + experts else 0
            per_layer, routed = (per,) * layers, (expert_bytes,) * layers
        return WeightBreakdown(embed, head, per_layer, "checkpoint size", routed, vision, mtp)
    if by_layout is not None:
        return by_layout
    kept = spec.quantization is not None and spec.quantization.attention_kept
    if method == "mxfp4" or (kept and spec.num_experts):
        # gpt-oss: only the MoE experts are MXFP4; attention stays in 16 bit (as it does where
        # a compressed-tensors config ignores ``self_attn``: Kimi K2 Thinking's INT4 experts).
        expert_bytes = round(experts * bits / 8)
        per = round(plain * dense_bits / 8) + expert_bytes
    else:
        expert_bytes = round(experts * bits / 8)
        per = round(plain * bits / 8) + expert_bytes
    label = f"parameters x {bits:g} bits" + (f" ({method})" if method else "")
    return WeightBreakdown(
        embed, head, (per,) * layers, label, (expert_bytes,) * layers, vision, mtp
    )


def _by_layout(
    spec: ModelSpec, layout: WeightLayout, dense_bits: float, vision: int
) -> WeightBreakdown:
    """Each decoder layer charged role by role at the precision the checkpoint's per-module
    quantisation gives it (kvlint.model.layout): a mixed-precision NVFP4 checkpoint keeps its
    attention in FP8 and its MTP layers in BF16, an ``ignore`` list keeps attention at 16 bits.
    Where the checkpoint's own size is known weight_breakdown scales the layers to it."""

    def at(role: str, params: int, layer: int | None = None) -> int:
        bits = layout.bits(role, layer)
        return round(params * (bits if bits is not None else dense_bits) / 8)

    embed_params = spec.vocab_size * spec.hidden_size
    embed = at("embedding", embed_params)
    head = 0 if spec.tie_word_embeddings else at("head", embed_params)
    per: list[int] = []
    routed: list[int] = []
    for index, p in enumerate(spec.layer_params):
        experts = at("experts", p.experts, index)
        per.append(_layer_bytes(p, index, at) + experts)
        routed.append(experts)
    mtp = at("mtp", spec.mtp_param_count or 0)
    label = "per-module precisions of the checkpoint"
    return WeightBreakdown(embed, head, tuple(per), label, tuple(routed), vision, mtp)


def _layer_bytes(p: LayerParams, index: int, at: _Charge) -> int:
    """A layer's weights but its routed experts."""
    return (
        at("mixer", p.mixer, index)
        + at("mlp", p.mlp, index)
        + at("shared", p.shared, index)
        + at("latent", p.latent, index)
        + at("router", p.router, index)
    )


def pp_layer_ranges(num_layers: int, pp: int) -> list[tuple[int, int]]:
    """Layers ``[start, end)`` of each pipeline stage, as ``get_pp_indices`` splits them: an even
    share each, the remainder added one each to stages ``-2, -3, ...`` so the last stage (which
    also holds the output head) never gets an extra layer."""
    pp = max(1, pp)
    base = num_layers // pp
    sizes = [base] * pp
    remainder = num_layers % pp
    for i in range(remainder):
        sizes[(-2 - i) % pp] += 1
    ranges: list[tuple[int, int]] = []
    start = 0
    for size in sizes:
        ranges.append((start, start + size))
        start += size
    return ranges


# Remembered per model and settings: the vLLM band's ends and release lines ask it again.
@by_model
def weight_bytes_per_gpu(
    spec: ModelSpec,
    *,
    tp: int = 1,
    pp: int = 1,
    stage: int = 0,
    quantization: str | None = None,
    dtype: str | None = None,
    expert_shards: int = 1,
    mtp: bool = False,
    attention_tp: int | None = None,
) -> int:
    """Weights on one GPU of pipeline ``stage``: its layers (plus the embedding on the first
    stage and the head on the last), divided by tensor parallelism.

    ``expert_shards`` > 1 splits the routed experts further: with expert parallelism vLLM
    places whole experts across the ``tp x dp`` ranks of a stage (``FusedMoE``'s
    ``ep_size = tp_size * dp_size``, vllm/model_executor/layers/fused_moe/config.py), so a rank
    holds ``1 / (tp x dp)`` of the experts while attention and dense layers stay ``1 / tp``.
    ``mtp`` adds the checkpoint's multi-token-prediction layers on the last stage: an MTP
    drafter loads them beside the target (vLLM's ``Model loading took`` counts both).
    ``attention_tp`` splits the attention (mixer) weights over fewer ranks than the rest: with
    SGLang's DP attention a rank's attention runs at ``attn_tp_size = tp / dp``
    (sglang/srt/layers/dp_attention.py ``compute_dp_attention_world_info``), so it holds that
    share of every attention layer while the MLP and experts stay split ``1 / tp``.
    """
    breakdown = weight_breakdown(spec, quantization, dtype)
    ranges = pp_layer_ranges(len(breakdown.per_layer), pp)
    start, end = ranges[stage]
    total = sum(breakdown.per_layer[start:end])
    if expert_shards > 1 and breakdown.experts_per_layer:
        experts = sum(breakdown.experts_per_layer[start:end])
        total -= experts - experts // expert_shards
    if stage == 0:
        total += breakdown.embedding + breakdown.vision
    if stage == pp - 1:
        # A tied head is a separate copy on the last stage when PP splits the model.
        total += breakdown.head or (breakdown.embedding if pp > 1 else 0)
        if mtp:
            total += breakdown.mtp
    if attention_tp is not None and attention_tp < tp:
        mixer = _mixer_bytes(spec, breakdown, start, end)
        return (total - mixer) // max(1, tp) + mixer // max(1, attention_tp)
    return total // max(1, tp)


def _mixer_bytes(spec: ModelSpec, breakdown: WeightBreakdown, start: int, end: int) -> int:
    """The attention (mixer) share of layers ``[start, end)``: each layer's bytes beside its
    routed experts, split by the parameter counts of its roles (0 where they are unknown)."""
    if len(spec.layer_params) != len(breakdown.per_layer):
        return 0
    experts = breakdown.experts_per_layer or (0,) * len(breakdown.per_layer)
    share = 0
    for index in range(start, end):
        p = spec.layer_params[index]
        beside = p.mixer + p.mlp + p.shared + p.latent + p.router
        if beside:
            share += (breakdown.per_layer[index] - experts[index]) * p.mixer // beside
    return share


@by_model
def draft_weight_bytes_per_gpu(draft: ModelSpec, *, tp: int = 1, dtype: str | None = None) -> int:
    """A separate draft model's weights on one GPU of the last pipeline stage (vLLM loads the
    drafter there at the target's ``dtype``, its layers split over the tensor-parallel ranks).

    A drafter head (``draft.drafter``: DFlash, EAGLE) charges its decoder layers split by TP,
    the parameters every rank holds whole (its fc) and, where it ships them, its own embedding
    and head (the target's are shared otherwise: qwen3_dflash.py builds neither unless the
    checkpoint has them); a whole model of its own (``draft_model``) charges everything.
    """
    breakdown = weight_breakdown(draft, None, dtype)
    facts = draft.drafter
    sharded = sum(breakdown.per_layer)
    if facts is None:
        return (sharded + breakdown.embedding + (breakdown.head or 0)) // max(1, tp)
    bits = _dense_bits(draft, dtype)
    if facts.own_embedding:
        sharded += breakdown.embedding
    sharded += round(facts.head_vocab * draft.hidden_size * bits / 8)
    replicated = round(facts.replicated_params * bits / 8)
    return sharded // max(1, tp) + replicated
