"""Model families by HF ``model_type``: one module per family behind the ``Family`` protocol.

The decoders of ``llama.py`` (every plain GQA model type) and ``deepseek.py`` (MLA) are imported
with the package; every other family module when a model of one of its types is read (most
models are one of those decoders, and the other modules were ~1.5 ms of every check).
"""

from __future__ import annotations

import importlib
from typing import cast

from kvlint.model.families import deepseek
from kvlint.model.families import llama
from kvlint.model.families.base import Family

_DECODERS: dict[str, Family] = {
    **{model_type: llama.DECODER for model_type in llama.MODEL_TYPES},
    **{model_type: deepseek.MLA for model_type in deepseek.MODEL_TYPES},
}

# model_type -> (the module under kvlint.model.families, the Family's name in it).
_OTHERS: dict[str, tuple[str, str]] = {
    "gemma": ("gemma", "GEMMA"),
    "gemma2": ("gemma", "GEMMA2"),
    "gemma3": ("gemma", "GEMMA3"),
    "gemma3_text": ("gemma", "GEMMA3"),
    "gemma3n": ("gemma3n", "GEMMA3N"),
    "gemma3n_text": ("gemma3n", "GEMMA3N"),
    "gemma4": ("gemma4", "GEMMA4"),
    "gemma4_text": ("gemma4", "GEMMA4"),
    "cohere2": ("cohere", "COHERE2"),
    "llama4": ("llama4", "LLAMA4"),
    "llama4_text": ("llama4", "LLAMA4"),
    "qwen3_next": ("qwen3_next", "QWEN3_NEXT"),
    # Qwen3.5 / 3.6: the same gated DeltaNet + gated attention layers, named in layer_types
    "qwen3_5": ("qwen3_next", "QWEN3_NEXT"),
    "qwen3_5_text": ("qwen3_next", "QWEN3_NEXT"),
    "qwen3_5_moe": ("qwen3_next", "QWEN3_NEXT"),
    "qwen3_5_moe_text": ("qwen3_next", "QWEN3_NEXT"),
    "nemotron-nas": ("nemotron_nas", "NEMOTRON_NAS"),
    "nemotron_h": ("nemotron_h", "NEMOTRON_H"),
    "jamba": ("jamba", "JAMBA"),
    "falcon_h1": ("falcon_h1", "FALCON_H1"),
    "falcon": ("falcon", "FALCON"),
    "RefinedWeb": ("falcon", "FALCON"),
    "RefinedWebModel": ("falcon", "FALCON"),
    "chatglm": ("chatglm", "CHATGLM"),
    "granitemoehybrid": ("granite_hybrid", "GRANITE_HYBRID"),
}


def model_types() -> frozenset[str]:
    """Every model_type a family is registered for."""
    return frozenset(_DECODERS) | frozenset(_OTHERS)


def family_for(model_type: str) -> Family | None:
    """The family registered for ``model_type`` (as HF spells it), or None: an unknown type is
    refused (``kvlint.model.families.unsized``), never read as a generic decoder."""
    found = _DECODERS.get(model_type)
    if found is not None:
        return found
    where = _OTHERS.get(model_type)
    if where is None:
        return None
    module, name = where
    return cast(Family, getattr(importlib.import_module(f"{__name__}.{module}"), name))
