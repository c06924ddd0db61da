"""Speculative drafter checkpoints: what a DFlash or EAGLE head's config.json says beyond the
decoder layers a family reads.

A drafter is a small decoder that runs beside its target (vLLM's ``--speculative-config``
``model``): its attention layers keep a cache of their own in the target's KV cache groups and
its weights load on every GPU of the last stage. What differs from an ordinary model is read
from the architecture name and the drafter's own keys, as vLLM builds the model:

- DFlash (``DFlashDraftModel``, ``DFlash2DraftModel``; vllm/model_executor/models/
  qwen3_dflash.py): no token embedding or output head (the target's are used), an ``fc`` over
  the hidden states of the target layers it taps (``dflash_config.target_layer_ids``, else one
  per draft layer) held whole on every rank (ReplicatedLinear), and each layer's attention
  resolved by ``_resolve_layer_attention``: ``layer_types`` where the config has them
  (sliding where ``sliding_attention``), else every layer sliding when ``dflash_config.use_swa``
  (window ``swa_window_size``, else ``sliding_window``), else full attention. The top-level
  ``use_sliding_window`` of Qwen's configs is not read by it.
- EAGLE-3 (a ``draft_vocab_size``): one layer, an fc over three target layers' hidden states,
  its own head over ``draft_vocab_size`` tokens, the target's embedding.
- EAGLE (known by the method only: its config is a plain decoder's): an fc over the token
  embedding and the target's hidden state, the target's embedding and head.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvlint.model.families.base import ConfigView
from kvlint.model.spec import CacheKind
from kvlint.model.spec import Drafter
from kvlint.model.spec import LayerSpec


def read_drafter(top: ConfigView, hidden_size: int) -> Drafter | None:
    """The drafter facts of a DFlash (``dflash_config``) or EAGLE-3 (``draft_vocab_size``)
    head's config, else None. Only those keys are asked first: an ordinary config is read as
    before (the catalog keeps the keys a config is asked for). An EAGLE-1 head's config is a
    plain decoder's: vLLM knows it by the method (the accounting says so)."""
    if top.has("dflash_config"):
        target_hidden = top.opt_int("target_hidden_size", minimum=1) or hidden_size
        taps = len(_target_layers(top)) or top.opt_int("num_hidden_layers", minimum=1) or 1
        return Drafter("dflash", replicated_params=taps * target_hidden * hidden_size)
    if top.has("draft_vocab_size"):
        target_hidden = top.opt_int("target_hidden_size", minimum=1) or hidden_size
        vocab = top.opt_int("draft_vocab_size", minimum=1) or 0
        fc = 3 * target_hidden * hidden_size
        return Drafter("eagle3", replicated_params=fc, head_vocab=vocab)
    return None


def for_method(
    method: str | None, draft: Drafter | None, hidden_size: int, vocab: int
) -> Drafter | None:
    """What vLLM builds for a draft model whose config names no head of its own: EAGLE's
    (llama_eagle.py: an fc over the embedding and the target's hidden state, the target's
    embedding and head) and EAGLE-3's (llama_eagle3.py: an fc over three of the target's
    layers, its own head) for those methods; the config's facts, or a whole model, otherwise."""
    if draft is not None or method is None:
        return draft
    if method == "eagle":
        return Drafter("eagle", replicated_params=2 * hidden_size * hidden_size)
    if method == "eagle3":
        return Drafter("eagle3", replicated_params=3 * hidden_size * hidden_size, head_vocab=vocab)
    return None


def _target_layers(top: ConfigView) -> list[object]:
    settings = top.opt_mapping("dflash_config")
    if settings is None:
        return []
    return list(top.child(settings, "dflash_config").opt_list("target_layer_ids") or [])


def dflash_layers(top: ConfigView, layers: Sequence[LayerSpec]) -> tuple[LayerSpec, ...]:
    """A DFlash drafter's layers with the attention vLLM resolves for each (see above)."""
    found = top.opt_mapping("dflash_config")
    settings = top.child(found, "dflash_config") if found is not None else None
    types = top.opt_list("layer_types")
    use_swa = bool(settings.opt_bool("use_swa")) if settings is not None else False
    window = settings.opt_int("swa_window_size", minimum=1) if settings is not None else None
    window = window or top.opt_int("sliding_window", minimum=1)
    out: list[LayerSpec] = []
    any_sliding = types is not None and "sliding_attention" in types
    for index, layer in enumerate(layers):
        if types is None or (use_swa and not any_sliding):
            sliding = use_swa
        else:
            sliding = index < len(types) and types[index] == "sliding_attention"
        kind = CacheKind.SLIDING if sliding and window else CacheKind.FULL
        out.append(
            LayerSpec(
                kind,
                layer.kv_heads,
                layer.head_dim_k,
                layer.head_dim_v,
                window=window if kind is CacheKind.SLIDING else None,
            )
        )
    return tuple(out)
