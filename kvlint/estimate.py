"""What an engine will allocate, as its start-up log would report it, and why it would refuse."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import NamedTuple


class Refusal(str, enum.Enum):
    """Why an engine will not start, as data: each kind is one rule's finding (and one line of
    ``kvlint size``), so ``check`` and ``size`` cannot disagree on whether it starts."""

    # max_model_len beyond what the engine derives from the model's positions (KV402)
    BEYOND_POSITIONS = "beyond-positions"
    # the free memory after the CUDA context is below the requested fraction (KV303)
    FREE_MEMORY = "free-memory-below-fraction"
    # the weights alone exceed the memory budget: loading runs out of memory (KV303)
    WEIGHTS = "weights-do-not-fit"
    # weights, activations and runtime leave nothing for the KV cache (KV303)
    NO_CACHE_MEMORY = "no-memory-for-cache"
    # one request of max_model_len does not fit the KV pool (KV302)
    ONE_REQUEST = "one-request-does-not-fit"
    # a cache allocated up front for every slot does not fit beside the weights (KV302)
    CACHE_ALLOCATION = "cache-allocation-fails"
    # a setting the engine refuses at start (a quantised V cache without flash attention: KV202)
    SETTING = "setting-refused"
    # a tensor-parallel size the model's heads cannot be split by (KV304)
    LAYOUT = "parallel-layout-refused"

    @property
    def code(self) -> str:
        """The rule whose finding reports this refusal."""
        return _REPORTED_BY[self]


_REPORTED_BY = {
    Refusal.BEYOND_POSITIONS: "KV402",
    Refusal.FREE_MEMORY: "KV303",
    Refusal.WEIGHTS: "KV303",
    Refusal.NO_CACHE_MEMORY: "KV303",
    Refusal.ONE_REQUEST: "KV302",
    Refusal.CACHE_ALLOCATION: "KV302",
    Refusal.SETTING: "KV202",
    Refusal.LAYOUT: "KV304",
}


STARTS, REFUSES, BORDERLINE = "starts", "refuses", "borderline"


def verdict_of(fits_low: bool | None, fits_high: bool | None) -> str | None:
    """The three-valued verdict from the outcome at both ends of the band."""
    if fits_low is None or fits_high is None:
        return None
    if fits_low and fits_high:
        return STARTS
    if not fits_low and not fits_high:
        return REFUSES
    return BORDERLINE


class PoolCause(NamedTuple):
    """Why the engine's pool keeps more of windowed layers than their window (KV305's cause):
    the engine's own paging, in words, and the setting a fix changes."""

    text: str
    setting: str | None  # the Settled field to change ("max_num_batched_tokens"), or None
    fix_title: str


class Reading(NamedTuple):
    """One release line a file naming no version was sized at, and what it gives."""

    version: str
    verdict: str | None
    available_kv_bytes: int | None


class Admission(NamedTuple):
    """Requests of one length the engine holds at once, and what each takes (per GPU)."""

    tokens: int
    sequences: int
    bytes_per_request: int


