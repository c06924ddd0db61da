"""Replay every calibration log through kvlint and report how close its engine accounting comes.

    python benchmarks/fidelity.py            # per case and in total, both corpora
    python benchmarks/fidelity.py --fit      # also refit the overhead constants and print them
    python benchmarks/fidelity.py --only repo  # just the repository's corpus, with per-source rows

Reads ``../shared/fixtures/engine-logs/engine_logs.jsonl`` (real start-up logs with the settings
that produced them; see its README) and the repository's own corpus,
``tests/fixtures/engine-logs/corpus.jsonl`` (same schema; see its README), which the overhead
constants were never fitted to. For each case it builds a Deployment from the logged
settings, resolves the model through kvlint's catalog (else the shared ``hf-configs`` fixture),
and compares:

* available KV memory predicted from the GPU, settings and model alone, per GPU;
* ``GPU KV cache size`` tokens and ``Maximum concurrency`` predicted from the logged available
  memory (passed as ``kv_cache_memory_bytes``, so only the paging is tested);
* whether the engine refuses to start, for cases that log an error.

``--fit`` fits the activation-peak, non-torch and CUDA-graph constants of
``kvlint/engines/vllm/memory.py`` on the memory-breakdown cases (the ones logging
``activation_peak_gib``) and prints each constant with the cases that set it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kvlint.deployment import Deployment  # noqa: E402
from kvlint.deployment import Sourced  # noqa: E402
from kvlint.engines import estimate  # noqa: E402
from kvlint.estimate import EngineEstimate  # noqa: E402
from kvlint.finding import Span  # noqa: E402
from kvlint.gpus import lookup_gpu  # noqa: E402
from kvlint.model.spec import ModelSpec  # noqa: E402
from kvlint.units import GiB  # noqa: E402

LOGS = REPO.parent / "shared" / "fixtures" / "engine-logs" / "engine_logs.jsonl"
CORPUS = REPO / "tests" / "fixtures" / "engine-logs" / "corpus.jsonl"
HF_CONFIGS = REPO.parent / "shared" / "fixtures" / "hf-configs"
SPAN = Span("engine_logs.jsonl", 1, 1)

# Log lines only the V0 engine prints: such a case is replayed as a V0 release.
_V0_MARKERS = ("worker.py:267]", "executor_base.py", "model_runner.py:11", "# cuda blocks")


def load_cases(path: Path = LOGS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# Cases whose ``model`` field is free text: the Hub id the case's notes identify.
MODEL_NAMES = {
    "LLaMa 3.1 70B": "meta-llama/Meta-Llama-3.1-70B-Instruct",
    "Llama2-70b": "meta-llama/Llama-2-70b-hf",
    "deepseek-coder-6.7b-instruct": "deepseek-ai/deepseek-coder-6.7b-instruct",
    "mistralai_mistral-7b-instruct-v0.2": "mistralai/Mistral-7B-Instruct-v0.2",
    "Qwen/Qwen1.5-72B-Chat-GGUF": "Qwen/Qwen1.5-72B-Chat",
}


def resolve_model(case: dict[str, Any]) -> ModelSpec | None:
    """The case's model through the catalog, else the matching shared config fixture."""
    ref = str(case.get("model") or "").split(" (")[0].strip()
    ref = MODEL_NAMES.get(ref, ref)
    if not ref:
        return None
    try:
        from kvlint.model.catalog import lookup

        spec = lookup(ref)
        if spec is not None:
            return spec
    except Exception:  # the catalog may be absent in a partial checkout
        pass
    candidate = HF_CONFIGS / (ref.replace("/", "__") + ".json")
    if candidate.exists():
        from kvlint.model.hf import load_config_file

        return load_config_file(candidate)
    return None


def _version(case: dict[str, Any]) -> str | None:
    version = case.get("engine_version")
    quotes = " ".join(case.get("quotes") or [])
    if version is None and any(marker in quotes for marker in _V0_MARKERS):
        return "0.7.3"  # the log shows the V0 engine
    return str(version) if version else None


def _kv_dtype(case: dict[str, Any]) -> tuple[str | None, str | None]:
    raw = case.get("kv_cache_dtype")
    if not raw:
        return None, None
    if raw.startswith("k="):
        parts = dict(item.split("=") for item in raw.split(","))
        return parts.get("k"), parts.get("v")
    return str(raw), None


