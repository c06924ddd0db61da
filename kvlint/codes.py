"""The codes kvlint's core emits itself, one table: input problems the readers find (KV5xx,
KV9xx) and the run's own failures. Each is documented by a rule of the same code (rules/), so
``kvlint explain`` and selection treat them as every other finding."""

from __future__ import annotations

UNKNOWN_FLAG = "KV501"  # a flag the engine does not have
INVALID_SETTING = "KV502"  # a value the engine refuses (type, range, choices)
CONFLICTING_GPU_FACTS = "KV504"  # the files name different GPUs
INTERNAL_ERROR = "KV900"  # a crash outside any rule: reported, never a traceback
UNREADABLE_FILE = "KV901"  # not YAML / JSON, not readable, a merge conflict, a placeholder
UNKNOWN_MODEL = "KV902"  # the model cannot be resolved
SCHEMA_VIOLATION = "KV904"  # a plan that breaks schemas/plan.schema.json
UNRECOGNISED_DOCUMENT = "KV905"  # a document that looks like no deployment kvlint reads
UNUSED_SUPPRESSION = "KV906"  # a suppression that suppresses nothing, or one not understood
MODEL_BY_NAME = "KV908"  # a model recognised by its name, not read
RULE_FAILURE = "KV909"  # a rule that raised, exited, overran its deadline or yielded junk
