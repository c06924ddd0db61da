"""vLLM's paged layout on one GPU: layer pages, the hybrid allocator's groups, request blocks.

Mirrors ``vllm/v1/kv_cache_interface.py`` (page sizes, ``max_memory_usage_bytes``) and
``vllm/v1/core/kv_cache_utils.py`` (``_get_kv_cache_groups_uniform_page_size``,
``unify_kv_cache_spec_page_size``); see ``research/engines.md`` 1b and 1c.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple

from kvlint.arith.dtypes import cache_types
from kvlint.engines.common import ceil_div
from kvlint.engines.common import head_dims
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheDtype
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
    # Mamba: the state blocks one request holds (MambaSpec.max_memory_usage_bytes: 1 +
    # speculative tokens, 2 + them in "align" mode); 0 in "all" mode, one per block of tokens,
    # whose block is a multiple of the Mamba chunk (``state_chunk``, 0 when the config is silent).
    state_blocks: int = 1
    state_chunk: int = 0
    # What else vLLM's attention spec compares (KV heads on the rank, K and V head sizes): two
    # attention layers of one kind but other shapes are two spec types, grouped apart by the
    # hybrid allocator even where their pages come out alike (a DFlash drafter's 4 x 128 heads
    # beside Qwen3.6's 2 x 256 at TP 2). Empty for state layers.
    shape: tuple[int, ...] = ()

    def blocks_per_request(self, max_model_len: int, in_flight: int, old: bool) -> int:
        """``cdiv(max_memory_usage_bytes, page_size_bytes)`` for one request of full length.

        ``in_flight`` is the tokens scheduled ahead of the window: ``max_num_batched_tokens``
        in 0.11, ``max_concurrent_batches x max_num_batched_tokens`` now.
        """
        if self.kind == "mamba":
            return self.state_blocks or ceil_div(max_model_len, self.block_size)
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


class StatePaging(NamedTuple):
    """How vLLM stores one request's recurrent state: the conv and recurrent (SSM) dtypes
    (``mamba_cache_dtype``, ``mamba_ssm_cache_dtype``), the speculative tokens (one more conv
    row each, ``conv_kernel - 1 + num_spec``) and the state blocks a request holds."""

    conv: CacheDtype
    ssm: CacheDtype
    speculative_tokens: int = 0
    blocks: int = 1  # 0: "all" mode, a state per block of tokens
    chunk: int = 0  # the Mamba chunk size "all" mode aligns the block to (0: not known)

    def page_bytes(self, layer: LayerSpec, tp: int) -> int:
        """``MambaSpec.page_size_bytes`` on one of ``tp`` ranks: each state tensor's shape
        (conv dim and heads split over the ranks) times its dtype's size."""
        tp = max(1, tp)
        if not layer.conv_elements:  # no split known: the whole state in the conv dtype
            return max(1, self.conv.bytes_for(layer.state_elements) // tp)
        conv = layer.conv_elements + self.speculative_tokens * layer.conv_width
        temporal = layer.state_elements - layer.conv_elements
        return max(1, self.conv.bytes_for(conv // tp) + self.ssm.bytes_for(temporal // tp))


def paged_layer(
    layer: LayerSpec,
    types: CacheTypes,
    *,
    tp: int,
    block_size: int,
    cache_dtype: str,
    hybrid_enabled: bool,
    indexer_bytes: int = 0,
    state: StatePaging | None = None,
) -> PagedLayer | None:
    """The vLLM spec of one model layer on one GPU (None for layers without their own cache).

    ``indexer_bytes`` is DeepSeek sparse attention's indexer key cache per token, counted in
    the layer's page (vLLM keeps it as its own cache layer beside the MLA latent). ``state``
    says how recurrent layers are stored (the model dtype, one block a request, when None).
    """
    if layer.kind in (CacheKind.SHARED, CacheKind.NONE):
        return None
    if layer.kind is CacheKind.STATE:
        # Mamba / linear-attention state: conv channels and heads are split across TP ranks.
        paging = state or StatePaging(types.state, types.state)
        return PagedLayer(
            "mamba",
            paging.page_bytes(layer, tp),
            1,
            state_blocks=paging.blocks,
            state_chunk=paging.chunk if not paging.blocks else 0,
        )
    if layer.kind is CacheKind.MLA:
        # One latent vector, heads never split (get_num_kv_heads() == 1 under MLA).
        per_token = _MLA_STATE_BYTES.get(cache_dtype) or types.k.bytes_for(layer.head_dim_k)
        per_token += indexer_bytes
        return PagedLayer("full", per_token * block_size, block_size, shape=(1, layer.head_dim_k))
    heads = max(1, layer.kv_heads // max(1, tp))
    head_k, head_v = head_dims(layer)  # K = V layers still store both
    per_token = types.k.bytes_for(heads * head_k, heads) + types.v.bytes_for(heads * head_v, heads)
    kind = "full"
    if hybrid_enabled and layer.kind is CacheKind.SLIDING and layer.window:
        kind = "sliding"
    elif hybrid_enabled and layer.kind is CacheKind.CHUNKED and layer.window:
        kind = "chunked"
    window = layer.window if kind != "full" else None
    return PagedLayer(
        kind, per_token * block_size, block_size, window, shape=(heads, head_k, head_v)
    )


def _unify_pages(layers: list[PagedLayer]) -> list[PagedLayer]:
    """``unify_kv_cache_spec_page_size``: raise a layer's block size when the largest page is a
    multiple of its page, else pad the page (Mamba, non-MLA attention). With Mamba present vLLM
    first raises the attention block size until one attention page holds a Mamba state
    (``Platform._align_hybrid_block_size``: in multiples of the kernel alignment, the largest
    of 16 and the block size set; in "all" mode of lcm(Mamba chunk, that alignment))."""
    mamba = [layer for layer in layers if layer.kind == "mamba"]
    if mamba:
        largest_state = max(layer.page_bytes for layer in mamba)
        chunk = max(layer.state_chunk for layer in mamba)
        all_mode = any(not layer.state_blocks for layer in mamba)
        raised: list[PagedLayer] = []
        for layer in layers:
            if layer.kind == "mamba":
                raised.append(layer)
                continue
            per_token = max(1, layer.page_bytes // layer.block_size)
            alignment = max(_KERNEL_ALIGNMENT, layer.block_size)
            if all_mode:
                step = math.lcm(chunk or alignment, alignment)
                block = step * ceil_div(ceil_div(largest_state, per_token), step)
            else:
                block = alignment * ceil_div(largest_state, alignment * per_token)
            block = max(block, layer.block_size)
            raised.append(layer._replace(block_size=block, page_bytes=per_token * block))
        # "all" mode keeps a state per attention block (mamba_block_size = block_size).
        attention = min((x.block_size for x in raised if x.kind != "mamba"), default=1)
        layers = [
            x._replace(block_size=attention) if x.kind == "mamba" and not x.state_blocks else x
            for x in raised
        ]
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
    counts = Counter(_spec_type(layer) for layer in unified)
    smallest, largest = min(counts.values()), max(counts.values())
    # "If max < 1.5 x min, pad to max instead" (gpt-oss-20b + eagle: 12 sw + 13 full).
    group_size = largest if largest < 1.5 * smallest else smallest
    groups: list[KvGroup] = []
    for key, count in counts.items():
        example = next(layer for layer in unified if _spec_type(layer) == key)
        n_groups = ceil_div(count, group_size)
        for index in range(n_groups):
            members = min(group_size, count - index * group_size)
            groups.append(KvGroup(example, group_size, group_size - members))
    page = max(layer.page_bytes for layer in unified)
    return StageLayout(tuple(groups), group_size * page, tuple(unified), False, _distinct(unified))


def _spec_type(layer: PagedLayer) -> tuple[str, int | None, tuple[int, ...]]:
    """What ``_get_kv_cache_groups_uniform_page_size`` groups layers by (equal specs)."""
    return layer.kind, layer.window, layer.shape


def _distinct(layers: list[PagedLayer]) -> tuple[tuple[PagedLayer, int], ...]:
    return tuple(Counter(layers).items())


def state_paging(
    types: CacheTypes,
    *,
    conv_dtype: str,
    ssm_dtype: str,
    speculative_tokens: int,
    cache_mode: str,
    chunk: int = 0,
) -> StatePaging:
    """The recurrent-state storage of one deployment (mamba_utils.py ``_mamba_state_dtype``:
    the conv state in ``mamba_cache_dtype``, auto the model dtype; the recurrent state in
    ``mamba_ssm_cache_dtype``, auto the conv state's; kv_cache_interface.py MambaSpec for the
    blocks a request holds)."""
    conv = types.state if conv_dtype == "auto" else _state_dtype(conv_dtype, types.state)
    ssm = conv if ssm_dtype == "auto" else _state_dtype(ssm_dtype, conv)
    blocks = {"all": 0, "align": 2 + speculative_tokens}.get(cache_mode, 1 + speculative_tokens)
    return StatePaging(conv, ssm, speculative_tokens, blocks, chunk)


def _state_dtype(name: str, fallback: CacheDtype) -> CacheDtype:
    try:
        return cache_types(name, fallback.name).k
    except ValueError:  # a spelling no state dtype has: the model dtype, as before
        return fallback


# Families whose MTP module vLLM builds with one layer when the config does not say
# (qwen3_next_mtp.py / qwen3_5_mtp.py; Qwen's checkpoints ship ``mtp.layers.0``).
_ONE_MTP_LAYER = ("qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text")


def draft_layers(spec: ModelSpec, method: str | None, tokens: int) -> tuple[LayerSpec, ...]:
    """The cache layers a drafter adds to the target's groups: an MTP drafter runs the
    checkpoint's own MTP layers, each with an attention cache shaped like the model's full
    attention (Nemotron-H's MTP block is ``*E``: one attention layer). Draft models of their
    own (EAGLE, DFlash, draft_model) are not in the ModelSpec: none counted here."""
    if not tokens or method is None or not method.endswith("mtp"):
        return ()
    count = spec.mtp_layers
    if count is None:
        count = 1 if spec.model_type in _ONE_MTP_LAYER else 0
    attention = [layer for layer in spec.layers if layer.kind in (CacheKind.FULL, CacheKind.MLA)]
    if not count or not attention:
        return ()
    return (attention[-1],) * count