def _quant(case: dict[str, Any]) -> str | None:
    raw = case.get("quantization")
    if not raw:
        return None
    word = str(raw).split(" ")[0].lower()
    return None if word in ("gguf", "none") else word


def deployment(case: dict[str, Any], *, kv_bytes: int | None = None) -> Deployment:
    """The logged settings as a Deployment (``kv_bytes`` pins the available memory)."""

    def s(value: Any) -> Any:
        return None if value is None else Sourced(value, SPAN)

    k, v = _kv_dtype(case)
    dep = Deployment(
        path="engine_logs.jsonl",
        span=SPAN,
        name=case["id"],
        carrier="log",
        engine=Sourced(case["engine"], SPAN),
    )
    dep.engine_version = s(_version(case))
    dep.gpu = s(case.get("gpu"))
    dep.gpu_count = s(case.get("gpu_count"))
    dep.tensor_parallel_size = s(case.get("tensor_parallel_size"))
    dep.pipeline_parallel_size = s(case.get("pipeline_parallel_size"))
    dep.memory_fraction = s(case.get("gpu_memory_utilization"))
    dep.max_model_len = s(case.get("max_model_len"))
    dep.max_num_seqs = s(case.get("max_num_seqs"))
    dep.max_num_batched_tokens = s(case.get("max_num_batched_tokens"))
    dep.kv_cache_dtype = s(k)
    dep.kv_cache_dtype_v = s(v)
    dep.quantization = s(_quant(case))
    dep.block_size = s(case.get("block_size"))
    dep.enforce_eager = s(case.get("enforce_eager"))
    dep.kv_cache_memory_bytes = s(kv_bytes)
    dep.dtype = s(_model_dtype(case))
    if case.get("data_parallel_size"):
        dep.data_parallel_size = s(case["data_parallel_size"])
    command = " ".join(case.get("quotes") or [])
    if "--enable-dp-attention" in command:
        dep.settings = {"enable-dp-attention": Sourced(True, SPAN)}
        dp = re.search(r"--dp(?:-size)? (\d+)", command)
        dep.data_parallel_size = s(int(dp.group(1)) if dp else None)
    return dep


def _model_dtype(case: dict[str, Any]) -> str | None:
    """The dtype the log's engine config line shows (``dtype=torch.float32``)."""
    text = " ".join([*(case.get("quotes") or []), str(case.get("notes") or "")])
    match = re.search(r"dtype=torch\.(float32|float16|bfloat16)", text)
    return match.group(1) if match else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


@dataclass
class Replay:
    """One case replayed: kvlint's figures beside the logged ones (None when not comparable)."""

    case: dict[str, Any]
    spec: ModelSpec | None
    free: EngineEstimate | None  # from GPU, settings and model
    pinned: EngineEstimate | None  # from the logged available memory

    @property
    def logged(self) -> dict[str, Any]:
        return dict(self.case["logged"])

    def avail_error(self) -> float | None:
        logged = _number(self.logged.get("available_kv_gib"))
        if self.free is None or self.free.available_kv_bytes is None or not logged:
            return None
        if self.case["engine"] != "vllm" or logged <= 0:
            return None
        return (self.free.available_kv_bytes / GiB - logged) / logged

    def tokens_error(self) -> float | None:
        """vLLM: from the logged memory. SGLang and TGI log no memory: from the GPU alone."""
        logged = _number(self.logged.get("kv_cache_tokens"))
        source = self.pinned if self.case["engine"] == "vllm" else self.free
        if source is None or not logged or source.kv_cache_tokens is None:
            return None
        return (source.kv_cache_tokens - logged) / logged

    def trtllm_pinned_error(self) -> float | None:
        """TensorRT-LLM: blocks (else tokens) from the logged pool against the logged ones."""
        e, lg = self.pinned, self.logged
        if e is None:
            return None
        for predicted, logged in (
            (e.num_blocks, lg.get("gpu_blocks")),
            (e.kv_cache_tokens, lg.get("kv_cache_tokens")),
        ):
            if predicted is not None and _number(logged):
                return (predicted - float(logged)) / float(logged)
        return None

    def concurrency_error(self) -> float | None:
        logged = _number(self.logged.get("max_concurrency"))
        if self.pinned is None or not logged or self.pinned.max_concurrency is None:
            return None
        return (self.pinned.max_concurrency - logged) / logged

    def pool_error(self) -> float | None:
        """The pool predicted from the GPU, settings and model alone against the logged one:
        blocks when the log gives blocks, else tokens (vLLM, SGLang, TGI, TensorRT-LLM), else
        the KV buffer (llama.cpp, one device), else the maximum concurrency. The end-to-end
        figure for the cases whose log prints no available memory."""
        e, lg = self.free, self.logged
        if e is None:
            return None
        pairs = [
            (e.num_blocks, lg.get("gpu_blocks")),
            (e.kv_cache_tokens, lg.get("kv_cache_tokens")),
        ]
        if (self.case.get("gpu_count") or 1) == 1 and lg.get("kv_buffer_mib"):
            pairs.append((e.kv_buffer_bytes, lg["kv_buffer_mib"] * 2**20))
        pairs.append((e.max_concurrency, lg.get("max_concurrency")))  # when only this is logged
        for predicted, logged in pairs:
            if predicted is not None and _number(logged):
                return (predicted - float(logged)) / float(logged)
        return None

    def start_verdict(self) -> tuple[bool, bool] | None:
        """(predicted refusal, logged refusal) for every case kvlint gives a verdict on: the
        memory refusals of ``verdict`` and the cases that started (a refusal predicted for
        one of those is a false alarm)."""
        if self.logged.get("error"):
            return self.verdict()
        if self.logged.get("non_memory_error"):
            return None  # it failed for another reason: neither a start nor a refusal
        if self.free is None or self.free.fits is None:
            return None
        return (not self.free.fits, False)

    def verdict(self) -> tuple[bool, bool] | None:
        """(predicted refusal, logged refusal) for cases that log a memory refusal."""
        if not self.logged.get("error") or self.free is None or self.free.fits is None:
            return None
        if self.case["id"] in NOT_A_MEMORY_REFUSAL:
            return None
        return (not self.free.fits, True)


