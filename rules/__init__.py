"""kvlint's built-in rules, loaded through the ``kvlint.rules`` entry point like any plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvlint.rule import Rule


def get_rules() -> list[type[Rule]]:
    """Every built-in rule class, in code order.

    The imports live inside the function (sqlfluff's style) so that importing the package costs
    nothing and a reader sees the whole list here; no rule registers itself at import time.
    To add a rule: one import line and one entry in the returned list.
    """
    # One import per rule, sorted by module (ruff's isort merges comment-separated blocks).
    from .cancelling_head_dim import CancellingHeadDim
    from .conflicting_gpu_facts import ConflictingGpuFacts
    from .context_beyond_max_positions import ContextBeyondMaxPositions
    from .context_beyond_sliding_window import ContextBeyondSlidingWindow
    from .engine_pool_below_first_principles import EnginePoolBelowFirstPrinciples
    from .gpu_count_vs_parallel_layout import GpuCountVsParallelLayout
    from .invalid_setting_value import InvalidSettingValue
    from .max_model_len_exceeds_kv_pool import MaxModelLenExceedsKvPool
    from .max_num_seqs_over_kv_budget import MaxNumSeqsOverKvBudget
    from .missing_fact import MissingFact
    from .model_by_name import ModelByName
    from .schema_violation import SchemaViolation
    from .served_model_not_claimed import ServedModelNotClaimed
    from .stated_kv_mismatch import StatedKvMismatch
    from .tp_exceeds_kv_heads import TpExceedsKvHeads
    from .unknown_engine_flag import UnknownEngineFlag
    from .unknown_gpu import UnknownGpu
    from .unknown_model import UnknownModel
    from .unreadable_file import UnreadableFile
    from .unrecognised_document import UnrecognisedDocument
    from .unsupported_kv_cache_dtype import UnsupportedKvCacheDtype
    from .unused_suppression import UnusedSuppression
    from .weight_quant_as_cache_quant import WeightQuantAsCacheQuant
    from .weights_exceed_gpu_memory import WeightsExceedGpuMemory

    return [
        # KV1xx arithmetic, KV2xx quantisation, KV3xx capacity, KV4xx context (engineer "rules")
        CancellingHeadDim,
        StatedKvMismatch,
        WeightQuantAsCacheQuant,
        UnsupportedKvCacheDtype,
        MaxNumSeqsOverKvBudget,
        MaxModelLenExceedsKvPool,
        WeightsExceedGpuMemory,
        TpExceedsKvHeads,
        EnginePoolBelowFirstPrinciples,
        GpuCountVsParallelLayout,
        ContextBeyondSlidingWindow,
        ContextBeyondMaxPositions,
        # KV5xx engine-settings hygiene, KV9xx input problems (engineer "check")
        UnknownEngineFlag,
        InvalidSettingValue,
        ServedModelNotClaimed,
        ConflictingGpuFacts,
        UnreadableFile,
        UnknownModel,
        UnknownGpu,
        SchemaViolation,
        UnrecognisedDocument,
        UnusedSuppression,
        MissingFact,
        ModelByName,
    ]
