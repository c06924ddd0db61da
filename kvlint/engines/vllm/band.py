"""The uncertainty band on vLLM's available KV memory, from cross-validated residuals.

``benchmarks/fidelity.py`` predicts every real start-up log of the calibration corpora with the
memory model's constants fitted without the log's source, and keeps the residual
``(logged - predicted) / budget`` (the budget is ``total x gpu_memory_utilization``). Per
regime (release line x model class x tensor parallelism) the 5th and 95th percentiles of those
residuals bound a 90% band; ``fitted.py`` holds them (``--write-band`` regenerates it). Each
source weighs the same (its cases share one weight): a sweep of forty runs is one setup, and
its residuals move together. A regime with residuals from fewer than ``MIN_SOURCES`` sources
borrows the band of the next coarser one: the release line and TP, then the line, then every
case (``*``, the one pool that spans release lines, named as such).

A band is one release line's: a file that names no version is sized on several lines, and each
line's figures keep their own band (kvlint.estimate.across_versions says where the lines'
verdicts differ, apart from the band).

The pool and concurrency bands follow from the memory band through vLLM's own paging, so they
are as wide as the memory band makes them and no wider.
"""

from __future__ import annotations

from kvlint.engines.band import FLOOR as FLOOR
from kvlint.engines.band import LEVEL as LEVEL
from kvlint.engines.band import MIN_SOURCES as MIN_SOURCES
from kvlint.engines.band import Band as Band
from kvlint.engines.band import BandTable as GenericTable
from kvlint.engines.band import weighted_quantile as weighted_quantile
from kvlint.engines.vllm.effective import VllmSettled
from kvlint.engines.vllm.memory import memory_line
from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec

# Multimodal model types whose vision tower kvlint does not count (kvlint/model/params.py reads
# only SigLIP's and Llama 4's): their memory is missed the way a vision model's is, so their
# residuals belong with the vision class, not with the text models.
_MULTIMODAL_TYPES = frozenset(
    {
        "qwen2_vl",
        "qwen2_5_vl",
        "qwen3_vl",
        "qwen3_vl_moe",
        "llava",
        "llava_next",
        "llava_onevision",
        "mllama",
        "idefics3",
        "internvl_chat",
        "phi3_v",
        "phi4mm",
        "pixtral",
        "mistral3",
        "paligemma",
        "gemma3n",
        "kimi_vl",
        "glm4v",
        "minicpmv",
    }
)


def model_class(spec: ModelSpec) -> str:
    """The classes whose memory the model misses in different ways."""
    kinds = {layer.kind for layer, _ in spec.layer_shapes}
    if spec.vision_param_count or spec.model_type in _MULTIMODAL_TYPES:
        return "vision"
    if CacheKind.STATE in kinds:
        return "hybrid"
    if CacheKind.MLA in kinds:
        return "mla"
    if spec.num_experts:
        return "moe"
    return "dense"


def regime_keys(s: VllmSettled) -> tuple[str, ...]:
    """The regimes a deployment belongs to, most specific first: its release line's (by model
    class and TP, by TP, the line), then the pools across lines (class and TP, class, TP, every
    case) for a line whose logs come from too few sources: the class before the TP, since the
    model's memory is missed by class (a vision tower, a hybrid's state) more than by TP."""
    line = memory_line(s.numbers)
    tp = "tp1" if s.tp * s.pp == 1 else "tp>1"
    cls = model_class(s.spec)
    return (
        f"{line}/{cls}/{tp}",
        f"{line}/*/{tp}",
        line,
        f"*/{cls}/{tp}",
        f"*/{cls}/*",
        f"*/*/{tp}",
        "*",
    )


class BandTable(GenericTable):
    """The generic table, asked with a settled vLLM deployment's regimes."""

    def band(self, s: VllmSettled) -> Band | None:
        return self.band_of(regime_keys(s))


EMPTY = BandTable({})


def shipped() -> BandTable:
    """The table fitted on the corpora (imported only when vLLM's accounting runs)."""
    from kvlint.engines.vllm.fitted import BAND

    return BandTable(BAND)