# Cases that log an error whose wording blames memory where the engine's source shows the
# message covers any failure; the verdict is not counted for them (the summary names them).
NOT_A_MEMORY_REFUSAL = {
    "tgi-llama-2-70b-8xa10g-16000-error": (
        "TGI 0.9.3 (the Args it prints, with `max_batch_total_tokens: 16000` unwrapped and the "
        "ngrok fields, are 0.9.1-0.9.3's; GQA for Llama 2 70B arrived in 0.9.3) wraps its whole "
        "warm-up in `except Exception` and reports any failure as 'Not enough memory' "
        "(server/text_generation_server/models/flash_causal_lm.py at tag v0.9.3, warmup()). "
        "'with 2 prefill tokens' is len(batch.input_ids) after generate_token() set it to the "
        "two warm-up requests' next tokens: the cache (1,010 blocks, 0.62 GiB per GPU) was "
        "allocated and the 4,096-token prefill had run when it failed. Per GPU: 16.06 GiB of "
        "weights + 0.62 GiB of cache + under 1 GiB of logits and activations, of the A10G's "
        "22.06 GiB; the exception itself is not in the issue"
    ),
}


def replay(case: dict[str, Any]) -> Replay:
    spec = resolve_model(case)
    if spec is None:
        return Replay(case, None, None, None)
    gpu = lookup_gpu(str(case.get("gpu") or ""))
    free = estimate(deployment(case), spec, gpu)
    pinned = None
    avail = case["logged"].get("available_kv_gib")
    if case["engine"] == "trtllm":
        budget = trtllm_budget(case)
        if budget is not None:  # the pool alone: no GPU, so only the budget sizes it
            pinned = estimate(deployment(case, kv_bytes=budget), spec, None)
    elif avail and avail > 0:
        pinned = estimate(deployment(case, kv_bytes=round(avail * GiB)), spec, gpu)
    return Replay(case, spec, free, pinned)


def trtllm_budget(case: dict[str, Any]) -> int | None:
    """TensorRT-LLM's pool as its log gives it: the allocated pool ("Allocated X GiB for max
    tokens in paged KV cache"), else the free memory it sized from ("available: Y GiB") times
    free_gpu_memory_fraction (0.9 when the case does not state it)."""
    logged = case["logged"]
    if _number(logged.get("kv_pool_gib")):
        return round(float(logged["kv_pool_gib"]) * GiB)
    if _number(logged.get("trtllm_available_gib")):
        fraction = case.get("gpu_memory_utilization") or 0.9
        return round(float(logged["trtllm_available_gib"]) * fraction * GiB)
    return None


