"""Parallel layouts (TP x PP x DP) and which of them an engine accepts for a model (pure).

The one check of a tensor-parallel size: the solver's layouts, KV303's suggested TP and KV304
all ask ``tp_problem``. What differs between engines is data (``ParallelRules``, in each
engine's facts): llama.cpp has no tensor parallelism in this sense (it splits layers across
devices, ``--split-mode layer``, a pipeline split as far as the cache is concerned); TGI shards
(``--num-shard``) but has no pipeline parallelism and does not replicate KV heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.model.spec import CacheKind
from kvlint.model.spec import ModelSpec
from kvlint.settled import ParallelRules


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
    if any(layer.kind is CacheKind.MLA for layer, _ in spec.layer_shapes):
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


def tp_problem(spec: ModelSpec, rules: ParallelRules, tp: int) -> str | None:
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
    if not rules.tensor:
        return f"{rules.engine} has no tensor parallelism (it splits layers across GPUs)"
    heads = spec.num_attention_heads
    if heads % tp:
        return f"{heads} attention heads do not divide by TP {tp}"
    if spec.intermediate_size and spec.num_experts is None and spec.intermediate_size % tp:
        return f"intermediate size {spec.intermediate_size} does not divide by TP {tp}"
    if any(layer.kind is CacheKind.MLA for layer, _ in spec.layer_shapes):
        return None
    # Every attention layer's KV heads (hybrid models differ between local and global layers).
    kv_counts = sorted(
        {layer.kv_heads for layer, _ in spec.layer_shapes if layer.kv_heads > 0}
        or {spec.num_key_value_heads}
    )
    for kv in kv_counts:
        if not rules.replicates_kv_heads:
            if kv > 1 and kv % tp:
                return (
                    f"{rules.engine} shards {kv} KV heads without replicating them: TP {tp} "
                    "does not divide"
                )
            continue
        if kv % tp and tp % kv:
            return f"{kv} KV heads: TP {tp} neither divides them nor is a multiple of them"
    return None


def pp_problem(spec: ModelSpec, rules: ParallelRules, pp: int) -> str | None:
    """Why ``engine`` refuses ``pp`` pipeline stages, or None."""
    if pp < 1:
        return "PP must be at least 1"
    if pp == 1:
        return None
    if not rules.pipeline:
        return f"{rules.engine} has no pipeline parallelism"
    if pp > spec.num_layers:
        return f"{pp} stages for {spec.num_layers} layers"
    return None


def valid_tps(spec: ModelSpec, rules: ParallelRules, max_tp: int) -> list[int]:
    return [tp for tp in range(1, max_tp + 1) if tp_problem(spec, rules, tp) is None]