@dataclass(frozen=True)
class EngineEstimate:
    """The engine's own numbers for one deployment. Memory figures are per GPU (per rank), token
    and concurrency figures engine-wide, as vLLM logs them. ``None`` means not computable from
    the files (``missing`` says why)."""

    engine: str  # vllm, sglang, llamacpp, tgi, ollama
    version: str  # the version whose accounting was applied: "0.11", "current", ...
    max_model_len: int
    gpu_total_bytes: int | None = None
    memory_fraction: float | None = None
    weights_bytes: int | None = None  # per GPU
    activation_bytes: int | None = None
    non_torch_bytes: int | None = None
    cudagraph_bytes: int | None = None
    available_kv_bytes: int | None = None  # per GPU
    # The 90% band on the available memory (per GPU) and on the pool and concurrency it gives,
    # from the cross-validated residuals of real start-up logs (kvlint/engines/vllm/band.py).
    # None where no band applies (kv_cache_memory_bytes states the memory, or no figure).
    available_kv_bytes_low: int | None = None
    available_kv_bytes_high: int | None = None
    bytes_per_token: int | None = None  # per GPU, as the engine pages it (block-rounded heads)
    num_blocks: int | None = None
    # Blocks one request of max_model_len takes (every KV group's share; vLLM's
    # num_blocks_per_request), so admission can be counted exactly: (num_blocks - 1) // this,
    # block 0 being the null block. None when not computed.
    blocks_per_request: int | None = None
    block_size: int | None = None
    kv_cache_tokens: int | None = None  # "GPU KV cache size: N tokens"
    max_concurrency: float | None = None  # "Maximum concurrency for L tokens per request: Xx"
    # Sequences of max_model_len the scheduler admits at once, as the engine counts them
    # (vLLM: its blocks less the null block); None: the whole part of max_concurrency.
    admitted: int | None = None
    kv_cache_tokens_low: int | None = None
    kv_cache_tokens_high: int | None = None
    max_concurrency_low: float | None = None
    max_concurrency_high: float | None = None
    band_regime: str | None = None  # the regime the band came from: "v1-0.11/dense/tp1"
    band_logs: int | None = None  # the cross-validated start-up logs behind that band
    band_sources: int | None = None  # the distinct sources of those logs
    # Where a figure has no band, why: "no band: 2 logs from 1 source, a band needs 6" for
    # an engine the corpora hold too few logs of (kvlint/engines/band.py).
    band_note: str | None = None
    fits: bool | None = None  # False: the engine refuses to start (``refusal`` says why)
    # Three-valued, with the band: "starts", "refuses", or "borderline" (the band straddles
    # the limit: it starts at one end and refuses at the other). None when not decidable.
    verdict: str | None = None
    # When the verdict is borderline: the refusal at the band's unfavourable end (what a
    # "may refuse" finding is about), the point refusal aside.
    band_refusal: Refusal | None = None
    needed_bytes_one_sequence: int | None = None  # per GPU, for one max_model_len request
    estimated_max_model_len: int | None = None  # what vLLM's error would suggest
    # The engine starts with a shorter max_model_len than the files ask for, because one
    # request of theirs does not fit its pool (TensorRT-LLM reduces maxSequenceLen): that length.
    shortened_max_model_len: int | None = None
    first_principles_tokens: int | None = None  # what the same memory holds with no paging waste
    # Tokens of max_model_len requests admitted were every windowed layer paged by its window
    # alone (the hybrid allocator on, nothing in flight ahead of the window): what the engine
    # would hold without the causes KV305 names. None for a model without windows.
    windowed_tokens: int | None = None
    error: str | None = None  # the engine's own error text when it would refuse
    refusal: Refusal | None = None  # why it would refuse, as data
    # A default decided the verdict and another reading of it would start (no version named,
    # and only newer releases charge the memory that tips it): what a finding says instead.
    caveat: str | None = None
    # No engine version named and the release lines' verdicts differ: one short sentence
    # ("no vLLM version named: 0.10.2 refuses where 0.33.0 starts"), apart from the band
    # (which is the line's the figures are at). ``readings``: every line sized, its verdict.
    version_doubt: str | None = None
    readings: tuple[Reading, ...] = ()
    pool_cause: PoolCause | None = None  # the engine's reason windowed layers cost more
    # What the scheduler admits at each request length the workload states, as it counts them
    # (whole blocks of every group, the null block left out).
    admitted_at: tuple[Admission, ...] = ()
    # The longest max_model_len at which max_num_seqs full-length requests are admitted
    # (KV301's second remedy); None when not computed.
    cap_length: int | None = None
    kv_buffer_bytes: int | None = None  # llama.cpp / Ollama: the KV buffers, all devices
    # Settings the files leave unset, as the engine fills them: (Deployment field, value), e.g.
    # ("max_num_seqs", 256). kvlint.sizing.size turns them into Sourced(default=True) values.
    defaults: tuple[tuple[str, object], ...] = ()
    missing: tuple[str, ...] = ()  # facts the files do not give ("GPU type", ...)
    notes: tuple[str, ...] = field(default=())  # what decided the outcome (defaults used, ...)

    @property
    def borderline(self) -> bool:
        return self.verdict == BORDERLINE

    @property
    def refusal_at_risk(self) -> Refusal | None:
        """The refusal a finding reports: the point one, else the band's when borderline."""
        if self.refusal is not None:
            return self.refusal
        return self.band_refusal if self.borderline else None

    @property
    def admitted_sequences(self) -> int:
        """Sequences of ``max_model_len`` tokens the engine holds at once (0 when it would
        refuse to start): the most a concurrency cap can usefully be. The engine's own count
        when its accounting gives one (``admitted``), else the whole part of the concurrency."""
        if self.fits is False or not self.max_concurrency or self.max_concurrency <= 0:
            return 0
        if self.admitted is not None:
            return self.admitted
        return max(0, math.floor(self.max_concurrency + 1e-9))


