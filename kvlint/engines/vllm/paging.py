"""vLLM's paged layout on one GPU: layer pages, the hybrid allocator's groups, request blocks.

Mirrors ``vllm/v1/kv_cache_interface.py`` (page sizes, ``max_memory_usage_bytes``) and
``vllm/v1/core/kv_cache_utils.py`` (``_get_kv_cache_groups_uniform_page_size``,
``unify_kv_cache_spec_page_size``); see ``research/engines.md`` 1b and 1c.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from kvlint.engines.common import ceil_div
from kvlint.engines.common import head_dims
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.storage import CacheTypes

# fp8_ds_mla stores 656 bytes per token and nvfp4_ds_mla 352 (mla_attention.py).
_MLA_STATE_BYTES = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}
# Attention kernels need block sizes in multiples of 16 when vLLM raises them to match a Mamba
# page (HybridAttentionMambaModelConfig.verify_and_update_config: kernel_block_alignment_size).
_KERNEL_ALIGNMENT = 16


class PagedLayer(NamedTuple):
    """One layer's cache spec as vLLM builds it on one GPU."""

    kind: str  # "full", "sliding", "chunked", "mamba"
    page_bytes: int  # one block of this layer
    block_size: int  # tokens per block (1 for mamba: a block is one state)
    window: int | None = None

    def blocks_per_request(self, max_model_len: int, in_flight: int, old: bool) -> int:
        """``cdiv(max_memory_usage_bytes, page_size_bytes)`` for one request of full length.

        ``in_flight`` is the tokens scheduled ahead of the window: ``max_num_batched_tokens``
        in 0.11, ``max_concurrent_batches x max_num_batched_tokens`` now.
        """
        if self.kind == "mamba":
            return 1
        if self.kind == "sliding" and self.window:
            tokens = min(self.window - 1 + in_flight, max_model_len)
            return ceil_div(tokens, self.block_size) + 1
        if self.kind == "chunked" and self.window:
            tokens = min(self.window + in_flight, max_model_len)
            return ceil_div(tokens, self.block_size)
        return ceil_div(max_model_len, self.block_size)


class KvGroup(NamedTuple):
    """One KV-cache group: ``size`` layers (``padding`` of them empty) sharing block ids."""

    layer: PagedLayer
    size: int
    padding: int = 0


class StageLayout(NamedTuple):
    """The paged layout of one pipeline stage on one GPU."""

    groups: tuple[KvGroup, ...]
    bytes_per_block: int  # one block id across every layer of a group
    layers: tuple[PagedLayer, ...]  # the real layers (no padding)
    uniform: bool  # one group holding every layer (no hybrid allocator)
    # Each distinct layer of ``layers`` and how many times it occurs: a model repeats a few
    # layer shapes, and the length search asks for every layer's blocks at each step.
    distinct: tuple[tuple[PagedLayer, int], ...] = ()

    @property
    def padding_layers(self) -> int:
        return sum(group.padding for group in self.groups)

    @property
    def block_size(self) -> int:
        return min((g.layer.block_size for g in self.groups if g.layer.kind != "mamba"), default=1)

    def blocks_per_request(self, max_model_len: int, in_flight: int, old: bool) -> int:
        """Blocks one request of ``max_model_len`` tokens takes (every group's share)."""
        if self.uniform:
            return max(
                (
                    layer.blocks_per_request(max_model_len, in_flight, old)
                    for layer, _ in self.distinct
                ),
                default=0,
            )
        return sum(g.layer.blocks_per_request(max_model_len, in_flight, old) for g in self.groups)

    def needed_bytes(self, max_model_len: int, in_flight: int, old: bool) -> int:
        """What ``_check_enough_kv_cache_memory`` compares with the available memory: 0.11 sums
        every real layer's ``max_memory_usage_bytes``; the current line counts whole blocks of
        every group, padding included."""
        if old:
            return sum(
                layer.blocks_per_request(max_model_len, in_flight, old) * layer.page_bytes * count
                for layer, count in self.distinct
            )
        return self.bytes_per_block * self.blocks_per_request(max_model_len, in_flight, old)


