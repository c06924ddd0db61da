"""kvlint's built-in rules, loaded through the ``kvlint.rules`` entry point like any plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvlint.rule import Rule


def get_rules() -> list[type[Rule]]:
    """Every built-in rule class, in code order.

    The imports live inside the function (sqlfluff's style) so that importing the package costs
    nothing and a reader sees the whole list here; no rule registers itself at import time.
    To add a rule: one import line in its family block and one entry in the returned list.
    """
    # KV1xx arithmetic, KV2xx quantisation, KV3xx capacity, KV4xx context (engineer "rules").

    # KV5xx engine-settings hygiene, KV9xx input problems (engineer "check").
    from .invalid_setting_value import InvalidSettingValue
    from .missing_fact import MissingFact
    from .schema_violation import SchemaViolation
    from .unknown_engine_flag import UnknownEngineFlag
    from .unknown_gpu import UnknownGpu
    from .unknown_model import UnknownModel
    from .unreadable_file import UnreadableFile
    from .unrecognised_document import UnrecognisedDocument
    from .unused_suppression import UnusedSuppression

    return [
        # KV1xx-KV4xx
        # KV5xx, KV9xx
        UnknownEngineFlag,
        InvalidSettingValue,
        UnreadableFile,
        UnknownModel,
        UnknownGpu,
        SchemaViolation,
        UnrecognisedDocument,
        UnusedSuppression,
        MissingFact,
    ]
