"""GGUF models: read the shape from a file's own metadata, or match its name to the catalog.

llama.cpp deployments name a ``.gguf`` file (``-m``) or a Hub repository of them (``-hf
org/name-GGUF:Q4_K_M``). When the file is on this machine and the optional ``gguf`` package is
installed (``pip install 'kvcache-lint[gguf]'``), its metadata gives the architecture, block
count, head counts, key/value lengths, context length and sliding window; otherwise the file name is
matched to a catalog entry (``Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf`` -> Llama 3.1 8B Instruct
with Q4_K_M weights) and the match is reported. Either way the cache is llama.cpp's default
f16 (``-ctk``/``-ctv`` change it, and the engine accounting reads those).
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from kvlint.errors import KvlintError
from kvlint.errors import ModelNotResolved
from kvlint.lazy_re import lazy
from kvlint.model import catalog
from kvlint.model.spec import ModelSpec
from kvlint.model.spec import Quantization

if TYPE_CHECKING:
    from kvlint.model.resolve import ResolvedModel

# llama.cpp caches K and V in f16 unless -ctk / -ctv say otherwise (common/arg.cpp).
GGUF_CACHE_DTYPE = "float16"

# Weight types as llama.cpp names them in file names; bits per weight as `llama-quantize
# --help` lists them (tools/quantize/quantize.cpp), for the weight-size estimate only.
QUANT_BITS: dict[str, float] = {
    "F32": 32.0,
    "F16": 16.0,
    "BF16": 16.0,
    "Q8_0": 8.5,
    "Q6_K": 6.56,
    "Q5_K_M": 5.69,
    "Q5_K_S": 5.54,
    "Q5_1": 6.0,
    "Q5_0": 5.5,
    "Q4_K_M": 4.89,
    "Q4_K_S": 4.58,
    "Q4_1": 5.0,
    "Q4_0": 4.5,
    "IQ4_NL": 4.5,
    "IQ4_XS": 4.25,
    "Q3_K_L": 4.27,
    "Q3_K_M": 3.91,
    "Q3_K_S": 3.5,
    "IQ3_M": 3.66,
    "IQ3_XS": 3.3,
    "Q2_K": 2.96,
    "IQ2_M": 2.7,
    "IQ2_XS": 2.31,
    "MXFP4": 4.25,
}

_QUANT = r"(?:UD-)?(?:I?Q[1-8](?:_[0-9A-Z]+)*|BF16|F16|FP16|F32|MXFP4(?:_MOE)?|TQ[12]_0)"
_QUANT_SUFFIX = lazy(rf"[-_.](?P<quant>{_QUANT})$", re.I)
_QUANT_ONLY = lazy(rf"^{_QUANT}$", re.I)
_SHARD = lazy(r"-\d{5}-of-\d{5}$", re.I)
_GGUF_SUFFIX = lazy(r"[-_.]gguf$", re.I)

# GGUF `general.architecture` -> the HF model_type the family code knows
# (llama.cpp convert_hf_to_gguf.py registers the reverse mapping).
_ARCH_MODEL_TYPE = {
    "llama": "llama",
    "mistral3": "mistral",
    "qwen2": "qwen2",
    "qwen2moe": "qwen2_moe",
    "qwen3": "qwen3",
    "qwen3moe": "qwen3_moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3_text",
    "phi2": "phi",
    "phi3": "phi3",
    "falcon": "falcon",
    "command-r": "cohere",
    "cohere2": "cohere2",
    "granite": "granite",
    "gpt-oss": "gpt_oss",
    "glm4": "glm4",
    "glm4moe": "glm4_moe",
    "deepseek2": "deepseek_v3",
    "starcoder2": "starcoder2",
    "olmo2": "olmo2",
}


def is_gguf_reference(text: str) -> bool:
    """A ``.gguf`` file name, a ``*-GGUF`` repository, or ``repo:QUANT`` as ``-hf`` takes it."""
    stripped = text.strip()
    if stripped.lower().endswith(".gguf"):
        return True
    repo, _, quant = stripped.partition(":")
    if quant and _QUANT_ONLY.match(quant):
        return True
    return bool(_GGUF_SUFFIX.search(repo))


def parse_gguf_name(text: str) -> tuple[str, str | None]:
    """(model name, weight type) from a GGUF file name or ``-hf`` reference."""
    stripped = text.strip()
    quant: str | None = None
    repo, sep, tag = stripped.partition(":")
    if sep and _QUANT_ONLY.match(tag):
        stripped, quant = repo, tag.upper()
    name = re.split(r"[\\/]", stripped)[-1]
    if name.lower().endswith(".gguf"):
        name = name[:-5]
    name = _SHARD.sub("", name)
    match = _QUANT_SUFFIX.search(name)
    if match:
        quant = quant or match["quant"].upper()
        name = name[: match.start()]
    name = _GGUF_SUFFIX.sub("", name)
    return name, quant


def match_catalog(text: str) -> tuple[catalog.CatalogEntry, str | None] | None:
    """The catalog entry a GGUF name stands for, and its weight type."""
    name, quant = parse_gguf_name(text)
    stripped = text.strip().partition(":")[0] if ":" in text else text.strip()
    org = stripped.split("/")[0] if stripped.count("/") == 1 else None
    candidates = [name, name.replace("_", "."), re.sub(r"(?i)^meta-llama-", "llama-", name)]
    if org:
        candidates.insert(0, f"{org}/{name}")
    for candidate in candidates:
        entry = catalog.find_entry(candidate)
        if entry is not None:
            return entry, quant
    # a release or mirror name around a catalog name (`gemma-3-27b-it-qat`,
    # `unsloth/Llama-3.2-3B-Instruct`): the derivative reading
    from kvlint.model import derive

    derived = derive.derive(f"{org}/{name}" if org else name)
    if derived is not None:
        return derived.entry, quant
    return None


def resolve_gguf_name(text: str) -> ResolvedModel:
    """A GGUF reference whose file is not here: its catalog entry, by name."""
    found = match_catalog(text)
    if found is None:
        name, _ = parse_gguf_name(text)
        raise ModelNotResolved(
            f"GGUF model {text!r}: the name {name!r} matches no built-in catalog entry "
            "(`kvlint models` lists them); give the path of the .gguf file so kvlint can read "
            "its metadata (pip install 'kvcache-lint[gguf]'), or the original model's "
            "config.json"
        )
    entry, quant = found
    return _catalog_match(entry, quant, f"GGUF name {text!r}")


def resolve_gguf_file(path: pathlib.Path) -> ResolvedModel:
    """A ``.gguf`` file on this machine: its metadata when the gguf package is installed."""
    from kvlint.model.resolve import ResolvedModel

    try:
        import gguf  # noqa: F401  (optional extra)
    except ImportError:
        found = match_catalog(path.name)
        if found is None:
            raise KvlintError(
                "reading a .gguf file needs the optional gguf package "
                "(pip install 'kvcache-lint[gguf]'), and its name matches no catalog entry",
                path=str(path),
            ) from None
        entry, quant = found
        resolved = _catalog_match(entry, quant, f"GGUF file {path.name!r}")
        note = (
            "the gguf package is not installed (pip install 'kvcache-lint[gguf]'), "
            "so the name was used"
        )
        return ResolvedModel(resolved.spec, "gguf", f"{resolved.detail}; {note}")
    metadata = read_metadata(path)
    spec = spec_from_metadata(metadata, path=str(path))
    arch = metadata.get("general.architecture")
    return ResolvedModel(
        spec, "gguf", f"read from the GGUF metadata of {path} (architecture {arch})"
    )


def _catalog_match(entry: catalog.CatalogEntry, quant: str | None, what: str) -> ResolvedModel:
    from kvlint.model.resolve import ResolvedModel

    spec = catalog.entry_spec(entry.id)
    spec = dataclasses.replace(
        spec,
        dtype=GGUF_CACHE_DTYPE,
        quantization=_quantization(quant) if quant else spec.quantization,
        source=f"{spec.source}; matched from {what}",
    )
    weights = f" with {quant} weights" if quant else ""
    return ResolvedModel(
        spec,
        "gguf",
        f"{what} matched the catalog entry {entry.id}{weights}",
        by_name=f"{entry.id}{weights}",
    )


def _quantization(quant: str) -> Quantization:
    base = quant.upper().removeprefix("UD-")
    return Quantization(method=f"gguf:{base}", weight_bits=QUANT_BITS.get(base))


def read_metadata(path: pathlib.Path) -> dict[str, Any]:
    """Every metadata field of a GGUF file, read from its header within bounds
    (``kvlint.model.gguf_header``); the tensors and weights are never read."""
    from kvlint import reading
    from kvlint.model.gguf_header import GgufError
    from kvlint.model.gguf_header import read_gguf_metadata

    try:
        return read_gguf_metadata(path)
    except OSError as exc:
        raise KvlintError(reading.describe(exc), path=str(path)) from None
    except GgufError as exc:
        raise KvlintError(f"not a readable GGUF file ({exc})", path=str(path)) from None


def spec_from_metadata(metadata: Mapping[str, Any], *, path: str) -> ModelSpec:
    """A ModelSpec from GGUF metadata, through the same family code as a config.json."""
    from kvlint.model.hf import spec_from_config

    arch = metadata.get("general.architecture")
    if not isinstance(arch, str):
        raise KvlintError("GGUF metadata has no general.architecture", path=path)
    config = _hf_config(arch, metadata, path)
    name = metadata.get("general.name")
    spec = spec_from_config(
        config,
        name=name if isinstance(name, str) else pathlib.Path(path).stem,
        source=path,
        path=path,
    )
    quant = _file_type_name(metadata.get("general.file_type"))
    return dataclasses.replace(
        spec,
        dtype=GGUF_CACHE_DTYPE,
        quantization=_quantization(quant) if quant else spec.quantization,
        weight_bytes=None,
    )


def _hf_config(arch: str, md: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The config.json keys the family code reads, from ``{arch}.*`` metadata."""

    def get(key: str) -> Any:
        return md.get(f"{arch}.{key}")

    layers = get("block_count")
    if not isinstance(layers, int):
        raise KvlintError(f"GGUF metadata has no {arch}.block_count", path=path)
    heads = _scalar(get("attention.head_count"))
    kv_heads = _scalar(get("attention.head_count_kv"))
    config: dict[str, Any] = {
        "model_type": _ARCH_MODEL_TYPE.get(arch, arch),
        "num_hidden_layers": layers,
        "hidden_size": get("embedding_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads if kv_heads is not None else heads,
        "max_position_embeddings": get("context_length"),
        "intermediate_size": _scalar(get("feed_forward_length")),
        "torch_dtype": GGUF_CACHE_DTYPE,
    }
    key_length = get("attention.key_length")
    value_length = get("attention.value_length")
    if isinstance(key_length, int):
        config["head_dim"] = key_length
    window = get("attention.sliding_window")
    if isinstance(window, int) and window > 0:
        config["sliding_window"] = window
    pattern = get("attention.sliding_window_pattern")
    if isinstance(pattern, int):
        config["sliding_window_pattern"] = pattern
    elif isinstance(pattern, list) and all(isinstance(p, bool) for p in pattern):
        config["layer_types"] = ["sliding_attention" if p else "full_attention" for p in pattern]
    experts = get("expert_count")
    if isinstance(experts, int) and experts > 0:
        config["num_local_experts"] = experts
        config["num_experts_per_tok"] = get("expert_used_count")
    kv_lora = get("attention.kv_lora_rank")
    if isinstance(kv_lora, int) and kv_lora > 0:
        # MLA: the cache is kv_lora_rank + the RoPE dims per token. Newer conversions store the
        # per-head query/value sizes as key_length_mla / value_length_mla (key_length is then
        # the latent's 576); older ones put them in key_length / value_length.
        rope_dim = get("rope.dimension_count") or 64
        config["kv_lora_rank"] = kv_lora
        config["qk_rope_head_dim"] = rope_dim
        config.pop("head_dim", None)
        key_mla = get("attention.key_length_mla")
        value_mla = get("attention.value_length_mla")
        head_k = key_mla if isinstance(key_mla, int) else key_length
        head_v = value_mla if isinstance(value_mla, int) else value_length
        if isinstance(head_k, int) and head_k > rope_dim:
            config["qk_nope_head_dim"] = head_k - rope_dim
        if isinstance(head_v, int):
            config["v_head_dim"] = head_v
        config["q_lora_rank"] = get("attention.q_lora_rank")
    tokens = md.get("tokenizer.ggml.tokens")
    vocab = get("vocab_size") or _length(tokens)
    if vocab:
        config["vocab_size"] = vocab
    return {key: value for key, value in config.items() if value is not None}


def _length(value: Any) -> int | None:
    """The item count of an array field, short (a list) or long (kept as its length)."""
    from kvlint.model.gguf_header import ArrayLength

    if isinstance(value, ArrayLength):
        return value.items
    return len(value) if isinstance(value, list) else None


def _scalar(value: Any) -> Any:
    """A per-layer array (some architectures store head counts per layer): its largest entry."""
    if isinstance(value, list):
        numbers = [v for v in value if isinstance(v, int)]
        return max(numbers) if numbers else None
    return value


def _file_type_name(value: Any) -> str | None:
    """``general.file_type`` (llama_ftype) as the weight type's usual name, e.g. Q4_K_M."""
    if not isinstance(value, int):
        return None
    try:
        from gguf import LlamaFileType

        name = str(LlamaFileType(value).name)
    except (ImportError, ValueError):
        return None
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")
