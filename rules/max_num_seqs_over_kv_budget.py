"""KV301 max-num-seqs-over-kv-budget: more sequences than the KV pool admits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from typing import NamedTuple

from kvlint.deployment import Deployment
from kvlint.deployment import RequestLength
from kvlint.deployment import Sourced
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class Fit(NamedTuple):
    """What the pool admits at one request length, and how a message names that length."""

    tokens: int
    where: str  # "if every request used all 32,768 tokens of `max_model_len`"
    short: str  # "at `max_model_len` 32,768" (for the explain table)
    per_sequence: int  # bytes one request takes, over the GPUs of one model copy
    admitted: int


class MaxNumSeqsOverKvBudget(Rule):
    """## What it does
    Checks that the concurrency cap fits in the KV-cache pool. The cap (`max_num_seqs`,
    SGLang `max_running_requests`) or a plan's concurrency target is compared with the
    sequences the engine's pool admits if every request used all of `max_model_len` (what
    vLLM logs as "Maximum concurrency for N tokens per request"). When a plan's `workload`
    (or the config's `workload` for the file) states how long requests really are, the cap
    is compared at those lengths instead: a warning above what fits at the workload's length
    (its highest stated percentile), an error above what fits even at the shortest stated.

    ## Why is this bad?
    The pool, not the cap, decides how many sequences run at once. A cap above what the pool
    admits promises concurrency the engine cannot deliver: requests queue or are preempted
    under load, and a plan sized on the cap buys too few GPUs. The message says which length
    it judged at and gives the sequences the pool really holds.

    ## Example
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-70b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=4,
                 --max-model-len=32768, --max-num-seqs=256]
          resources: {limits: {nvidia.com/gpu: 4}}
    ```

    Use instead:
    ```yaml
    apiVersion: v1
    kind: Pod
    metadata: {name: llama-70b}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model=meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size=4,
                 --max-model-len=32768, --max-num-seqs=14]
          resources: {limits: {nvidia.com/gpu: 4}}
    ```

    A workload whose requests are short states it once (in the plan, or per path in
    `.kvlint.yaml`), and the cap is judged at that length:
    ```yaml
    # file: .kvlint.yaml
    workload:
      "batch/*.yaml": {prompt-tokens: 1800, output-tokens: 200, p95-tokens: 3000}
    ```

    ## Fix safety
    Lowering the cap (or `max_model_len`) changes how many requests run at once, or how long
    they may be, so the fix is unsafe.
    """

    code = "KV301"
    name = "max-num-seqs-over-kv-budget"
    severity = Severity.WARNING
    fix_availability = FixAvailability.ALWAYS

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        engine, kv = sizing.engine, sizing.kv
        if engine is None or kv is None or not engine.available_kv_bytes:
            return
        if engine.available_kv_bytes <= 0 or not engine.max_model_len:
            return
        settled = n.settled(sizing)
        gpus = settled.model_gpus
        pool = n.pool_bytes(sizing)
        if pool is None:
            return
        length = engine.max_model_len
        # What the engine charges one full-length sequence, over every GPU of one model copy.
        if settled.facts.pool_is_cells:
            per_seq = kv.per_sequence_bytes(length)
        elif engine.needed_bytes_one_sequence:
            per_seq = engine.needed_bytes_one_sequence * gpus
        elif engine.max_concurrency:
            per_seq = round(pool / engine.max_concurrency)
        else:
            per_seq = kv.per_sequence_bytes(length)
        if per_seq <= 0:
            return
        cap = settled.max_num_seqs
        if n.explicit(cap) and settled.facts.pooled_admission and cap is not None:
            # Whole blocks less the null block, as the scheduler admits them (and as
            # `kvlint solve` answers), not the logged concurrency rounded to two decimals.
            if engine.max_concurrency is not None:
                admitted = engine.admitted_sequences
                if admitted == 0 and engine.fits:
                    # The engine's own start-up check passed (0.11 does not count the null
                    # block there): one sequence is what it runs.
                    admitted = 1
            else:
                admitted = pool // per_seq
            if admitted >= 1:
                label = n.name(sizing, "max_num_seqs")
                full = Fit(
                    length,
                    f"if every request used all {n.count(length)} tokens of "
                    f"{n.name(sizing, 'max_model_len')}",
                    f"at {n.name(sizing, 'max_model_len')} {n.count(length)}",
                    per_seq,
                    admitted,
                )
                yield from self._cap(sizing, cap, label, full, pool, per_seq)
        claim = dep.claims.concurrency
        if claim is not None:
            copies = max(1, settled.data_parallel_size.value)
            if settled.gpu_count is not None and dep.carrier == "plan":
                copies = max(copies, settled.gpu_count.value // gpus)
            stated = dep.claims.context.value if dep.claims.context else length
            if stated != length:
                per_seq = _scaled(sizing, per_seq, length, stated)
            field = "`context`" if dep.claims.context else n.name(sizing, "max_model_len")
            fit = Fit(
                stated,
                f"at {field} {n.count(stated)}",
                f"at {field} {n.count(stated)}",
                per_seq,
                copies * pool // per_seq,
            )
            tokens = engine.kv_cache_tokens * copies if engine.kv_cache_tokens else None
            if int(claim.value) > fit.admitted:
                yield self._problem(sizing, claim, "`concurrency`", fit, copies * pool, tokens)

    def _cap(
        self,
        sizing: Sizing,
        cap: Sourced[Any],
        label: str,
        full: Fit,
        pool: int,
        per_seq: int,
    ) -> Iterator[Problem]:
        """The cap against the full length, or against the workload's lengths when stated."""
        engine = sizing.engine
        assert engine is not None
        tokens = engine.kv_cache_tokens
        requested = int(cap.value)
        workload = n.settled(sizing).workload
        lengths = workload.lengths() if workload is not None else ()
        if not lengths:
            if requested > full.admitted:
                yield self._problem(sizing, cap, label, full, pool, tokens)
            return
        fits = [self._at(sizing, length.tokens, pool, per_seq) for length in lengths]
        fits = [
            fit._replace(where=_stated_length(length), short=_stated_length(length))
            for fit, length in zip(fits, lengths, strict=True)
        ]
        shortest, longest = fits[0], fits[-1]
        table = (*fits, full)
        if requested > shortest.admitted:
            yield self._problem(sizing, cap, label, shortest, pool, tokens, table, Severity.ERROR)
        elif requested > longest.admitted:
            yield self._problem(sizing, cap, label, longest, pool, tokens, table)

    def _at(self, sizing: Sizing, length: int, pool: int, per_seq: int) -> Fit:
        """What the pool admits at a workload length: the engine's own count when its
        accounting has one, else its full-length charge scaled by first principles."""
        engine = sizing.engine
        assert engine is not None
        gpus = n.settled(sizing).model_gpus
        for admission in engine.admitted_at:
            if admission.tokens == length:
                return Fit(length, "", "", admission.bytes_per_request * gpus, admission.sequences)
        scaled = _scaled(sizing, per_seq, engine.max_model_len, length)
        return Fit(length, "", "", scaled, pool // max(1, scaled))

    def _problem(
        self,
        sizing: Sizing,
        value: Sourced[Any],
        label: str,
        fit: Fit,
        pool: int,
        tokens: int | None,
        table: tuple[Fit, ...] = (),
        severity: Severity | None = None,
    ) -> Problem:
        requested = int(value.value)
        message = (
            f"{label} {requested} needs {n.gib(requested * fit.per_sequence)} of KV cache "
            f"{fit.where} ({n.gib(fit.per_sequence)} each); the pool holds "
            f"{n.pool_text(sizing, pool, tokens)}, enough for {fit.admitted}"
        )
        numbers: list[tuple[str, str]] = [
            ("requested", str(requested)),
            ("judged", fit.short),
            ("admitted", str(fit.admitted)),
        ]
        numbers.extend(
            (f"admitted {other.short}", f"{other.admitted} ({n.gib(other.per_sequence)} each)")
            for other in table
        )
        numbers.extend(
            (
                ("per sequence", n.gib(fit.per_sequence)),
                ("pool", n.pool_text(sizing, pool)),
                ("pool tokens", n.count(tokens) if tokens else "unknown"),
                ("needed", n.gib(requested * fit.per_sequence)),
            )
        )
        title = f"Lower {label} to {fit.admitted}"
        cap_length = sizing.engine.cap_length if sizing.engine is not None else None
        if label != "`concurrency`" and fit.tokens == _full_length(sizing) and cap_length:
            title += (
                f", or {n.name(sizing, 'max_model_len')} to {n.count(cap_length)} "
                f"(where {requested} fit)"
            )
        return Problem(
            value.span, message, n.fix(title, value, str(fit.admitted)), tuple(numbers), severity
        )


def _full_length(sizing: Sizing) -> int:
    return sizing.engine.max_model_len if sizing.engine is not None else 0


def _scaled(sizing: Sizing, per_seq: int, length: int, other: int) -> int:
    """``per_seq`` (what the engine charges at ``length``) at ``other`` tokens: first
    principles at ``other``, times what the engine charges on top at ``length`` (replicated
    heads, block rounding)."""
    kv = sizing.kv
    assert kv is not None
    charge = per_seq / max(1, kv.per_sequence_bytes(length))
    return max(1, round(kv.per_sequence_bytes(other) * charge))


def _stated_length(length: RequestLength) -> str:
    """'at the stated p95 of 3,000 tokens', 'at the stated typical request of 2,000 tokens
    (1,800 prompt + 200 output)'."""
    detail = f" ({length.detail})" if length.detail else ""
    return f"at the stated {length.label} of {n.count(length.tokens)} tokens{detail}"
