"""KV301 max-num-seqs-over-kv-budget: more sequences than the KV pool admits at full length."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n
from . import _stated

# Engines whose concurrency cap is a number of running sequences drawn from one shared pool;
# llama.cpp and Ollama carve their slots out of the context, and TGI's
# `max_concurrent_requests` also counts queued requests (a plan's claim still applies).


class MaxNumSeqsOverKvBudget(Rule):
    """## What it does
    Checks that the concurrency cap fits in the KV-cache pool at full context. The cap
    (`max_num_seqs`, SGLang `max_running_requests`) or a plan's
    concurrency target is compared with the sequences of `max_model_len` tokens (or the plan's
    claimed context) that the engine's pool admits.

    ## Why is this bad?
    The pool, not the cap, decides how many sequences run at once. A cap above what the pool
    admits promises concurrency the engine cannot deliver: requests queue or are preempted
    under load, and a plan sized on the cap buys too few GPUs. The message gives the
    sequences the pool really holds.

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

    ## Fix safety
    Lowering the cap changes how many requests run at once, so the fix is unsafe.
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
        pool = engine.available_kv_bytes * gpus
        # What the engine charges one full-length sequence, over every GPU of one model copy.
        if settled.facts.pool_is_cells:
            # llama.cpp allocates `-c` cells up front: the pool is those cells, not free memory.
            if not engine.kv_cache_tokens:
                return
            pool = engine.kv_cache_tokens * _stated.per_token(kv)
            per_seq = kv.per_sequence_bytes(engine.max_model_len)
        elif engine.needed_bytes_one_sequence:
            per_seq = engine.needed_bytes_one_sequence * gpus
        elif engine.max_concurrency:
            per_seq = round(pool / engine.max_concurrency)
        else:
            per_seq = kv.per_sequence_bytes(engine.max_model_len)
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
                context = ("max_model_len", engine.max_model_len)
                label = n.name(sizing, "max_num_seqs")
                tokens = engine.kv_cache_tokens
                yield from self._report(
                    sizing, cap, label, context, per_seq, pool, admitted, tokens
                )
        claim = dep.claims.concurrency
        if claim is not None:
            copies = max(1, settled.data_parallel_size.value)
            if settled.gpu_count is not None and dep.carrier == "plan":
                copies = max(copies, settled.gpu_count.value // gpus)
            length = dep.claims.context.value if dep.claims.context else engine.max_model_len
            if length != engine.max_model_len:
                # Scale first principles by what the engine charges on top (replicated heads,
                # block rounding) at its own max_model_len.
                charge = per_seq / max(1, kv.per_sequence_bytes(engine.max_model_len))
                per_seq = round(kv.per_sequence_bytes(length) * charge)
            admitted = copies * pool // per_seq
            field = "context" if dep.claims.context else "max_model_len"
            tokens = engine.kv_cache_tokens * copies if engine.kv_cache_tokens else None
            yield from self._report(
                sizing,
                claim,
                "`concurrency`",
                (field, length),
                per_seq,
                copies * pool,
                admitted,
                tokens,
            )

    def _report(
        self,
        sizing: Sizing,
        value: Sourced[Any],
        label: str,
        context: tuple[str, int],
        per_seq: int,
        pool: int,
        admitted: int,
        tokens: int | None,
    ) -> Iterator[Problem]:
        requested = int(value.value)
        if requested <= admitted:
            return
        field, length = context
        where = "`context`" if field == "context" else n.name(sizing, "max_model_len")
        held = f" ({n.count(tokens)} tokens)" if tokens else ""
        message = (
            f"{label} {requested} needs {n.gb(requested * per_seq)} of KV cache at {where} "
            f"{length} ({n.gb(per_seq)} per sequence); the pool holds {n.gb(pool)}{held}, "
            f"enough for {admitted}"
        )
        numbers = (
            ("requested", str(requested)),
            ("admitted", str(admitted)),
            ("context", n.count(length)),
            ("per sequence", n.gb(per_seq)),
            ("pool", n.gb(pool)),
            ("pool tokens", n.count(tokens) if tokens else "unknown"),
            ("needed", n.gb(requested * per_seq)),
        )
        title = f"Lower {label} to {admitted}"
        yield Problem(value.span, message, n.fix(title, value, str(admitted)), numbers)