def paged_layer(
    layer: LayerSpec,
    types: CacheTypes,
    *,
    tp: int,
    block_size: int,
    cache_dtype: str,
    hybrid_enabled: bool,
    indexer_bytes: int = 0,
) -> PagedLayer | None:
    """The vLLM spec of one model layer on one GPU (None for layers without their own cache).

    ``indexer_bytes`` is DeepSeek sparse attention's indexer key cache per token, counted in
    the layer's page (vLLM keeps it as its own cache layer beside the MLA latent).
    """
    if layer.kind in (CacheKind.SHARED, CacheKind.NONE):
        return None
    if layer.kind is CacheKind.STATE:
        # Mamba / linear-attention state: heads are split across TP ranks.
        page = max(1, types.state.bytes_for(layer.state_elements) // max(1, tp))
        return PagedLayer("mamba", page, 1)
    if layer.kind is CacheKind.MLA:
        # One latent vector, heads never split (get_num_kv_heads() == 1 under MLA).
        per_token = _MLA_STATE_BYTES.get(cache_dtype) or types.k.bytes_for(layer.head_dim_k)
        per_token += indexer_bytes
        return PagedLayer("full", per_token * block_size, block_size)
    heads = max(1, layer.kv_heads // max(1, tp))
    head_k, head_v = head_dims(layer)  # K = V layers still store both
    per_token = types.k.bytes_for(heads * head_k, heads) + types.v.bytes_for(heads * head_v, heads)
    kind = "full"
    if hybrid_enabled and layer.kind is CacheKind.SLIDING and layer.window:
        kind = "sliding"
    elif hybrid_enabled and layer.kind is CacheKind.CHUNKED and layer.window:
        kind = "chunked"
    window = layer.window if kind != "full" else None
    return PagedLayer(kind, per_token * block_size, block_size, window)


def _unify_pages(layers: list[PagedLayer]) -> list[PagedLayer]:
    """``unify_kv_cache_spec_page_size``: raise a layer's block size when the largest page is a
    multiple of its page, else pad the page (Mamba, non-MLA attention). With Mamba present vLLM
    first raises the attention block size until one attention page holds a Mamba state."""
    mamba = [layer.page_bytes for layer in layers if layer.kind == "mamba"]
    if mamba:
        largest_state = max(mamba)
        raised: list[PagedLayer] = []
        for layer in layers:
            if layer.kind == "mamba":
                raised.append(layer)
                continue
            per_token = max(1, layer.page_bytes // layer.block_size)
            block = _KERNEL_ALIGNMENT * ceil_div(largest_state, _KERNEL_ALIGNMENT * per_token)
            block = max(block, layer.block_size)
            raised.append(layer._replace(block_size=block, page_bytes=per_token * block))
        layers = raised
    largest = max(layer.page_bytes for layer in layers)
    unified: list[PagedLayer] = []
    for layer in layers:
        if layer.page_bytes == largest:
            unified.append(layer)
        elif layer.kind != "mamba" and largest % layer.page_bytes == 0:
            ratio = largest // layer.page_bytes
            unified.append(layer._replace(block_size=layer.block_size * ratio, page_bytes=largest))
        else:
            unified.append(layer._replace(page_bytes=largest))  # page_size_padded
    return unified


def stage_layout(layers: list[PagedLayer]) -> StageLayout:
    """Group one stage's layers as the hybrid allocator does."""
    if not layers:
        return StageLayout((), 0, (), True)
    kinds = {(layer.kind, layer.window) for layer in layers}
    if len(kinds) == 1 and layers[0].kind != "mamba":
        # One attention type: a single group; layers of different head sizes share block ids
        # (UniformTypeKVCacheSpecs: the page is the sum of the members' pages).
        group = KvGroup(layers[0], len(layers))
        page = sum(layer.page_bytes for layer in layers)
        return StageLayout((group,), page, tuple(layers), True, _distinct(layers))
    unified = _unify_pages(layers)
    counts = Counter((layer.kind, layer.window) for layer in unified)
    smallest, largest = min(counts.values()), max(counts.values())
    # "If max < 1.5 x min, pad to max instead" (gpt-oss-20b + eagle: 12 sw + 13 full).
    group_size = largest if largest < 1.5 * smallest else smallest
    groups: list[KvGroup] = []
    for key, count in counts.items():
        example = next(layer for layer in unified if (layer.kind, layer.window) == key)
        n_groups = ceil_div(count, group_size)
        for index in range(n_groups):
            members = min(group_size, count - index * group_size)
            groups.append(KvGroup(example, group_size, group_size - members))
    page = max(layer.page_bytes for layer in unified)
    return StageLayout(tuple(groups), group_size * page, tuple(unified), False, _distinct(unified))


def _distinct(layers: list[PagedLayer]) -> tuple[tuple[PagedLayer, int], ...]:
    return tuple(Counter(layers).items())
