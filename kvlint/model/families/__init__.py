"""Model families by HF ``model_type``: one module per family behind the ``Family`` protocol."""

from __future__ import annotations

from kvlint.model.families import deepseek
from kvlint.model.families import llama
from kvlint.model.families.base import Family
from kvlint.model.families.chatglm import CHATGLM
from kvlint.model.families.cohere import COHERE2
from kvlint.model.families.falcon import FALCON
from kvlint.model.families.falcon_h1 import FALCON_H1
from kvlint.model.families.gemma import GEMMA
from kvlint.model.families.gemma import GEMMA2
from kvlint.model.families.gemma import GEMMA3
from kvlint.model.families.gemma3n import GEMMA3N
from kvlint.model.families.gemma4 import GEMMA4
from kvlint.model.families.granite_hybrid import GRANITE_HYBRID
from kvlint.model.families.jamba import JAMBA
from kvlint.model.families.llama4 import LLAMA4
from kvlint.model.families.nemotron_h import NEMOTRON_H
from kvlint.model.families.nemotron_nas import NEMOTRON_NAS
from kvlint.model.families.qwen3_next import QWEN3_NEXT

FAMILIES: dict[str, Family] = {
    **{model_type: llama.DECODER for model_type in llama.MODEL_TYPES},
    **{model_type: deepseek.MLA for model_type in deepseek.MODEL_TYPES},
    "gemma": GEMMA,
    "gemma2": GEMMA2,
    "gemma3": GEMMA3,
    "gemma3_text": GEMMA3,
    "gemma3n": GEMMA3N,
    "gemma3n_text": GEMMA3N,
    "gemma4": GEMMA4,
    "gemma4_text": GEMMA4,
    "cohere2": COHERE2,
    "llama4": LLAMA4,
    "llama4_text": LLAMA4,
    "qwen3_next": QWEN3_NEXT,
    # Qwen3.5 / 3.6: the same gated DeltaNet + gated attention layers, named in layer_types
    "qwen3_5": QWEN3_NEXT,
    "qwen3_5_text": QWEN3_NEXT,
    "qwen3_5_moe": QWEN3_NEXT,
    "qwen3_5_moe_text": QWEN3_NEXT,
    "nemotron-nas": NEMOTRON_NAS,
    "nemotron_h": NEMOTRON_H,
    "jamba": JAMBA,
    "falcon_h1": FALCON_H1,
    "falcon": FALCON,
    "RefinedWeb": FALCON,
    "RefinedWebModel": FALCON,
    "chatglm": CHATGLM,
    "granitemoehybrid": GRANITE_HYBRID,
}


def family_for(model_type: str) -> Family | None:
    """The family registered for ``model_type`` (as HF spells it), or None: an unknown type is
    refused (``kvlint.model.families.unsized``), never read as a generic decoder."""
    return FAMILIES.get(model_type)
