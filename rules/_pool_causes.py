"""Why an engine's KV pool falls far below first principles: the causes KV305 names, in order."""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Fix
from kvlint.model.spec import CacheKind
from kvlint.sizing import Sizing

from . import _numbers as n


class Cause(NamedTuple):
    text: str
    target: Sourced[Any]  # the setting to change (the model when no setting is to blame)
    fix: Fix | None
    # Tokens of max_model_len requests the engine would admit without the cause (its own
    # accounting of it); None when no cause kvlint can name explains the pool.
    explained: int | None = None


def find(dep: Deployment, sizing: Sizing) -> Cause:
    spec, settled = sizing.spec, n.settled(sizing)
    assert spec is not None
    fallback = dep.model or dep.engine
    tp = settled.tensor_parallel_size
    if spec.attention_kind == "MLA" and tp.value > 1:
        # vLLM's get_num_kv_heads() is 1 for MLA: every TP rank stores the whole latent.
        text = (
            f"every tensor-parallel rank stores the whole MLA latent, so "
            f"{n.name(sizing, 'tensor_parallel_size')} {tp.value} keeps {tp.value} copies of "
            "the cache"
        )
        title = settled.facts.mla_copies_fix
        admitted = _admitted(sizing)
        explained = admitted * tp.value if admitted else None
        return Cause(text, tp if n.explicit(tp) else fallback, n.fix(title), explained)
    local = [layer for layer in spec.layers if layer.kind.bounded]
    if not local:
        notes = sizing.engine.notes if sizing.engine else ()
        return Cause(notes[0] if notes else "the engine's own accounting", fallback, None)
    # What the engine holds once its windows are paged as windows: its own accounting when it
    # has one (vLLM), else the pool charged per full-length token (SGLang's SWA-off pool).
    windowed = sizing.engine.windowed_tokens if sizing.engine else None
    chunked = local[0].kind is CacheKind.CHUNKED
    layers = f"the {len(local)} {'chunked-attention' if chunked else 'sliding-window'} layers"
    for switch in settled.pool_switches:
        # A bare flag (`--disable-hybrid-kv-cache-manager`) has no value to edit.
        value = switch.value
        bare = value.raw is None or str(value.raw).startswith("-")
        fix = n.fix(f"Set `{switch.key}: false`", value, None if bare else "false")
        text = f"{switch.text}, so {layers} get blocks for every token (`{switch.key}`)"
        return Cause(text, value, fix, windowed)
    cause = sizing.engine.pool_cause if sizing.engine else None
    if cause is None:
        return Cause(f"{n.engine_name(sizing)} sizes {layers} past their window", fallback, None)
    target: Sourced[Any] | None = getattr(settled, cause.setting) if cause.setting else None
    if target is None or not n.explicit(target):
        return Cause(cause.text, fallback, n.fix(cause.fix_title), windowed)
    return Cause(cause.text, target, n.fix(cause.fix_title), windowed)


def _admitted(sizing: Sizing) -> int | None:
    """Tokens of max_model_len requests the engine admits (blocks over a request's blocks)."""
    engine = sizing.engine
    if engine is None:
        return None
    if engine.num_blocks and engine.blocks_per_request and engine.max_model_len:
        return engine.num_blocks * engine.max_model_len // engine.blocks_per_request
    return engine.kv_cache_tokens
