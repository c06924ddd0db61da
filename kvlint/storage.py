"""How a cache stores its values: a storage type per value block, and K, V and state types
(records; ``kvlint.arith.dtypes`` parses every engine's spelling into them)."""

from __future__ import annotations

from typing import NamedTuple


class CacheDtype(NamedTuple):
    """A storage type: ``block_bytes`` bytes hold ``block_values`` values, and each head vector
    stored carries ``head_bytes`` more (an inline scale or norm)."""

    name: str
    block_values: int
    block_bytes: int
    quantised: bool = False
    head_bytes: int = 0

    def bytes_for(self, values: int, heads: int = 0) -> int:
        """Bytes to store ``values`` values (whole blocks, as ggml rows are laid out), split into
        ``heads`` head vectors when the type adds bytes per vector."""
        blocks = -(-values // self.block_values)
        return blocks * self.block_bytes + heads * self.head_bytes

    @property
    def bits_per_value(self) -> float:
        return 8 * self.block_bytes / self.block_values


class CacheTypes(NamedTuple):
    """K and V storage types (llama.cpp sets them apart with ``-ctk`` / ``-ctv``, vLLM's
    TurboQuant presets store K and V differently)."""

    k: CacheDtype
    v: CacheDtype
    state: CacheDtype  # linear-attention / Mamba state, in the model dtype

    @property
    def label(self) -> str:
        return self.k.name if self.k == self.v else f"k={self.k.name},v={self.v.name}"
