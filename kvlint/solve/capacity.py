"""Sequences admitted at a context, and the longest context admitted at a concurrency."""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.deployment import Deployment
from kvlint.estimate import EngineEstimate
from kvlint.gpus import GpuSpec
from kvlint.model.spec import ModelSpec
from kvlint.solve.variants import Estimator
from kvlint.solve.variants import default_estimator
from kvlint.solve.variants import value
from kvlint.solve.variants import vary


def admitted(est: EngineEstimate) -> int:
    """Sequences of ``est.max_model_len`` tokens the engine holds at once (0 when it would
    refuse to start); see ``EngineEstimate.admitted_sequences``, which KV301 quotes too."""
    return est.admitted_sequences


# Engines that allocate exactly the cache they are told to (llama.cpp's ``-c`` cells, split
# over ``-np`` slots) instead of filling a memory fraction: there a concurrency is a setting,
# and the question is whether ``-c C x L -np C`` fits beside the weights.
SLOT_ENGINES = frozenset({"llamacpp"})


# ``-ngl 999``: every layer on the GPU, as a serving setup pins it. Without it llama.cpp's
# ``--fit`` (on by default) moves weights to system memory rather than fail, and a cache that
# does not fit beside the weights would look as if it did.
ALL_LAYERS = 999


def slots_variant(dep: Deployment, length: int, seqs: int) -> Deployment:
    """``dep`` configured for ``seqs`` slots of ``length`` tokens each (llama.cpp: ``-c`` is
    every slot together, divided between ``-np`` slots unless the cache is unified), every
    layer on the GPU unless the deployment says otherwise."""
    layers = value(dep.n_gpu_layers) or ALL_LAYERS
    return vary(
        dep,
        max_model_len=length * seqs,
        max_num_seqs=seqs,
        kv_unified=False,
        n_gpu_layers=layers,
    )


def admitted_at(
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    length: int,
    estimator: Estimator,
) -> tuple[int, EngineEstimate]:
    """Sequences of ``length`` tokens the engine holds at once, and the estimate behind it.

    Paged engines: the pool at ``max_model_len = length`` divided as ``admitted`` says. Slot
    engines: the most slots of ``length`` whose cache still fits (doubling, then halving).
    """
    if dep.engine.value not in SLOT_ENGINES:
        est = estimator(vary(dep, max_model_len=length), spec, gpu)
        return admitted(est), est

    def probe(seqs: int) -> EngineEstimate:
        return estimator(slots_variant(dep, length, seqs), spec, gpu)

    first = probe(1)
    if first.fits is not True:
        return 0, first
    # Start from the linear guess (the cache is slots x the bytes of one), then make it exact:
    # padding to 256 cells and the SWA cache make the cost of a slot only nearly linear.
    low, high = 1, 2
    room, one = first.available_kv_bytes, first.needed_bytes_one_sequence
    devices = value(dep.gpu_count) or 1
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
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    length: int,
    seqs: int,
    estimator: Estimator,
) -> tuple[bool, EngineEstimate]:
    """Whether ``seqs`` sequences of ``length`` tokens fit at once, and the estimate behind it."""
    if dep.engine.value in SLOT_ENGINES:
        est = estimator(slots_variant(dep, length, seqs), spec, gpu)
        return est.fits is True, est
    est = estimator(vary(dep, max_model_len=length), spec, gpu)
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
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    *,
    max_model_len: int | None = None,
    estimator: Estimator | None = None,
) -> SeqsAnswer:
    """The largest ``max_num_seqs`` whose every sequence can reach ``max_model_len`` tokens at
    once (the deployment's own ``max_model_len`` when not given)."""
    estimate = estimator or default_estimator()
    length = max_model_len
    if length is None:
        length = estimate(dep, spec, gpu).max_model_len
    seqs, est = admitted_at(dep, spec, gpu, length, estimate)
    return SeqsAnswer(length, seqs, est)


def model_max_len(
    dep: Deployment, spec: ModelSpec, gpu: GpuSpec | None, estimator: Estimator | None = None
) -> int:
    """The model's own maximum context as the engine derives it (what it uses when
    max_model_len is unset). vLLM's estimate says it exactly; TGI and llama.cpp default their
    length from memory or slots, so for them it is the config's length, RoPE-scaled as vLLM
    scales it (kvlint.engines.common.derived_max_model_len)."""
    if dep.engine.value == "vllm":
        estimate = estimator or default_estimator()
        return estimate(vary(dep, max_model_len=None), spec, gpu).max_model_len
    from kvlint.engines.common import derived_max_model_len

    return derived_max_model_len(spec)


def max_model_len_at(
    dep: Deployment,
    spec: ModelSpec,
    gpu: GpuSpec | None,
    *,
    concurrency: int = 1,
    limit: int | None = None,
    estimator: Estimator | None = None,
) -> LenAnswer:
    """The largest ``max_model_len`` in ``[1, limit]`` at which ``concurrency`` sequences of that
    length fit at once.

    A binary search, as vLLM's own ``estimate_max_model_len`` does (vllm/v1/core/
    kv_cache_utils.py) over ``[1, max_model_len]`` when one request does not fit; at
    ``concurrency=1`` with ``limit`` the deployment's ``max_model_len`` it returns the length
    vLLM's error message suggests. ``limit`` defaults to the model's own maximum context.
    """
    estimate = estimator or default_estimator()
    top = limit if limit is not None else model_max_len(dep, spec, gpu, estimate)
    need = max(1, concurrency)
    cache: dict[int, tuple[bool, EngineEstimate]] = {}

    def probe(length: int) -> tuple[bool, EngineEstimate]:
        if length not in cache:
            cache[length] = admits(dep, spec, gpu, length, need, estimate)
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
