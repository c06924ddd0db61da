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


def find(dep: Deployment, sizing: Sizing) -> Cause:
    spec = sizing.spec
    assert spec is not None
    fallback = dep.model or dep.engine
    tp = dep.tensor_parallel_size
    if spec.attention_kind == "MLA" and tp is not None and tp.value > 1:
        # vLLM's get_num_kv_heads() is 1 for MLA: every TP rank stores the whole latent.
        text = (
            f"every tensor-parallel rank stores the whole MLA latent, so "
            f"{n.name(dep, 'tensor_parallel_size')} {tp.value} keeps {tp.value} copies of the cache"
        )
        title = "Shard attention by data parallelism (`data_parallel_size`) instead of TP"
        return Cause(text, tp if n.explicit(tp) else fallback, n.fix(title))
    local = [layer for layer in spec.layers if layer.kind.bounded]
    if not local:
        notes = sizing.engine.notes if sizing.engine else ()
        return Cause(notes[0] if notes else "the engine's own accounting", fallback, None)
    chunked = local[0].kind is CacheKind.CHUNKED
    layers = f"the {len(local)} {'chunked-attention' if chunked else 'sliding-window'} layers"
    for switch, key, text in (
        (
            dep.disable_hybrid_kv_cache_manager,
            "disable_hybrid_kv_cache_manager",
            "the hybrid KV cache manager is disabled",
        ),
        (dep.disable_sliding_window, "disable_sliding_window", "the sliding window is disabled"),
        (
            dep.settings.get("disable-hybrid-swa-memory"),
            "disable_hybrid_swa_memory",
            "the hybrid SWA pool is disabled",
        ),
    ):
        if switch is not None and n.truthy(switch):
            # A bare flag (`--disable-hybrid-kv-cache-manager`) has no value to edit.
            bare = switch.raw is None or str(switch.raw).startswith("-")
            fix = n.fix(f"Set `{key}: false`", switch, None if bare else "false")
            return Cause(f"{text}, so {layers} get blocks for every token (`{key}`)", switch, fix)
    if dep.engine.value != "vllm":
        return Cause(f"{n.engine_name(dep)} sizes {layers} past their window", fallback, None)
    env = "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE"
    notes = sizing.engine.notes if sizing.engine else ()
    if chunked and any("hybrid KV cache off for chunked" in note for note in notes):
        # vLLM 0.10.1-0.13 turn the hybrid manager off for chunked local attention unless
        # this variable is set; 0.14 and later only when it is 0 (defaults.py).
        text = (
            f"vLLM turns the hybrid KV cache manager off for chunked attention, so {layers} "
            f"get blocks for every token"
        )
        return Cause(text, fallback, n.fix(f"Set `{env}=1` in the environment"))
    release = n.version(dep)
    if release is not None and any("hybrid KV cache off: before 0.21" in note for note in notes):
        # The engine accounting turned the hybrid manager off for this release (Gemma 4
        # before 0.21, vllm-project/vllm#43308); older releases otherwise keep the window.
        label = ".".join(map(str, release))
        text = f"vLLM {label} pages {layers} as full attention, a block for every token"
        return Cause(text, dep.engine_version or fallback, n.fix("Upgrade vLLM"))
    window = max(layer.window or 0 for layer in local)
    batched = _batched(dep, sizing)
    # vllm/v1/kv_cache_interface.py SlidingWindowSpec: each request reserves
    # cdiv(window - 1 + max_in_flight_tokens, block) + 1 blocks in every local layer.
    text = (
        f"vLLM reserves each request's window ({window}) plus the in-flight tokens of "
        f"`max_num_batched_tokens` {batched} in each of {layers}"
    )
    title = f"Lower `max_num_batched_tokens` toward the {window}-token window"
    target = dep.max_num_batched_tokens
    return Cause(
        text, target if target is not None and n.explicit(target) else fallback, n.fix(title)
    )


def _batched(dep: Deployment, sizing: Sizing) -> int:
    """``max_num_batched_tokens`` as the file sets it, else vLLM's default for the GPU."""
    if dep.max_num_batched_tokens is not None:
        return int(dep.max_num_batched_tokens.value)
    from kvlint.engines.vllm.defaults import vllm_batch_defaults
    from kvlint.engines.vllm.defaults import vllm_version

    release, _ = vllm_version(str(dep.engine_version.value) if dep.engine_version else None)
    return vllm_batch_defaults(release, sizing.gpu)[1]