def across(
    readings: list[tuple[str, EngineEstimate]], why: str, *, always: bool = True
) -> EngineEstimate:
    """One estimate for a deployment the files leave ambiguous (a GPU name that does not pin
    the memory, no engine version): the figures of the first reading (the smallest GPU, the
    version sized as), the band across every reading's band, and a verdict that is
    ``starts`` or ``refuses`` only when every reading agrees; ``why`` says what was varied
    and is kept as a note (``always``, else only when the readings disagree) and as the caveat
    when they disagree."""
    first = readings[0][1]
    estimates = [e for _, e in readings]
    verdicts = {e.verdict for e in estimates}
    verdict = first.verdict
    if None not in verdicts and len(verdicts) > 1:
        verdict = BORDERLINE
    elif verdicts == {STARTS} or verdicts == {REFUSES}:
        verdict = verdicts.pop()

    def low(name: str) -> Any:
        values = [v for e in estimates if (v := _end(e, name, "low")) is not None]
        return min(values) if values else None

    def high(name: str) -> Any:
        values = [v for e in estimates if (v := _end(e, name, "high")) is not None]
        return max(values) if values else None

    told = ", ".join(f"{label}: {_said(e)}" for label, e in readings)
    note = f"{why}; {told}"
    caveat = first.caveat
    disagree = len(verdicts) > 1
    doubt = _doubt(readings)
    if disagree and caveat is None:
        # one short clause a finding can carry: what differs, not every reading's figures
        caveat = f"{why}: {doubt}" if doubt else note
    at_risk = next((e.refusal_at_risk for e in estimates if e.refusal_at_risk is not None), None)
    return replace(
        first,
        available_kv_bytes_low=low("available_kv_bytes"),
        available_kv_bytes_high=high("available_kv_bytes"),
        kv_cache_tokens_low=low("kv_cache_tokens"),
        kv_cache_tokens_high=high("kv_cache_tokens"),
        max_concurrency_low=low("max_concurrency"),
        max_concurrency_high=high("max_concurrency"),
        verdict=verdict,
        band_refusal=first.band_refusal or (at_risk if verdict == BORDERLINE else None),
        caveat=caveat,
        notes=(*first.notes, note) if always or disagree else first.notes,
    )


def across_versions(readings: list[tuple[str, EngineEstimate]], engine: str) -> EngineEstimate:
    """One estimate for a file that names no engine version, sized at the release the figures
    are at (the first reading) and at the newest of each older line whose accounting differs.
    The figures and the band stay the first line's (a band spanning release lines is no
    band); where the lines' verdicts differ, the verdict is borderline and ``version_doubt``
    says so once, short; ``readings`` keeps every line's verdict."""
    first = readings[0][1]
    shown = tuple(Reading(v, e.verdict, e.available_kv_bytes) for v, e in readings)
    differs = _doubt(readings)
    if differs is None:
        # every line agrees (or one is not sized): nothing to doubt, and no caveat that says an
        # older release would start
        return replace(first, readings=shown, caveat=None)
    doubt = f"no {engine} version named: {differs}"
    at_risk = next((e.refusal_at_risk for _, e in readings if e.refusal_at_risk), None)
    told = ", ".join(f"{v} ({_said(e)})" for v, e in readings)
    return replace(
        first,
        verdict=BORDERLINE,
        band_refusal=first.band_refusal or at_risk,
        caveat=doubt,
        version_doubt=doubt,
        readings=shown,
        notes=(*first.notes, f"no {engine} version named: sized at {told}"),
    )


def _doubt(readings: list[tuple[str, EngineEstimate]]) -> str | None:
    """'0.20.2 and 0.10.2 refuse where 0.33.0 starts': the readings whose verdict differs from
    the first's, grouped by verdict; None when every reading agrees or one is not sized."""
    label, first = readings[0]
    others = [(v, e) for v, e in readings[1:] if e.verdict != first.verdict]
    if first.verdict is None or not others or any(e.verdict is None for _, e in others):
        return None
    groups: dict[str, list[str]] = {}
    for version, e in others:
        assert e.verdict is not None
        groups.setdefault(e.verdict, []).append(version)
    parts = [_says(" and ".join(vs), verdict, len(vs)) for verdict, vs in groups.items()]
    return f"{' and '.join(parts)} where {_says(label, first.verdict)}"


def _says(subject: str, verdict: str | None, count: int = 1) -> str:
    """'0.10.2 refuses', '0.10.2 and 0.8.5 refuse', '0.33.0 may refuse'."""
    verb = {STARTS: "starts", REFUSES: "refuses", BORDERLINE: "may refuse"}[verdict or STARTS]
    if count > 1 and verb != "may refuse":
        verb = verb[:-1]
    return f"{subject} {verb}"


def _end(e: EngineEstimate, name: str, end: str) -> Any:
    """A figure's band end, else the figure itself (a reading without a band)."""
    value = getattr(e, f"{name}_{end}")
    return value if value is not None else getattr(e, name)


def _said(e: EngineEstimate) -> str:
    if e.verdict is None:
        return "not sized"
    if e.available_kv_bytes is None:
        return e.verdict
    return f"{e.verdict}, {e.available_kv_bytes / 2**30:.2f} GiB per GPU"
