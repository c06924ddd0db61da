"""A deployment's overrides of the model config, applied to a ModelSpec (pure).

Engines let a deployment change what the config says: vLLM's ``--hf-overrides`` (a JSON object
merged into the config) and ``--rope-scaling``, SGLang's ``--json-model-override-args``. The
keys that decide the length an engine accepts (``max_position_embeddings``, ``rope_scaling`` /
``rope_parameters``) are applied here, once, by the engine's settle step; every rule and
``kvlint size`` then read the same model. Keys that change the cache's shape (``head_dim``) are
not applied: KV101 reports them as stated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kvlint.model.spec import ModelSpec
from kvlint.model.spec import RopeScaling


def rope_from_mapping(value: Any) -> RopeScaling | None:
    """A ``--rope-scaling`` / ``hf_overrides.rope_scaling`` mapping as the config would hold it."""
    if not isinstance(value, Mapping):
        return None
    kind = value.get("rope_type", value.get("type", "default"))
    factor = value.get("factor")
    original = value.get("original_max_position_embeddings")
    return RopeScaling(
        str(kind),
        float(factor)
        if isinstance(factor, (int, float)) and not isinstance(factor, bool)
        else None,
        original if isinstance(original, int) and not isinstance(original, bool) else None,
    )


def with_length_overrides(
    spec: ModelSpec, overrides: Mapping[str, Any] | None, rope_scaling: Any = None
) -> ModelSpec:
    """``spec`` with the deployment's ``max_position_embeddings`` and RoPE scaling applied.

    ``rope_scaling`` (``--rope-scaling``) wins over the overrides' own ``rope_scaling`` or
    ``rope_parameters``, as vLLM applies the flag after ``--hf-overrides``."""
    overrides = overrides if isinstance(overrides, Mapping) else {}
    changes: dict[str, Any] = {}
    rope = rope_from_mapping(rope_scaling) or rope_from_mapping(
        overrides.get("rope_scaling") or overrides.get("rope_parameters")
    )
    length = overrides.get("max_position_embeddings")
    if isinstance(length, int) and not isinstance(length, bool) and length > 0:
        changes["max_position_embeddings"] = length
    if rope is not None:
        changes["rope_scaling"] = rope
    return dataclasses.replace(spec, **changes) if changes else spec


def length_origin(spec: ModelSpec, derived: int) -> str:
    """How the derived maximum length came about, as KV402 and ``kvlint size`` word it:
    ``max_position_embeddings=32768 x the `yarn` RoPE factor 4``."""
    key = spec.max_length_key or "max_position_embeddings"
    base = spec.max_position_embeddings or 2048
    origin = f"{key}={base}"
    scale = spec.rope_scaling
    if scale is not None and scale.factor:
        label = f"the `{scale.rope_type}` RoPE factor {scale.factor:g}"
        # llama3 / yarn / longrope factors are already in the length (vLLM's
        # _get_and_verify_max_len leaves them out); linear / dynamic ones multiply it.
        origin += f" x {label}" if derived != base else f", which {label} leaves as is"
    return origin