def _figure(e: EngineEstimate | None, logged: Any, unit: str) -> str:
    if e is None or not logged:
        return "-"
    got = e.num_blocks if unit == "blocks" else e.kv_cache_tokens
    return "-" if got is None else f"{got:,} ({(got - logged) / logged:+.2%})"


def trtllm_report(replays: list[Replay]) -> None:
    """TensorRT-LLM's pool: tokens (or blocks) from the GPU and settings, and from the pool
    its log states (the per-token size and block rounding alone)."""
    rows = [r for r in replays if r.case["engine"] == "trtllm"]
    if not rows:
        return
    print(f"\nTensorRT-LLM: {len(rows)} cases, {sum(r.spec is not None for r in rows)} resolved")
    for r in rows:
        lg = r.logged
        logged = lg.get("gpu_blocks") or lg.get("kv_cache_tokens")
        unit = "blocks" if lg.get("gpu_blocks") else "tokens"

        shown = f"{logged:,} {unit}" if logged else "no pool logged"
        why = "" if r.spec is not None else "  (model not resolved)"
        print(
            f"  {r.case['id'][:60]:60} logged {shown}; from GPU {_figure(r.free, logged, unit)}; "
            f"given the logged memory {_figure(r.pinned, logged, unit)}{why}"
        )
    gpu = [e for r in rows if (e := r.pool_error()) is not None]
    given = [e for r in rows if (e := r.trtllm_pinned_error()) is not None]
    print(f"  pool from GPU and settings: {_count(gpu, 0.10)} within 10%")
    print(f"  pool given the logged memory: {_count(given, 0.02)} within 2%")


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value * 100:+.2f}%"


def report(replays: list[Replay]) -> None:
    print(f"{'case':58} {'eng':8} {'avail':>9} {'tokens':>9} {'conc':>9} verdict")
    for r in replays:
        verdict = r.verdict()
        shown = "" if verdict is None else ("right" if verdict[0] == verdict[1] else "WRONG")
        model = "" if r.spec is not None else "  (model not resolved)"
        print(
            f"{r.case['id'][:58]:58} {r.case['engine']:8} {_pct(r.avail_error()):>9} "
            f"{_pct(r.tokens_error()):>9} {_pct(r.concurrency_error()):>9} {shown}{model}"
        )
    avail = [abs(e) for r in replays if (e := r.avail_error()) is not None]
    tokens = [
        abs(e)
        for r in replays
        if r.case["engine"] == "vllm" and (e := r.tokens_error()) is not None
    ]
    others = [
        (r.case["id"], e)
        for r in replays
        if r.case["engine"] != "vllm" and (e := r.tokens_error()) is not None
    ]
    conc = [abs(e) for r in replays if (e := r.concurrency_error()) is not None]
    verdicts = [v for r in replays if (v := r.verdict()) is not None]
    resolved = sum(1 for r in replays if r.spec is not None)
    print()
    print(f"cases: {len(replays)}, model resolved: {resolved}")
    if avail:
        within = sum(1 for e in avail if e <= 0.10)
        print(
            f"available KV memory (GPU + settings + model): {len(avail)} cases, "
            f"{within} within 10% ({within / len(avail):.0%}), median |error| "
            f"{statistics.median(avail):.2%}, max {max(avail):.2%}"
        )
    if tokens:
        within1 = sum(1 for e in tokens if e <= 0.01)
        within2 = sum(1 for e in tokens if e <= 0.02)
        print(
            f"vLLM KV cache tokens (given the logged memory): {len(tokens)} cases, "
            f"{within1} within 1%, {within2} within 2%, "
            f"median |error| {statistics.median(tokens):.3%}, max {max(tokens):.2%}"
        )
    if conc:
        within = sum(1 for e in conc if e <= 0.01)
        print(
            f"max concurrency (given the logged memory): {len(conc)} cases, {within} within 1%, "
            f"median |error| {statistics.median(conc):.3%}, max {max(conc):.2%}"
        )
    for case_id, error in others:
        print(f"{case_id}: pool tokens from the GPU alone {error:+.2%}")
    if verdicts:
        right = sum(1 for predicted, logged in verdicts if predicted == logged)
        print(
            f"start / refuse verdict (cases logging a memory refusal): "
            f"{right}/{len(verdicts)} right"
        )
    for case_id, reason in NOT_A_MEMORY_REFUSAL.items():
        print(f"not counted, {case_id}: the error is not a memory refusal: {reason}")


