"""``quantization_config``: weight quantisation method and bits, and any declared cache scheme."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvlint.model.families.base import ConfigView
from kvlint.model.layout import NVFP4_BITS
from kvlint.model.layout import read_layout
from kvlint.model.layout import reduce_named
from kvlint.model.layout import scheme_bits
from kvlint.model.params import UNGATED_MLP
from kvlint.model.spec import Quantization
from kvlint.model.spec import RoleBits
from kvlint.model.spec import WeightLayout

# Bits per weight of methods whose bits the config does not spell out. MXFP4 stores 4-bit values
# with one 8-bit scale per 32 (4.25 bits); NVFP4 one 8-bit scale per 16 (4.5 bits).
_METHOD_BITS: dict[str, float] = {
    "fp8": 8,
    "fbgemm_fp8": 8,
    "ptpc_fp8": 8,
    "mxfp4": 4.25,
    "nvfp4": 4.5,
    "mxfp8": 8.25,
}

# modelopt `quant_algo` -> bits per weight.
_MODELOPT_BITS: dict[str, float] = {
    "fp8": 8,
    "fp8_pb_wo": 8,
    "fp8_per_channel_per_token": 8,
    "nvfp4": 4.5,
    "w4a8_awq": 4,
    "w4a16_awq": 4,
    "w4a8_nvfp4_fp8": 4.5,
    "mxfp8": 8.25,
}

# vllm/engine/arg_utils.py `MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP`.
_MODELOPT_KV = {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}


def read_quantization(cfg: ConfigView) -> Quantization | None:
    """The checkpoint's ``quantization_config`` (None when the weights are not quantised), or an
    MLX bundle's ``quantization`` block."""
    qc = cfg.opt_mapping("quantization_config")
    if qc is None:
        qc = cfg.opt_mapping("quantization")
        if qc is None:
            return None
    gated = (cfg.opt_str("model_type") or "") not in UNGATED_MLP
    if _is_mlx(qc):
        return _mlx(qc, gated)
    method = qc.get("quant_method")
    if method is None and isinstance(qc.get("quantization"), Mapping):
        method = "modelopt"  # hf_quant_config.json layout: {"producer": ..., "quantization": {...}}
    if not isinstance(method, str):
        raise cfg.error(
            "quantization_config",
            f"`{cfg.key_name('quantization_config')}.quant_method` must be a string, "
            f"got {method!r}",
        )
    method = method.lower()
    bits = _weight_bits(method, qc)
    group = _group_size(method, qc)
    return Quantization(
        method=method,
        weight_bits=bits,
        kv_cache_dtype=_kv_scheme(qc),
        group_size=group,
        attention_kept=_attention_kept(method, qc),
        layout=read_layout(method, qc, _stored_bits(method, qc, bits, group), gated=gated),
    )


def _stored_bits(
    method: str, qc: Mapping[str, Any], bits: float | None, group: int | None
) -> float | None:
    """The bits a quantised linear layer takes in storage, scales included: the default of a
    per-module layout (kvlint.arith.weights.linear_bits charges the same for a checkpoint
    without one: above 4 bits the values alone, else a 16-bit scale per group of
    ``group_size``, 128 and a packed zero point unless the config says)."""
    if bits is None:
        return None
    if method == "compressed-tensors":
        for weights in _weight_groups(method, qc):
            return scheme_bits(weights)
    if bits > 4:
        return bits
    size = qc.get("group_size") if group is None else group
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return bits + 16 / size
    return bits + 32 / 128


def _is_mlx(qc: Mapping[str, Any]) -> bool:
    """An MLX bundle's block: ``{"group_size": 64, "bits": 8}`` and no ``quant_method``
    (ml-explore/mlx-lm@d78bf58 mlx_lm/utils.py ``quantize_model`` writes it under
    ``quantization`` and again under ``quantization_config`` for the Hub's model tree)."""
    return "quant_method" not in qc and isinstance(qc.get("group_size"), int) and "bits" in qc


def _mlx(qc: Mapping[str, Any], gated: bool) -> Quantization:
    bits = qc.get("bits")
    weight_bits = float(bits) if isinstance(bits, (int, float)) else None
    group = qc.get("group_size")
    mode = qc.get("mode", "affine")
    method = "mlx" if mode in ("affine", None) else f"mlx-{mode}"
    size = group if isinstance(group, int) and group > 0 else None
    layout = _mlx_layout(qc, mode, size, gated)
    return Quantization(method, weight_bits, group_size=size, layout=layout)


