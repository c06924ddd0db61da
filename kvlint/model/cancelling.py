"""A config.json whose ``head_dim`` is the cancelling formula, read back to the model's own.

A calculator that writes ``head_dim = hidden_size / num_key_value_heads`` into a config it
hands on (a hand-written config.json for a plan) deletes the grouped-query saving: the KV heads
cancel and the cache is sized as if every query head had its own. Real checkpoints do set a
``head_dim`` that is not ``hidden_size / num_attention_heads`` (Gemma, Qwen 3, Mistral Nemo), and
one (Qwen3-0.6B: 1024 / 8 KV heads = 128) even equals ``hidden_size / num_key_value_heads``; so
a config is read as cancelled only when no built-in catalog checkpoint has its shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec

# The shape that decides: (hidden_size, query heads, KV heads, head_dim).
Shape = tuple[int, int, int, int]


def cancelled(spec: ModelSpec) -> bool:
    """Whether ``spec``'s head_dim is ``hidden_size / KV heads`` where that cannot be a head:
    grouped-query attention whose query heads x head_dim is not hidden_size."""
    heads, kv, hidden, head_dim = (
        spec.num_attention_heads,
        spec.num_key_value_heads,
        spec.hidden_size,
        spec.head_dim,
    )
    if not (0 < kv < heads) or hidden % kv or hidden % heads:
        return False
    if any(layer.kind is CacheKind.MLA for layer in spec.layers):
        return False
    return head_dim == hidden // kv and heads * head_dim != hidden


def undo(
    spec: ModelSpec,
    rebuild: Callable[[int], ModelSpec],
    published: frozenset[Shape] | None = None,
) -> ModelSpec:
    """``spec`` read again (``rebuild(head_dim)``: the config with that head_dim) at
    ``hidden_size / query heads`` when its config wrote the cancelling formula in a shape no
    catalog checkpoint has, so the cache and the weights are the model's; ``config_head_dim``
    keeps what the config said (KV101 reports it). ``spec`` itself otherwise."""
    if not cancelled(spec):
        return spec
    shape = (spec.hidden_size, spec.num_attention_heads, spec.num_key_value_heads, spec.head_dim)
    if shape in (published if published is not None else catalog_shapes()):
        return spec
    written, head_dim = spec.head_dim, spec.hidden_size // spec.num_attention_heads
    note = (
        f"the config's head_dim {written} is hidden_size {spec.hidden_size} / "
        f"{spec.num_key_value_heads} KV heads (the cancelling formula: "
        f"{spec.num_attention_heads} query heads x {written} = "
        f"{spec.num_attention_heads * written:,}, not hidden_size); read at head_dim {head_dim} "
        f"= hidden_size / query heads"
    )
    read = rebuild(head_dim)
    return dataclasses.replace(read, config_head_dim=written, notes=(*read.notes, note))


def catalog_shapes() -> frozenset[Shape]:
    """The shapes of the catalog's checkpoints (read only when a config looks cancelled)."""
    from kvlint.model import catalog

    return frozenset(shape for entry in catalog.entries() for shape in _shapes(entry.config))


def _shapes(config: Mapping[str, Any]) -> Iterator[Shape]:
    for part in (config, config.get("text_config"), config.get("llm_config")):
        if not isinstance(part, Mapping):
            continue
        heads = part.get("num_attention_heads")
        values = (part.get("hidden_size"), heads, part.get("num_key_value_heads", heads))
        numbers = [x for x in (*values, part.get("head_dim")) if isinstance(x, int) and x > 0]
        if len(numbers) == 4:
            yield (numbers[0], numbers[1], numbers[2], numbers[3])
