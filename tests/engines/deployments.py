"""Deployments and model specs built directly for the engine tests (no file parsing)."""

from __future__ import annotations

from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Span
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec

SPAN = Span("plan.yaml", 1, 1)


def deployment(engine: str = "vllm", **values: Any) -> Deployment:
    """A Deployment whose named fields hold ``values`` (each a Sourced with a dummy span)."""
    dep = Deployment(
        path="plan.yaml", span=SPAN, name="plan", carrier="plan", engine=Sourced(engine, SPAN)
    )
    for key, value in values.items():
        if key == "env":
            dep.env = {k: Sourced(v, SPAN) for k, v in value.items()}
        elif key == "settings":
            dep.settings = {k: Sourced(v, SPAN) for k, v in value.items()}
        else:
            assert hasattr(dep, key), key
            setattr(dep, key, Sourced(value, SPAN))
    return dep


def dense(
    *,
    layers: int = 32,
    kv_heads: int = 8,
    head_dim: int = 128,
    hidden: int = 4096,
    heads: int = 32,
    vocab: int = 128256,
    max_len: int = 131072,
    dtype: str = "bfloat16",
    param_count: int | None = 8_030_261_248,
) -> ModelSpec:
    """A dense GQA model; the defaults are Llama-3.1-8B's shape."""
    layer = LayerSpec(CacheKind.FULL, kv_heads, head_dim, head_dim)
    return ModelSpec(
        name="synthetic/dense",
        model_type="llama",
        layers=(layer,) * layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=vocab,
        dtype=dtype,
        max_position_embeddings=max_len,
        param_count=param_count,
        intermediate_size=14336,
    )


def with_layers(spec: ModelSpec, layers: tuple[LayerSpec, ...], **changes: Any) -> ModelSpec:
    from dataclasses import replace

    return replace(spec, layers=layers, **changes)
