"""How a cache stores its values: a storage type per value block, and K, V and state types
(records; ``kvlint.arith.dtypes`` parses every engine's spelling into them)."""

from __future__ import annotations

from typing import NamedTuple

from kvlint.lazy_re import lazy

# Names that are weight formats and never a KV cache dtype (AWQ, GPTQ, bitsandbytes, GGUF weight
# types): a cache set to one of these was meant to follow the weights. llama.cpp's cache types
# q4_0, q8_0, iq4_nl ... are not in it: they are cache types as well as weight types.
_WEIGHT_ONLY = lazy(
    r"^(awq|awq_marlin|gptq|gptq_marlin|marlin|int4|int8|w4a16|w8a8|w8a16|nf4|bitsandbytes|"
    r"bitsandbytes-nf4|gguf|exl2|squeezellm|compressed-tensors|4bit|8bit|"
    r"q[2-6]_k(_[sml])?|iq[1-4]_(xxs|xs|s|m)|q4_0_4_[48]|q4_0_8_8|tq[12]_0)$"
)


def is_weight_format(value: str) -> bool:
    """Whether ``value`` names a weight quantisation that no engine takes as a cache dtype."""
    return bool(_WEIGHT_ONLY.match(value.strip().lower()))


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
