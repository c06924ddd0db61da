"""Sequences admitted at a context, and the longest context admitted at a concurrency."""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.engines import account
from kvlint.engines import revise
from kvlint.estimate import EngineEstimate
from kvlint.settled import Settled
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import value


def admitted(est: EngineEstimate) -> int:
    """Sequences of ``est.max_model_len`` tokens the engine holds at once (0 when it would
    refuse to start); see ``EngineEstimate.admitted_sequences``, which KV301 quotes too."""
    return est.admitted_sequences


# Every layer on the GPU (llama.cpp's ``-ngl 999``), as a serving setup pins it. Without it
# llama.cpp's ``--fit`` (on by default) moves weights to system memory rather than fail, and a
# cache that does not fit beside the weights would look as if it did.
ALL_LAYERS = 999


def slots_variant(settled: Settled, length: int, seqs: int) -> Settled:
    """``settled`` configured for ``seqs`` slots of ``length`` tokens each, on an engine whose
    context is every slot's cells together (``EngineFacts.context_spans_slots``: llama.cpp's
    ``-c`` divided between ``-np`` slots unless the cache is unified), every layer on the GPU
    unless the deployment says otherwise."""
    layers = value(settled.request.n_gpu_layers) or ALL_LAYERS
    return revise(
        settled,
        max_model_len=length * seqs,
        max_num_seqs=seqs,
        kv_unified=False,
        n_gpu_layers=layers,
    )


def admitted_at(settled: Settled, length: int, estimator: Estimator) -> tuple[int, EngineEstimate]:
    """Sequences of ``length`` tokens the engine holds at once, and the estimate behind it.

    Paged engines: the pool at ``max_model_len = length`` divided as ``admitted`` says. Engines
    whose context spans their slots: the most slots of ``length`` whose cache still fits
    (doubling, then halving).
    """
    if not settled.facts.context_spans_slots:
        est = estimator(revise(settled, max_model_len=length))
        return admitted(est), est

    def probe(seqs: int) -> EngineEstimate:
        return estimator(slots_variant(settled, length, seqs))

    first = probe(1)
    if first.fits is not True:
        return 0, first
    # Start from the linear guess (the cache is slots x the bytes of one), then make it exact:
    # padding to 256 cells and the SWA cache make the cost of a slot only nearly linear.
    low, high = 1, 2
    room, one = first.available_kv_bytes, first.needed_bytes_one_sequence
    devices = value(settled.gpu_count) or 1
    if room and one:
        guess = max(1, room * devices // one)
        if probe(guess).fits is True:
            low, high = guess, guess + 1
        else:
            high = guess
    while high <= 1 << 20 and high > low and probe(high).fits is True:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if probe(mid).fits is True:
            low = mid
        else:
            high = mid
    return low, probe(low)


def admits(
    settled: Settled, length: int, seqs: int, estimator: Estimator
) -> tuple[bool, EngineEstimate]:
    """Whether ``seqs`` sequences of ``length`` tokens fit at once, and the estimate behind it."""
    if settled.facts.context_spans_slots:
        est = estimator(slots_variant(settled, length, seqs))
        return est.fits is True, est
    est = estimator(revise(settled, max_model_len=length))
    if seqs <= 1 and est.fits is not None:
        # One sequence: the engine's own start-up verdict, so the answer is the length its
        # error message would suggest (0.11 checks without the null block, 0.33 with it).
        return est.fits, est
    return admitted(est) >= seqs, est


@dataclass(frozen=True)
class SeqsAnswer:
    """``max_num_seqs`` the engine admits at ``max_model_len``."""

    max_model_len: int
    max_num_seqs: int
    estimate: EngineEstimate


@dataclass(frozen=True)
class LenAnswer:
    """The longest ``max_model_len`` at which ``concurrency`` sequences all fit.

    ``limit`` is the top of the search (the model's own maximum unless told otherwise);
    ``at_limit`` says the limit, not memory, stopped it. 0 when not even one token fits.
    """

    concurrency: int
    max_model_len: int
    limit: int
    estimate: EngineEstimate | None  # at the answer (None when it is 0)

    @property
    def at_limit(self) -> bool:
        return self.max_model_len >= self.limit


def max_num_seqs_at(
    settled: Settled, *, max_model_len: int | None = None, estimator: Estimator = account
) -> SeqsAnswer:
    """The largest ``max_num_seqs`` whose every sequence can reach ``max_model_len`` tokens at
    once (the deployment's own ``max_model_len`` when not given)."""
    length = max_model_len
    if length is None:
        length = estimator(settled).max_model_len
    seqs, est = admitted_at(settled, length, estimator)
    return SeqsAnswer(length, seqs, est)


def max_model_len_at(
    settled: Settled,
    *,
    concurrency: int = 1,
    limit: int | None = None,
    estimator: Estimator = account,
) -> LenAnswer:
    """The largest ``max_model_len`` in ``[1, limit]`` at which ``concurrency`` sequences of that
    length fit at once.

    A binary search, as vLLM's own ``estimate_max_model_len`` does (vllm/v1/core/
    kv_cache_utils.py) over ``[1, max_model_len]`` when one request does not fit; at
    ``concurrency=1`` with ``limit`` the deployment's ``max_model_len`` it returns the length
    vLLM's error message suggests. ``limit`` defaults to the model's own maximum context as
    the engine derives it (what it runs with when max_model_len is unset).
    """
    top = limit if limit is not None else settled.derived_max_model_len
    need = max(1, concurrency)
    cache: dict[int, tuple[bool, EngineEstimate]] = {}

    def probe(length: int) -> tuple[bool, EngineEstimate]:
        if length not in cache:
            cache[length] = admits(settled, length, need, estimator)
        return cache[length]

    def fits(length: int) -> bool:
        return probe(length)[0]

    def at(length: int) -> EngineEstimate:
        return probe(length)[1]

    if top < 1 or not fits(1):
        return LenAnswer(need, 0, top, None)
    if fits(top):
        return LenAnswer(need, top, top, at(top))
    low, high = 1, top  # fits(low), not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return LenAnswer(need, low, top, at(low))
