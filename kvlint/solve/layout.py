"""Parallel layouts (TP x PP x DP) and which of them an engine accepts for a model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec

# Engines that shard attention heads across GPUs (tensor parallelism) and split layers into
# pipeline stages. llama.cpp has no tensor parallelism in this sense: it splits layers across
# devices (`--split-mode layer`), which is a pipeline split as far as the cache is concerned.
# TGI shards (`--num-shard`) but has no pipeline parallelism.
_PIPELINE_ENGINES = frozenset({"vllm", "sglang", "llamacpp"})
_TENSOR_ENGINES = frozenset({"vllm", "sglang", "tgi"})


@dataclass(frozen=True, order=True)
class Layout:
    """One replica is ``tp x pp`` GPUs; ``dp`` replicas serve side by side."""

    tp: int = 1
    pp: int = 1
    dp: int = 1

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def label(self) -> str:
        parts = [f"TP {self.tp}"]
        if self.pp > 1:
            parts.append(f"PP {self.pp}")
        text = " x ".join(parts)
        return f"{self.dp} x ({text})" if self.dp > 1 else text


def kv_heads_per_gpu(spec: ModelSpec, tp: int) -> int:
    """KV heads one GPU holds: ``max(1, kv_heads // tp)``. Beyond ``kv_heads`` the heads are
    replicated, so the cache per GPU stops shrinking (vllm/config/model.py get_num_kv_heads;
    SGLang's get_num_kv_heads does the same). MLA keeps one latent head on every GPU."""
    if any(layer.kind is CacheKind.MLA for layer in spec.layers):
        return 1
    return max(1, spec.num_key_value_heads // tp)


def stage_layers(num_layers: int, pp: int) -> tuple[int, ...]:
    """Layers per pipeline stage as vLLM splits them (vllm/distributed/utils.py
    ``get_pp_indices``): ``n // pp`` each, the remainder one each to stages -2, -3, ..., so the
    last stage (which also holds the output layer) never gets an extra one."""
    base, remainder = divmod(num_layers, pp)
    sizes = [base] * pp
    for i in range(2, remainder + 2):  # remainder < pp, so -i never reaches the last stage
        sizes[-i] += 1
    return tuple(sizes)


def tp_problem(spec: ModelSpec, engine: str, tp: int) -> str | None:
    """Why ``engine`` refuses tensor parallelism ``tp`` for this model, or None when it accepts.

    vLLM and SGLang: attention heads must divide by TP ("Total number of attention heads (n)
    must be divisible by tensor parallel size (tp)", vllm/config/parallel.py), and the model code
    asserts ``kv_heads % tp == 0`` or ``tp % kv_heads == 0`` (vllm/model_executor/models/llama.py),
    replicating KV heads in the second case. TGI raises "`num_heads` must be divisible by
    `num_shards`" and divides the KV heads by the shard count without replicating them
    (server/text_generation_server/models/custom_modeling/flash_llama_modeling.py), so it needs
    ``kv_heads % tp == 0`` except for single-KV-head (MQA) models. Powers of two are not required
    by any of them; the divisibility rules are what bind.
    """
    if tp < 1:
        return "TP must be at least 1"
    if tp == 1:
        return None
    if engine not in _TENSOR_ENGINES:
        return f"{engine} has no tensor parallelism (it splits layers across GPUs)"
    heads = spec.num_attention_heads
    if heads % tp:
        return f"{heads} attention heads do not divide by TP {tp}"
    if spec.intermediate_size and spec.num_experts is None and spec.intermediate_size % tp:
        return f"intermediate size {spec.intermediate_size} does not divide by TP {tp}"
    if any(layer.kind is CacheKind.MLA for layer in spec.layers):
        return None
    # Every attention layer's KV heads (hybrid models differ between local and global layers).
    kv_counts = sorted(
        {layer.kv_heads for layer in spec.layers if layer.kv_heads > 0}
        or {spec.num_key_value_heads}
    )
    for kv in kv_counts:
        if engine == "tgi":
            if kv > 1 and kv % tp:
                return f"TGI shards {kv} KV heads without replicating them: TP {tp} does not divide"
            continue
        if kv % tp and tp % kv:
            return f"{kv} KV heads: TP {tp} neither divides them nor is a multiple of them"
    return None


def pp_problem(spec: ModelSpec, engine: str, pp: int) -> str | None:
    """Why ``engine`` refuses ``pp`` pipeline stages, or None."""
    if pp < 1:
        return "PP must be at least 1"
    if pp == 1:
        return None
    if engine not in _PIPELINE_ENGINES:
        return f"{engine} has no pipeline parallelism"
    if pp > spec.num_layers:
        return f"{pp} stages for {spec.num_layers} layers"
    return None


def valid_tps(spec: ModelSpec, engine: str, max_tp: int) -> list[int]:
    return [tp for tp in range(1, max_tp + 1) if tp_problem(spec, engine, tp) is None]


def pipeline_tp(spec: ModelSpec, engine: str, max_tp: int) -> int:
    """The TP that pipeline stages are built from: the largest the engine accepts up to
    ``max_tp`` (one node) without replicating KV heads, since a replicated head buys no cache
    (for one-KV-head and MLA models every TP replicates, so the largest is taken)."""
    tps = valid_tps(spec, engine, max_tp)
    kv = kv_heads_per_gpu(spec, 1)
    unreplicated = [tp for tp in tps if tp <= kv]
    return max(unreplicated if kv > 1 and unreplicated else tps)


def replica_layouts(
    spec: ModelSpec,
    engine: str,
    *,
    max_gpus: int,
    max_tp: int | None = None,
    any_layout: bool = False,
) -> Iterator[Layout]:
    """The (TP, PP) replicas to try with at most ``max_gpus`` GPUs, fewest GPUs first, then the
    larger TP first.

    By default a replica is tensor parallel alone, or pipeline stages of the one TP
    ``pipeline_tp`` picks: vLLM's own advice (TP across the GPUs of a node, PP across nodes),
    and the only way past the KV-head limit on cache per GPU. ``any_layout`` tries every TP x PP
    the engine accepts (``TP 1 x PP 21`` included).
    """
    tp_limit = min(max_gpus, max_tp or max_gpus)
    tps = valid_tps(spec, engine, tp_limit)
    stage_tp = pipeline_tp(spec, engine, tp_limit)
    found = []
    for tp in tps:
        for pp in range(1, max_gpus // tp + 1):
            if pp > 1 and not any_layout and tp != stage_tp:
                continue
            if pp_problem(spec, engine, pp) is None:
                found.append(Layout(tp, pp))
    yield from sorted(found, key=lambda lay: (lay.gpus_per_replica, -lay.tp))
