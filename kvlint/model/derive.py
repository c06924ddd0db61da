"""Derivatives by name: a mirror, quantisation or release of a catalog model, read from its name.

``RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8-dynamic``, ``unsloth/Qwen2.5-7B-Instruct-bnb-4bit``,
``mlx-community/Llama-3.2-3B-Instruct-4bit`` and ``llama3.1:8b-instruct-q4_K_M`` are the
architecture of a catalog entry plus what their names state (the weight quantisation). The name
must be a catalog name followed only by suffixes this module knows: a fine-tune with words of
its own (``Hermes-3-Llama-3.1-8B``) is not matched, and stays a model kvlint cannot resolve. The
match is reported as an info finding (KV908), never silently.
"""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple

from kvlint.lazy_re import lazy
from kvlint.model import catalog
from kvlint.model.spec import ModelSpec
from kvlint.model.spec import Quantization


class Stated(NamedTuple):
    """What a name's suffixes say."""

    quantization: Quantization | None
    words: tuple[str, ...]  # the suffixes as written, for the finding
    gguf: bool = False  # llama.cpp weights: the cache is llama.cpp's f16


class Derived(NamedTuple):
    entry: catalog.CatalogEntry
    stated: Stated


# Suffix words (lower case) naming a weight quantisation: (method, bits per weight). Release words
# (Instruct, it, a date) and the bits words (4bit, Int8) leave the architecture alone too.
_QUANT_WORDS: dict[str, tuple[str, float | None]] = {
    "awq": ("awq", 4),
    "gptq": ("gptq", 4),
    "fp8": ("fp8", 8),
    "nvfp4": ("nvfp4", 4.5),
    "mxfp4": ("mxfp4", 4.25),
    "fp4": ("nvfp4", 4.5),
    "w4a16": ("compressed-tensors", 4),
    "w8a8": ("compressed-tensors", 8),
    "w8a16": ("compressed-tensors", 8),
    "w4a8": ("compressed-tensors", 4),
    "bnb": ("bitsandbytes", 4),
    "exl2": ("exl2", None),
}
_RELEASE_WORDS = frozenset(
    {"it", "instruct", "chat", "base", "hf", "dynamic", "block", "static", "quantized",
     "unquantized", "qat", "mlx", "bf16", "fp16", "int", "gguf", "unsloth", "g128", "pt",
     "thinking", "latest", "text", "sft", "dpo", "rl"}
)  # fmt: skip
_BITS = lazy(r"^(?:int|q)?(?P<bits>[2-8])(?:bit|bits)?$")  # 4bit, int4, 8bit, Int8
_DATE = lazy(r"^(?:v)?(?:\d{4}|\d{6}|\d{8})$")  # 2507, 0528, 250926, a dated release
_GGUF_QUANT = lazy(r"^(?:ud-)?(?:i?q[1-8](?:_[0-9a-z]+)*|tq[12]_0)$", re.I)
_SPLIT = lazy(r"[-.]")


def derive(ref: str) -> Derived | None:
    """The catalog entry ``ref`` is a derivative of, and what its name states; None when the
    name is not a catalog name plus known suffixes."""
    text = catalog.normalise(ref).removeprefix("registry.ollama.ai/")
    if not text or text.count("/") > 1:
        return None
    org, _, name = text.rpartition("/")
    if ":" in name or (org in ("", "library") and name in OLLAMA_LATEST):
        return _ollama(name)
    # Tokens split at '-' and '.' (an underscore stays inside: Q4_K_M, q4_0)
    parts = re.split(r"([-.])", name)
    # The longest prefix (in whole tokens) that names a catalog entry wins.
    for cut in range(len(parts), 0, -2):
        base = "".join(parts[:cut])
        rest = [p for p in _SPLIT.split("".join(parts[cut:])) if p]
        entry = _base_entry(org, base)
        if entry is None:
            continue
        stated = _read_suffixes(rest, org)
        if stated is None:
            return None
        if not rest and (not org or entry.id.split("/")[0].lower() == org):
            return None  # the entry itself: the catalog lookup answers that
        return Derived(entry, stated)
    return None


def _base_entry(org: str, base: str) -> catalog.CatalogEntry | None:
    """The entry ``base`` names, in the derivative's own organisation or (for a mirror or an
    unknown organisation) by its bare name."""
    for name in (base, f"{base}-hf"):  # Meta's Llama 2 repositories end in -hf
        if org:
            entry = catalog.find_entry(f"{org}/{name}")
            if entry is not None:
                return entry
        entry = catalog.find_entry(name)
        if entry is not None:
            return entry
    return None


