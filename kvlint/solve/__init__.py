"""Planning answers: sequences admitted, longest context, GPUs and layout, levers, engines."""

from __future__ import annotations

from kvlint.arith.parallel import Layout
from kvlint.sizing import Sizing
from kvlint.solve.capacity import LenAnswer
from kvlint.solve.capacity import SeqsAnswer
from kvlint.solve.capacity import admitted
from kvlint.solve.capacity import max_model_len_at
from kvlint.solve.capacity import max_num_seqs_at
from kvlint.solve.compare import EngineRow
from kvlint.solve.compare import engines_compare
from kvlint.solve.fleet import GpuPlan
from kvlint.solve.fleet import min_gpus
from kvlint.solve.levers import Lever
from kvlint.solve.levers import levers

__all__ = [
    "EngineRow",
    "GpuPlan",
    "Layout",
    "LenAnswer",
    "Lever",
    "SeqsAnswer",
    "admitted",
    "admitted_seqs",
    "engines_compare",
    "largest_max_model_len",
    "levers",
    "max_model_len_at",
    "max_num_seqs_at",
    "min_gpus",
]


def admitted_seqs(sizing: Sizing) -> int | None:
    """Sequences of the deployment's ``max_model_len`` its engine holds at once: the most
    ``max_num_seqs`` can usefully be (KV301's fix title). None without engine numbers."""
    if sizing.engine is None or sizing.engine.max_concurrency is None:
        return None
    return admitted(sizing.engine)


def largest_max_model_len(sizing: Sizing, *, concurrency: int = 1) -> int | None:
    """The largest ``max_model_len`` at which ``concurrency`` sequences fit at once, searched up
    to the deployment's own ``max_model_len`` (so at ``concurrency=1`` it is the figure vLLM's
    refusal suggests: KV302's fix title). None without engine numbers or a GPU."""
    engine, settled = sizing.engine, sizing.settled
    if engine is None or engine.available_kv_bytes is None or settled is None:
        return None
    return max_model_len_at(
        settled, concurrency=concurrency, limit=engine.max_model_len
    ).max_model_len
