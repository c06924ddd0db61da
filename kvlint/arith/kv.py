"""First-principles KV-cache sizes: per token, per sequence, and the cancelled-formula figure.

This is the arithmetic the seeds do by hand. It knows nothing of engines: no blocks, no pages,
no parallelism. ``kvlint.engines`` builds each engine's own accounting on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.arith.dtypes import cache_types
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheTypes


def layer_token_bytes(layer: LayerSpec, types: CacheTypes, kv_heads: int | None = None) -> int:
    """Bytes one token costs in one layer (0 for shared and state layers).

    ``kv_heads`` overrides the layer's head count (an engine's per-GPU share).
    """
    if layer.kind in (CacheKind.SHARED, CacheKind.STATE, CacheKind.NONE):
        return 0
    heads = layer.kv_heads if kv_heads is None else kv_heads
    k = types.k.bytes_for(heads * layer.head_dim_k, heads)
    v = types.v.bytes_for(heads * layer.head_dim_v, heads) if layer.head_dim_v else 0
    return k + v


def layer_sequence_bytes(layer: LayerSpec, types: CacheTypes, context: int) -> int:
    """Bytes one sequence of ``context`` tokens costs in one layer."""
    if layer.kind is CacheKind.STATE:
        return types.state.bytes_for(layer.state_elements)
    tokens = context
    if layer.kind.bounded and layer.window is not None:
        tokens = min(context, layer.window)
    return tokens * layer_token_bytes(layer, types)


@dataclass(frozen=True)
class KvSize:
    """A model's cache cost at one cache dtype."""

    spec: ModelSpec
    types: CacheTypes

    @property
    def per_token_bytes(self) -> int:
        """One token in every growing layer: the figure that scales with context."""
        return sum(
            layer_token_bytes(layer, self.types) * count
            for layer, count in self.spec.layer_shapes
            if layer.kind.grows
        )

    def bounded_bytes(self, context: int) -> int:
        """Windowed and chunked layers at ``context``: fixed once context passes the window."""
        return sum(
            layer_sequence_bytes(layer, self.types, context) * count
            for layer, count in self.spec.layer_shapes
            if layer.kind.bounded
        )

    @property
    def state_bytes(self) -> int:
        """Linear-attention / Mamba state of one sequence, whatever its length.

        Counts the state of STATE layers and of parallel hybrid layers (Falcon-H1: an attention
        layer that also carries ``state_elements``).
        """
        return sum(
            self.types.state.bytes_for(layer.state_elements) * count
            for layer, count in self.spec.layer_shapes
            if layer.kind is CacheKind.STATE or layer.state_elements
        )

    def per_sequence_bytes(self, context: int) -> int:
        return self.per_token_bytes * context + self.bounded_bytes(context) + self.state_bytes

    def tokens_fitting(self, pool_bytes: int) -> int:
        """Tokens of one long sequence that ``pool_bytes`` holds, counting only growing layers."""
        if self.per_token_bytes == 0:
            return 0
        return max(0, pool_bytes // self.per_token_bytes)

    @property
    def cancelled_per_token_bytes(self) -> int:
        """The cancelling head_dim error: ``head_dim = d_model / kv_heads`` makes kv_heads cancel,
        leaving ``2 x layers x d_model x bytes``, the multi-head figure."""
        return 2 * self.spec.num_layers * self.types.k.bytes_for(self.spec.hidden_size)

    @property
    def mha_per_token_bytes(self) -> int:
        """The cache if every query head had its own K and V (no grouped-query saving)."""
        attention = sum(
            count
            for layer, count in self.spec.layer_shapes
            if layer.kind not in (CacheKind.STATE, CacheKind.NONE)
        )
        heads = self.spec.num_attention_heads
        return 2 * attention * self.types.k.bytes_for(heads * self.spec.head_dim)


def kv_size(spec: ModelSpec, cache_dtype: str = "auto", v_dtype: str | None = None) -> KvSize:
    """The model's cache at a cache dtype as any engine spells it (``kvlint.arith.dtypes``)."""
    return KvSize(spec, cache_types(cache_dtype, spec.dtype, v_dtype))
