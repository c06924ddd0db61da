"""Which modules of a quantised checkpoint keep which precision: per-module quantisation read
from ``quantization_config`` (or a ModelOpt ``hf_quant_config.json`` merged into it).

The forms read, each as the engines read it:

- ModelOpt ``quant_algo: MIXED_PRECISION`` with ``quantized_layers`` (module name -> its own
  ``quant_algo``): a module the map does not list stays at the model dtype
  (vllm/model_executor/layers/quantization/modelopt.py ``ModelOptMixedPrecisionConfig``).
- ModelOpt ``exclude_modules`` (names or globs, ``mtp*``) beside one ``quant_algo``.
- compressed-tensors ``config_groups`` (each group's ``weights`` scheme and its ``targets``:
  the class ``Linear``, module names or ``re:`` patterns) and ``ignore`` (llm-compressor's mixed
  schemes write one group per precision).
- GPTQ / AutoRound ``dynamic`` (``-:pattern`` skips a module, ``+:pattern`` gives it its own
  ``bits``), AutoRound ``extra_config`` and the ``modules_to_not_convert`` of AWQ and
  bitsandbytes.

Each module name is reduced to a role (``kvlint.model.spec.RoleBits``) and its decoder layer;
the matrices of one role in one layer weigh alike (Nemotron 3 Super NVFP4, whose Mamba in_proj
and out_proj differ in 13 of its 40 Mamba layers, is off by under 0.05 GiB for it), and a
matrix the map leaves out of a role it names in part takes the layout's default.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from kvlint.model.spec import RoleBits
from kvlint.model.spec import WeightLayout

# NVFP4: 4-bit E2M1 values, one FP8 (E4M3) scale per 16, and one FP32 scale per tensor (the
# per-tensor scales are left out: 8 bytes a matrix). MXFP4 / MXFP8: one E8M0 scale per 32.
NVFP4_BITS = 4 + 8 / 16
MXFP4_BITS = 4 + 8 / 32
MXFP8_BITS = 8 + 8 / 32

# ModelOpt ``quant_algo`` values -> bits per weight (modelopt/torch/export/quant_utils.py names).
_MODELOPT_ALGO: dict[str, float] = {
    "fp8": 8.0,
    "fp8_pb_wo": 8.0,
    "fp8_per_channel_per_token": 8.0,
    "fp8_pc_pt": 8.0,
    "int8_sq": 8.0,
    "int8_wo": 8.0,
    "nvfp4": NVFP4_BITS,
    "w4a16_nvfp4": NVFP4_BITS,
    "w4a8_nvfp4_fp8": NVFP4_BITS,
    "nvfp4_awq": NVFP4_BITS,
    "mxfp4": MXFP4_BITS,
    "mxfp8": MXFP8_BITS,
    "w4a16_awq": 4 + 16 / 128,
    "w4a8_awq": 4 + 16 / 128,
    "int4_awq": 4 + 16 / 128,
}

# Name prefixes of the language model inside a multimodal or Nemotron checkpoint.
_PREFIX = re.compile(r"^(?:model\.language_model\.|language_model\.model\.|language_model\.|"
                     r"model\.|backbone\.|transformer\.)+")  # fmt: skip
_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks)\.(\d+)(?:\.|\*|$)")
_GATED = frozenset({"gate_proj", "up_proj", "down_proj"})

# Small tensors a layer map may name that are no matrix of a role's weight (a Mamba conv, the
# gated DeltaNet's per-head b and a projections: 2 x hidden x heads): left to the role's bits.
_MINOR = frozenset({"conv1d", "in_proj_b", "in_proj_a", "in_proj_ba", "norm", "A_log", "D"})
_VISION = re.compile(r"visual|vision|multi_modal_projector|mm_projector|patch_merge|image_newline")

# The matrices of one role that a layer holds together, the first family holding the names a
# map gives taken: a map naming some of them leaves the others at the default.
_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"q_proj", "k_proj", "v_proj", "o_proj"}),
    frozenset({"qkv_proj", "o_proj"}),
    frozenset({"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"}),
    frozenset({"in_proj", "out_proj"}),
    frozenset({"in_proj_qkv", "in_proj_z", "out_proj"}),
    frozenset({"in_proj_qkvz", "out_proj"}),
    # ungated MLPs (Nemotron-H's shared experts) first; a gated model's reader puts _GATED
    # before them: a map naming up_proj or down_proj alone leaves one other matrix, or two.
    frozenset({"up_proj", "down_proj"}),
    frozenset({"gate_proj", "up_proj", "down_proj"}),
    frozenset({"gate_up_proj", "down_proj"}),
    frozenset({"w1", "w2", "w3"}),
    frozenset({"fc1_latent_proj", "fc2_latent_proj"}),
    frozenset({"fc1", "fc2"}),
)


def role_of(name: str) -> tuple[str | None, int | None, str]:
    """A module name's (or pattern's) role, decoder layer and last component.

    ``model.language_model.layers.3.self_attn.q_proj`` -> ("mixer", 3, "q_proj"). A pattern
    (``re:.*self_attn.*``, ``*mlp.experts*``) gets its role and no layer; the role is None where
    the name says none (``model.layers.0.*``: every module of layer 0)."""
    text = name[3:] if name.startswith("re:") else name
    text = _PREFIX.sub("", text.lstrip("^"))
    leaf = re.sub(r"[^\w]+$", "", text.rsplit(".", 1)[-1])
    match = _LAYER.search(text)
    layer = int(match.group(1)) if match else None
    low = text.lower()
    if low.startswith("mtp") or ".mtp." in low or "nextn" in low:
        return "mtp", None, leaf
    if _VISION.search(low):
        return "vision", None, leaf
    if "lm_head" in low or low.startswith("output"):
        return "head", None, leaf
    if re.search(r"embed_tokens|embeddings|\bwte\b|word_embeddings", low):
        return "embedding", None, leaf
    if "shared_expert" in low or "shared_mlp" in low:
        return "shared", layer, leaf
    if re.search(r"experts|switch_mlp", low):
        return "experts", layer, leaf
    if "latent_proj" in low:
        return "latent", layer, leaf
    if re.search(r"\.(gate|router)\b(?!_)", low) and "gate_proj" not in low:
        return "router", layer, leaf
    if re.search(r"\bmlp\b|feed_forward|\bffn\b|mixer\.(up_proj|down_proj)", low):
        return "mlp", layer, leaf
    if re.search(r"self_attn|linear_attn|attention|attn|mixer", low):
        return "mixer", layer, leaf
    return None, layer, leaf


def modelopt_bits(algo: Any) -> float | None:
    """Bits per weight of a ModelOpt ``quant_algo`` (None: not one kvlint knows)."""
    return _MODELOPT_ALGO.get(algo.lower()) if isinstance(algo, str) else None


def scheme_bits(weights: Mapping[str, Any]) -> float | None:
    """Bits per weight of a compressed-tensors ``weights`` scheme, its scales included: FP4 with
    a group of 16 is NVFP4 (an FP8 scale per 16), with 32 MXFP4; integer groups carry a 16-bit
    scale (and a zero point when asymmetric) per group; per-channel scales are left out."""
    bits = weights.get("num_bits")
    if not isinstance(bits, int) or isinstance(bits, bool) or bits <= 0:
        return None
    group = weights.get("group_size")
    group = group if isinstance(group, int) and not isinstance(group, bool) and group > 0 else 0
    if weights.get("type", "int") == "float":
        if bits == 4:
            return MXFP4_BITS if group == 32 else NVFP4_BITS
        return float(bits) + (8 / group if group else 0)
    if not group:
        return float(bits)
    zero = 0 if weights.get("symmetric", True) else bits
    return bits + (16 + zero) / group


def read_layout(
    method: str, qc: Mapping[str, Any], bits: float | None, *, gated: bool = True
) -> WeightLayout | None:
    """The per-module precisions ``qc`` states (None: one precision for every linear layer).

    ``bits`` is the checkpoint's own bits per weight (its ``quant_algo`` or ``bits``), the
    default of a module no rule names; ``gated`` says whether the model's MLPs have a gate
    projection (a map naming only down_proj leaves two others, or one)."""
    if method.startswith("modelopt"):
        return _modelopt(qc, bits, gated)
    if method == "compressed-tensors":
        return _compressed_tensors(qc, gated)
    if method in ("gptq", "auto-round", "auto_round", "awq", "bitsandbytes", "gptq_marlin"):
        return _per_module(qc, bits, gated)
    return None


def _field(qc: Mapping[str, Any], key: str) -> Any:
    if key in qc:
        return qc[key]
    nested = qc.get("quantization")
    return nested.get(key) if isinstance(nested, Mapping) else None


def _modelopt(qc: Mapping[str, Any], bits: float | None, gated: bool) -> WeightLayout | None:
    layers = _field(qc, "quantized_layers")
    if isinstance(layers, Mapping) and layers:
        named: list[tuple[str, float]] = []
        for name, entry in layers.items():
            algo = entry.get("quant_algo") if isinstance(entry, Mapping) else None
            value = modelopt_bits(algo)
            if isinstance(name, str) and value is not None:
                named.append((name, value))
        return _reduce(named, default=None, gated=gated)
    exclude = _field(qc, "exclude_modules")
    if isinstance(exclude, list) and exclude and bits is not None:
        excluded = [(p, 16.0) for p in exclude if isinstance(p, str)]
        return _reduce(excluded, default=bits, gated=gated)
    return None


def _compressed_tensors(qc: Mapping[str, Any], gated: bool) -> WeightLayout | None:
    groups = qc.get("config_groups")
    if not isinstance(groups, Mapping):
        return None
    default: float | None = None
    named: list[tuple[str, float]] = []
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        targets = group.get("targets", ["Linear"]) if isinstance(group, Mapping) else None
        if not isinstance(weights, Mapping) or not isinstance(targets, list):
            continue  # (a group naming no targets: the Linear layers, as llm-compressor writes)
        value = scheme_bits(weights)
        if value is None:
            continue
        for target in targets:
            if target == "Linear":
                default = value
            elif isinstance(target, str):
                named.append((target, value))
    ignore = qc.get("ignore")
    ignored = [(p, 16.0) for p in ignore if isinstance(p, str)] if isinstance(ignore, list) else []
    if not named and not ignored:
        return None
    return _reduce([*named, *ignored], default=default, gated=gated)


def _per_module(qc: Mapping[str, Any], bits: float | None, gated: bool) -> WeightLayout | None:
    group = qc.get("group_size")
    group = group if isinstance(group, int) and group > 0 else 128
    named: list[tuple[str, float]] = []
    dynamic = qc.get("dynamic")
    if isinstance(dynamic, Mapping):
        for key, override in dynamic.items():
            if not isinstance(key, str):
                continue
            if key.startswith("-:"):
                named.append(("re:" + key[2:], 16.0))
                continue
            own = override.get("bits") if isinstance(override, Mapping) else None
            if isinstance(own, int) and not isinstance(own, bool):
                size = override.get("group_size", group) if isinstance(override, Mapping) else group
                size = size if isinstance(size, int) and size > 0 else group
                named.append(("re:" + key.removeprefix("+:"), _int_bits(own, size)))
    extra = qc.get("extra_config")
    if isinstance(extra, Mapping):
        for name, override in extra.items():
            own = override.get("bits") if isinstance(override, Mapping) else None
            if isinstance(name, str) and isinstance(own, int) and not isinstance(own, bool):
                named.append((name, _int_bits(own, group)))
    keep = qc.get("modules_to_not_convert") or qc.get("llm_int8_skip_modules")
    if isinstance(keep, list):
        named.extend((name, 16.0) for name in keep if isinstance(name, str))
    if not named or bits is None:
        return None
    return _reduce(named, default=bits, gated=gated)


def _int_bits(bits: int, group: int) -> float:
    """GPTQ / AutoRound integer weights: a 16-bit scale and a packed zero point per group."""
    return 16.0 if bits >= 16 else bits + (16 + bits) / group


# A compacted name's layer set: ``layers\.(0|2|4)\.`` (see compact_names).
_LAYER_SET = re.compile(r"(layers|h|blocks)\\\.\(((?:\d+\|)*\d+)\)\\\.")


def _expand(named: Iterable[tuple[str, float]]) -> Iterable[tuple[str, float]]:
    """Names as listed, a compacted ``re:`` name (compact_names) once per layer of its set."""
    for name, value in named:
        found = _LAYER_SET.search(name) if name.startswith("re:") else None
        if found is None:
            yield name, value
            continue
        head, tail = name[3 : found.start()], name[found.end() :]
        for layer in found.group(2).split("|"):
            text = f"{head}{found.group(1)}.{layer}.{tail}".replace("\\.", ".")
            yield text.replace("\\d+", "0"), value


def _reduce(
    named: Iterable[tuple[str, float]], *, default: float | None, gated: bool = True
) -> WeightLayout:
    """Module names (or patterns) and their bits -> one rule per role and layer set."""
    per: dict[tuple[str, int | None], dict[str, float]] = {}
    whole: dict[str, float] = {}
    unsorted: dict[int, float] = {}
    for name, value in _expand(named):
        role, layer, leaf = role_of(name)
        if leaf in _MINOR:
            continue
        if role is None:
            if layer is not None:  # every module of one layer
                unsorted[layer] = value
            continue
        whole_role = role in ("head", "embedding", "mtp", "vision") or _is_pattern(name)
        if layer is None and whole_role:
            whole.setdefault(role, value)
            continue
        per.setdefault((role, layer), {})[leaf] = value
    cells: dict[tuple[str, int | None], float] = {}
    for (role, layer), leaves in per.items():
        cells[(role, layer)] = _mean(leaves, default, gated)
    rules: list[RoleBits] = []
    by_role: dict[tuple[str, float], list[int]] = {}
    for (role, layer), value in sorted(cells.items(), key=lambda c: (c[0][0], c[0][1] or -1)):
        if layer is None:
            whole.setdefault(role, value)
        else:
            by_role.setdefault((role, value), []).append(layer)
    for (role, value), layers in sorted(by_role.items()):
        rules.append(RoleBits(role, value, tuple(sorted(layers))))
    for layer, value in sorted(unsorted.items()):
        rules.extend(
            RoleBits(role, value, (layer,))
            for role in ("mixer", "mlp", "shared", "latent", "experts")
            if (role, layer) not in cells
        )
    rules.extend(RoleBits(role, value) for role, value in sorted(whole.items()))
    return WeightLayout(tuple(rules), default)


def reduce_named(
    named: Iterable[tuple[str, float]], *, default: float | None, gated: bool = True
) -> WeightLayout:
    """Module names (or patterns) and their bits as a layout (the readers' common step)."""
    return _reduce(named, default=default, gated=gated)


def _is_pattern(name: str) -> bool:
    return name.startswith("re:") or any(c in name for c in "*?[")


def _mean(leaves: Mapping[str, float], default: float | None, gated: bool = True) -> float:
    """The bits of a role's matrices in one layer, each weighing alike; a matrix of the family
    the named ones belong to that the map leaves out takes ``default`` (16 when None)."""
    fallback = default if default is not None else 16.0
    families = _FAMILIES if not gated else (_GATED, *(f for f in _FAMILIES if f != _GATED))
    family = next((f for f in families if set(leaves) <= f), None)
    values = list(leaves.values())
    if family is not None:
        values += [fallback] * len(family - set(leaves))
    return sum(values) / len(values)


def compact_names(names: Iterable[str]) -> list[str]:
    """Module names with a layer index folded into one ``re:`` name per module of those layers
    (``backbone.layers.0.mixer.in_proj``, ``...layers.2.mixer.in_proj`` ->
    ``re:backbone\\.layers\\.(0|2)\\.mixer\\.in_proj``), an expert's index into ``\\d+``:
    what the catalog keeps of a layer map of 41,100 names, read back to the same layout."""
    singles: list[str] = []
    groups: dict[tuple[str, str], list[str]] = {}
    for name in names:
        match = re.search(r"(?:^|\.)(?:layers|h|blocks)\.(\d+)\.", name)
        if match is None or name.startswith("re:") or _is_pattern(name):
            singles.append(name)
            continue
        head, tail = name[: match.start(1)], name[match.end(1) :]
        groups.setdefault((head, re.sub(r"\.\d+(?=\.)", ".#", tail)), []).append(match.group(1))
    out = list(singles)
    for (head, tail), layers in groups.items():
        ordered = sorted(set(layers), key=int)
        if len(ordered) == 1 and "#" not in tail:
            out.append(head + ordered[0] + tail)
            continue
        suffix = re.escape(tail).replace("\\#", "#").replace("#", "\\d+")
        out.append(f"re:{re.escape(head)}({'|'.join(ordered)}){suffix}")
    return out


def compact_quantization(qc: Mapping[str, Any]) -> dict[str, Any]:
    """``qc`` with its layer map and module lists compacted (compact_names), the rest as is."""
    out = dict(qc)
    layers = out.get("quantized_layers")
    if isinstance(layers, Mapping):
        by_entry: dict[str, tuple[Any, list[str]]] = {}
        for name, entry in layers.items():
            key = repr(sorted(entry.items())) if isinstance(entry, Mapping) else repr(entry)
            by_entry.setdefault(key, (entry, []))[1].append(name)
        out["quantized_layers"] = {
            name: entry for entry, names in by_entry.values() for name in compact_names(names)
        }
    for key in ("exclude_modules", "ignore", "modules_to_not_convert"):
        if isinstance(out.get(key), list):
            out[key] = compact_names(n for n in out[key] if isinstance(n, str))
    nested = out.get("quantization")
    if isinstance(nested, Mapping):
        out["quantization"] = compact_quantization(nested)
    groups = out.get("config_groups")
    if isinstance(groups, Mapping):
        out["config_groups"] = {
            name: {**group, "targets": compact_names(group["targets"])}
            if isinstance(group, Mapping) and isinstance(group.get("targets"), list)
            else group
            for name, group in groups.items()
        }
    return out
