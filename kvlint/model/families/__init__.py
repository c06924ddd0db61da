"""Model families by HF ``model_type``: one module per family behind the ``Family`` protocol."""

from __future__ import annotations

from kvlint.model.families import deepseek
from kvlint.model.families import llama
from kvlint.model.families.base import Family

FAMILIES: dict[str, Family] = {
    **{model_type: llama.DECODER for model_type in llama.MODEL_TYPES},
    **{model_type: deepseek.MLA for model_type in deepseek.MODEL_TYPES},
}

# An unknown model_type whose config has the standard keys is read as this family.
GENERIC: Family = llama.DECODER


def family_for(model_type: str) -> Family | None:
    """The family registered for ``model_type`` (case as HF spells it), or None."""
    return FAMILIES.get(model_type)