def _mlx_layout(
    qc: Mapping[str, Any], mode: Any, group: int | None, gated: bool
) -> WeightLayout | None:
    """A mixed MLX recipe's per-module entries (mlx_lm/utils.py ``quantize_model`` writes what
    its ``quant_predicate`` returns for a module under the module's path:
    ``"model.layers.0.mlp.down_proj": {"bits": 6, "group_size": 64}``, or false for one left
    unquantised). MLX quantises embeddings and the head with the rest (nn.quantize), so those
    take the block's bits unless named. Bits per weight as kvlint.arith.weights.mlx_bits
    charges them: a 16-bit scale and bias per group (affine), one 8-bit scale otherwise."""
    bits = qc.get("bits")
    if not isinstance(bits, (int, float)) or isinstance(bits, bool):
        return None
    extra = 32 if mode in ("affine", None) else 8

    def stored(b: float, g: int | None) -> float:
        return b + extra / (g or 64)

    named: list[tuple[str, float]] = []
    for name, entry in qc.items():
        if not isinstance(name, str) or "." not in name:
            continue
        if entry is False:
            named.append((name, 16.0))
        elif isinstance(entry, Mapping) and isinstance(entry.get("bits"), (int, float)):
            own = entry.get("group_size")
            size = own if isinstance(own, int) else group
            named.append((name, stored(float(entry["bits"]), size)))
    if not named:
        return None
    default = stored(float(bits), group)
    layout = reduce_named(named, default=default, gated=gated)
    present = {rule.role for rule in layout.rules if not rule.layers}
    whole = tuple(RoleBits(r, default) for r in ("embedding", "head") if r not in present)
    return WeightLayout(layout.rules + whole, default)


def _weight_groups(method: str, qc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The ``weights`` schemes of a compressed-tensors config's ``config_groups``."""
    groups = qc.get("config_groups") if method == "compressed-tensors" else None
    if not isinstance(groups, Mapping):
        return []
    out = []
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if isinstance(weights, Mapping):
            out.append(weights)
    return out


def _group_size(method: str, qc: Mapping[str, Any]) -> int | None:
    for weights in _weight_groups(method, qc):
        size = weights.get("group_size")
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            return size
    return None


def _attention_kept(method: str, qc: Mapping[str, Any]) -> bool:
    """compressed-tensors ``ignore`` lists the modules left unquantised; Kimi K2 Thinking's
    names ``re:.*self_attn.*`` (its attention, shared experts and dense MLP stay bf16, only the
    routed experts are INT4)."""
    ignore = qc.get("ignore") if method == "compressed-tensors" else None
    if not isinstance(ignore, list):
        return False
    return any(isinstance(p, str) and "self_attn" in p for p in ignore)


def _weight_bits(method: str, qc: Mapping[str, Any]) -> float | None:
    for key in ("bits", "w_bit", "weight_bits", "num_bits", "wbits"):
        value = qc.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    if method == "bitsandbytes":
        if qc.get("load_in_4bit"):
            return 4.0
        if qc.get("load_in_8bit"):
            return 8.0
        return None
    if method.startswith("modelopt"):
        algo = _modelopt_field(qc, "quant_algo")
        if isinstance(algo, str):
            return _MODELOPT_BITS.get(algo.lower())
        return None
    if method == "compressed-tensors":
        for weights in _weight_groups(method, qc):
            if weights.get("type") == "float" and weights.get("num_bits") == 4:
                return NVFP4_BITS if weights.get("group_size") != 32 else 4.25
            if isinstance(weights.get("num_bits"), int):
                return float(weights["num_bits"])
        return None
    bits = _METHOD_BITS.get(method)
    return float(bits) if bits is not None else None


def _modelopt_field(qc: Mapping[str, Any], key: str) -> Any:
    """A modelopt field, at the top of the config or under ``quantization``."""
    if key in qc:
        return qc[key]
    nested = qc.get("quantization")
    return nested.get(key) if isinstance(nested, Mapping) else None


def _kv_scheme(qc: Mapping[str, Any]) -> str | None:
    """The cache dtype the config declares (modelopt ``kv_cache_quant_algo``, or a
    compressed-tensors / modelopt ``kv_cache_scheme``), as vLLM's ``--kv-cache-dtype`` names it.

    Mirrors vllm/engine/arg_utils.py `get_kv_cache_quant_algo_string`. Only modelopt checkpoints
    make vLLM's ``auto`` follow it; a compressed-tensors scheme carries scales for an fp8 cache
    the user still selects.
    """
    for key in ("kv_cache_quant_algo", "kv_cache_scheme"):
        value = _modelopt_field(qc, key)
        if isinstance(value, str):
            return _MODELOPT_KV.get(value.lower(), value.lower())
        if isinstance(value, Mapping):
            bits = value.get("num_bits")
            kind = value.get("type", "float")
            if kind == "float" and bits == 8:
                return "fp8"
            if kind == "float" and bits == 4:
                return "nvfp4"
            if kind == "int" and bits == 8:
                return "int8"
            return f"{kind}{bits}"
    return None


def weight_quantized(qc: Quantization | None) -> bool:
    return qc is not None and qc.weight_bits is not None and qc.weight_bits < 16
