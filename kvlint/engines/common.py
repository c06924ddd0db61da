"""Helpers every engine module shares: reading a Deployment's values and the model's lengths."""

from __future__ import annotations

from typing import TypeVar

from kvlint.deployment import Sourced
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec

T = TypeVar("T")


def val(sourced: Sourced[T] | None) -> T | None:
    """The value of an optional setting."""
    return None if sourced is None else sourced.value


def flag(sourced: Sourced[bool] | None) -> bool:
    """A boolean setting, False when unset."""
    return bool(sourced.value) if sourced is not None else False


def positive(value: int | None, default: int = 1) -> int:
    """A parallel size: ``default`` when unset or not positive."""
    return value if value is not None and value > 0 else default


def setting(settings: dict[str, Sourced[object]], *names: str) -> object | None:
    """The first of ``names`` present in the engine-spelled settings (dashes or underscores)."""
    for name in names:
        for key in (name, name.replace("_", "-"), name.replace("-", "_")):
            if key in settings:
                return settings[key].value
    return None


def head_dims(layer: LayerSpec) -> tuple[int, int]:
    """(K, V) head dims as the engines store them. A K = V layer (Gemma 4's global attention,
    ``attention_k_eq_v``) shares a projection, not a cache: every engine's attention keeps a V
    tensor of the K width beside K (vLLM's ``AttentionSpec.head_size_v`` defaults to
    ``head_size``)."""
    if layer.kind is CacheKind.FULL_KV_SHARED:
        return layer.head_dim_k, layer.head_dim_k
    return layer.head_dim_k, layer.head_dim_v


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# rope types whose factor does not extend max_position_embeddings (engines.md 1g).
_UNSCALED_ROPE = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")


def derived_max_model_len(spec: ModelSpec, version: tuple[int, ...] | None = None) -> int:
    """vLLM's derived maximum length (``_get_and_verify_max_len``): the config's length scaled
    by the RoPE factor, except for the rope types that already include it. In 0.11 a YaRN factor
    multiplies ``original_max_position_embeddings``; from the current line on YaRN is left as is.
    2048 when the config states no length."""
    derived = spec.max_position_embeddings or 2048
    rope = spec.rope_scaling
    if rope is None or "gemma3" in spec.model_type:
        return derived
    old = version is not None and version < (0, 21)
    if old and rope.rope_type == "yarn":
        base = rope.original_max_position_embeddings or derived
        return int(base * (rope.factor or 1.0))
    if rope.rope_type in _UNSCALED_ROPE or not rope.factor:
        return derived
    return int(derived * rope.factor)