def _read_suffixes(words: list[str], org: str) -> Stated | None:
    """What the suffix words say, or None when one of them is a word of the name's own."""
    method: str | None = None
    bits: float | None = None
    gguf = False
    for word in words:
        lower = word.lower()
        if lower in _QUANT_WORDS:
            if method is None:  # the first method named wins (`AWQ-INT4`, `GPTQ-Int8`)
                method, bits = _QUANT_WORDS[lower]
            continue
        if lower in _RELEASE_WORDS:
            gguf = gguf or lower == "gguf"
            continue
        match = _BITS.match(lower)
        if match:
            bits = float(match["bits"])
            continue
        if _GGUF_QUANT.match(lower):
            method, gguf = f"gguf:{word.upper()}", True
            continue
        if _DATE.match(lower):
            continue
        return None  # a word of its own: a fine-tune kvlint cannot vouch for
    if any(w.lower() == "unquantized" for w in words):
        # Google's `-qat-q4_0-unquantized`: the QAT checkpoint in 16-bit weights
        return Stated(None, tuple(words))
    if method is None and bits is not None:
        # `4bit` alone: an MLX bundle (mlx-community's, or one named -mlx), else bitsandbytes
        mlx = org == "mlx-community" or any(w.lower() == "mlx" for w in words)
        method = "mlx" if mlx else "bitsandbytes"
    if method is None:
        return Stated(None, tuple(words), gguf)
    return Stated(Quantization(method, bits), tuple(words), gguf)


# --- Ollama library tags ----------------------------------------------------------------


# The size Ollama's `latest` tag stands for, per library model (each model's page on the Ollama
# library lists its tags; `latest` is the one `ollama pull NAME` takes).
OLLAMA_LATEST = {
    "llama3.1": "8b", "llama3.2": "3b", "llama3.3": "70b", "llama3": "8b", "llama2": "7b",
    "qwen3": "8b", "qwen2.5": "7b", "qwen2": "7b", "gemma3": "4b", "gemma2": "9b",
    "gemma": "7b", "gemma3n": "e4b", "phi4": "14b", "phi3": "mini", "mistral": "7b",
    "mixtral": "8x7b", "mistral-nemo": "12b", "gpt-oss": "20b", "deepseek-v3": "671b",
    "qwen3-coder": "30b", "command-r": "35b", "command-r-plus": "104b", "falcon": "7b",
    "glm4": "9b", "llama4": "scout", "granite3.3": "8b", "codellama": "7b",
    "qwen2.5-coder": "7b", "phi3.5": "3.8b", "phi4-mini": "3.8b", "smollm2": "1.7b",
    "falcon3": "7b", "olmo2": "7b", "tinyllama": "1.1b", "aya": "8b",
}  # fmt: skip


def _ollama(name: str) -> Derived | None:
    """``llama3.1:8b-instruct-q4_K_M``: the entry the ``library:size`` alias names, with the
    GGUF weight type the tag states (Ollama's default tags are Q4_K_M)."""
    library, _, tag = name.partition(":")
    if tag in ("", "latest"):
        tag = OLLAMA_LATEST.get(library, "")
    size, _, variant = tag.partition("-")
    entry = catalog.find_entry(f"{library}:{size}") if size else None
    if entry is None:
        return None
    words = [w for w in variant.split("-") if w]
    # Ollama's tags are Q4_K_M unless they say otherwise; its QAT tags (`27b-it-qat`) are the
    # Q4_0 weights Google trained for.
    quant = "Q4_0" if "qat" in (w.lower() for w in words) else "Q4_K_M"
    for word in words:
        lower = word.lower()
        if _GGUF_QUANT.match(lower) or lower in ("fp16", "bf16", "f16"):
            quant = {"FP16": "F16"}.get(word.upper(), word.upper())
        elif lower not in _RELEASE_WORDS:
            return None
    stated = Stated(Quantization(f"gguf:{quant}", None), (tag,), gguf=True)
    return Derived(entry, stated)


def spec_of(found: Derived) -> ModelSpec:
    """The ModelSpec of a derivative: its entry's, with the stated weight quantisation."""
    spec = catalog.entry_spec(found.entry.id)
    quant = found.stated.quantization
    changes: dict[str, object] = {}
    if quant is not None:
        changes["quantization"] = quant
        if quant.method in ("awq", "gptq"):
            changes["dtype"] = "float16"  # AWQ and GPTQ checkpoints are float16
    if found.stated.gguf:
        from kvlint.model.gguf import GGUF_CACHE_DTYPE
        from kvlint.model.gguf import QUANT_BITS

        changes["dtype"] = GGUF_CACHE_DTYPE
        if quant is not None and quant.method.startswith("gguf:"):
            bits = QUANT_BITS.get(quant.method.removeprefix("gguf:").removeprefix("UD-"))
            changes["quantization"] = Quantization(quant.method, bits)
    return dataclasses.replace(spec, **changes) if changes else spec  # type: ignore[arg-type]


_LABELS = {"awq": "AWQ", "gptq": "GPTQ", "fp8": "FP8", "nvfp4": "NVFP4", "mxfp4": "MXFP4",
           "mlx": "MLX", "exl2": "EXL2"}  # fmt: skip


def describe(found: Derived) -> str:
    """``meta-llama/Meta-Llama-3.1-70B-Instruct with AWQ 4-bit weights``."""
    quant = found.stated.quantization
    if quant is None:
        return found.entry.id
    method = quant.method.removeprefix("gguf:")
    label = _LABELS.get(method, method)
    bits = f" {quant.weight_bits:g}-bit" if quant.weight_bits and ":" not in quant.method else ""
    return f"{found.entry.id} with {label}{bits} weights"