def detail(replays: list[Replay]) -> None:
    """Each memory term predicted beside the logged one (GiB, per GPU)."""
    print(f"\n{'case':50} {'weights':>13} {'activation':>11} {'non-torch':>11} {'avail':>13}")
    for r in replays:
        e = r.free
        if e is None or e.available_kv_bytes is None or r.case["engine"] != "vllm":
            continue
        lg = r.logged

        def pair(pred: int | None, logged: float | None) -> str:
            p = "-" if pred is None else f"{pred / GiB:.2f}"
            q = "-" if logged is None else f"{logged:.2f}"
            return f"{p}/{q}"

        print(
            f"{r.case['id'][:50]:50} {pair(e.weights_bytes, lg.get('weights_gib')):>13} "
            f"{pair(e.activation_bytes, lg.get('activation_peak_gib')):>11} "
            f"{pair(e.non_torch_bytes, lg.get('non_torch_gib')):>11} "
            f"{pair(e.available_kv_bytes, lg.get('available_kv_gib')):>13}"
        )


def _least_squares(rows: list[tuple[float, float]], ys: list[float]) -> tuple[float, float]:
    """y = a*x1 + b*x2 with no intercept (normal equations)."""
    s11 = sum(x1 * x1 for x1, _ in rows)
    s12 = sum(x1 * x2 for x1, x2 in rows)
    s22 = sum(x2 * x2 for _, x2 in rows)
    t1 = sum(x1 * y for (x1, _), y in zip(rows, ys, strict=True))
    t2 = sum(x2 * y for (_, x2), y in zip(rows, ys, strict=True))
    det = s11 * s22 - s12 * s12
    return (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det


def fit(replays: list[Replay]) -> None:
    """Fit the overhead constants on the memory-breakdown cases and print them."""
    from kvlint.arith.weights import pp_layer_ranges

    breakdown = [
        r
        for r in replays
        if r.spec is not None
        and r.logged.get("activation_peak_gib") is not None
        and r.case.get("max_num_batched_tokens")
    ]
    # The sampler's bytes per logit: dense single-stage cases whose vocabulary is large enough
    # for the logits to be the peak (>= 100k), as logged / (vocab x rows).
    per_logit: list[tuple[str, float]] = []
    # The forward pass's bytes per MLP activation: pipeline stage 0 (no sampler) and the 32k
    # vocabularies, where the forward pass is the peak.
    per_activation: list[tuple[str, float]] = []
    for r in breakdown:
        assert r.spec is not None
        tokens = int(r.case["max_num_batched_tokens"])
        seqs = int(r.case.get("max_num_seqs") or 256)
        pp = int(r.case.get("pipeline_parallel_size") or 1)
        peak = r.logged["activation_peak_gib"] * GiB
        tp = int(r.case.get("tensor_parallel_size") or 1)
        intermediate = (r.spec.intermediate_size or 4 * r.spec.hidden_size) / tp
        if pp > 1 or r.spec.vocab_size < 40_000:
            per_activation.append((r.case["id"], peak / (intermediate * tokens)))
        elif r.spec.vocab_size >= 100_000 and not r.spec.num_experts:
            per_logit.append((r.case["id"], peak / (r.spec.vocab_size * min(seqs, tokens))))
    print(f"\nactivation peak: {len(breakdown)} cases log it")
    a = statistics.median(v for _, v in per_logit)
    f = statistics.median(v for _, v in per_activation)
    print(f"  ACT_BYTES_PER_LOGIT = {a:.2f} (median of {len(per_logit)} cases)")
    print(f"  ACT_BYTES_PER_INTERMEDIATE_TOKEN = {f:.2f} (median of {len(per_activation)} cases:")
    for case_id, value in per_activation:
        print(f"    {case_id}: {value:.2f}")
    print("  )")

    groups: dict[str, list[float]] = {"tp1": [], "tp>1": [], "pp only": []}
    for r in breakdown:
        tp = int(r.case.get("tensor_parallel_size") or 1)
        pp = int(r.case.get("pipeline_parallel_size") or 1)
        key = "tp>1" if tp > 1 else ("pp only" if pp > 1 else "tp1")
        if r.logged.get("non_torch_gib") is not None and r.case.get("engine_version"):
            groups[key].append(r.logged["non_torch_gib"])
    print("\nnon-torch (vLLM 0.19 'non-torch forward increase'), median per group:")
    for key, values in groups.items():
        if values:
            print(f"  {key:8} {statistics.median(values):.2f} GiB over {len(values)} cases")

    graph_rows: list[tuple[float, float]] = []
    graph_ys: list[float] = []
    for r in breakdown:
        assert r.spec is not None
        estimated = r.logged.get("cuda_graph_estimated_gib")
        if estimated is None:
            continue
        tp = int(r.case.get("tensor_parallel_size") or 1)
        pp = int(r.case.get("pipeline_parallel_size") or 1)
        start, end = pp_layer_ranges(r.spec.num_layers, pp)[0]
        width = r.spec.hidden_size * (end - start) / (tp**0.25) * 1024
        graph_rows.append((1.0, width))
        graph_ys.append(estimated * GiB)
    if graph_rows:
        base, per = _least_squares(graph_rows, graph_ys)
        print(f"\nCUDA graphs (the 0.19 estimator's figure): {len(graph_rows)} cases")
        print(f"  GRAPH_BASE = {base / GiB:.3f} GiB  GRAPH_BYTES_PER_HIDDEN_LAYER = {per:.3f}")


def _count(errors: list[float], limit: float) -> str:
    if not errors:
        return "-"
    return f"{sum(1 for e in errors if abs(e) <= limit)}/{len(errors)}"


def per_source(replays: list[Replay]) -> None:
    """One row per source (a thread, a repository or a page): the same three figures."""
    sys.path.insert(0, str(REPO))
    from testing.engine_logs import source_key

    groups: dict[str, list[Replay]] = {}
    for r in replays:
        groups.setdefault(source_key(str(r.case["source"])), []).append(r)
    print(
        f"\n{'source':56} {'cases':>5} {'resolved':>8} {'avail<=10%':>10} {'tok<=2%':>8} "
        f"{'pool<=10%':>9} verdicts"
    )
    for key, rows in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        avail = [e for r in rows if (e := r.avail_error()) is not None]
        tokens = [
            e for r in rows if r.case["engine"] == "vllm" and (e := r.tokens_error()) is not None
        ]
        pools = [e for r in rows if (e := r.pool_error()) is not None]
        verdicts = [v for r in rows if (v := r.start_verdict()) is not None]
        right = sum(1 for predicted, logged in verdicts if predicted == logged)
        shown = f"{right}/{len(verdicts)}" if verdicts else "-"
        resolved = sum(1 for r in rows if r.spec is not None)
        print(
            f"{key[:56]:56} {len(rows):>5} {resolved:>8} {_count(avail, 0.10):>10} "
            f"{_count(tokens, 0.02):>8} {_count(pools, 0.10):>9} {shown}"
        )
    pools = [e for r in replays if (e := r.pool_error()) is not None]
    if pools:
        print(
            "pool from the GPU alone (blocks, tokens, KV buffer or concurrency): "
            f"{len(pools)} cases, {_count(pools, 0.10)} within 10%, median |error| "
            f"{statistics.median(abs(e) for e in pools):.1%}"
        )
    every = [v for r in replays if (v := r.start_verdict()) is not None]
    refusals = [v for v in every if v[1]]
    starts = [v for v in every if not v[1]]
    print(
        f"start / refuse verdicts, every case with one: {sum(p == q for p, q in every)}/"
        f"{len(every)} right (logged refusals {sum(p == q for p, q in refusals)}/{len(refusals)}, "
        f"logged starts {sum(p == q for p, q in starts)}/{len(starts)})"
    )


def report_corpus(path: Path) -> list[Replay]:
    """The repository corpus: every case, the totals and one row per source."""
    print(f"\n=== {path.relative_to(REPO)} (constants were fitted on the shared corpus only) ===")
    replays = [replay(case) for case in load_cases(path)]
    report(replays)
    per_source(replays)
    trtllm_report(replays)
    return replays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the overhead constants")
    parser.add_argument("--logs", type=Path, default=LOGS)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--only", choices=("shared", "repo"), help="report one corpus (default: both)"
    )
    parser.add_argument("--detail", action="store_true", help="print each memory term")
    args = parser.parse_args(argv)
    if args.only == "repo":
        replays = report_corpus(args.corpus)
        if args.detail:
            detail(replays)
        return 0
    if not args.logs.exists():
        print(f"{args.logs} is absent: the calibration logs are not available", file=sys.stderr)
        return 2
    replays = [replay(case) for case in load_cases(args.logs)]
    report(replays)
    if args.detail:
        detail(replays)
    if args.fit:
        fit(replays)
    if args.only is None and args.corpus.exists():
        report_corpus(args.corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
