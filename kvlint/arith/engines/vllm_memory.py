"""vLLM's memory that is neither weights nor KV cache: activation peak, non-torch, CUDA graphs.

vLLM measures these by profiling; kvlint cannot, so it models each with a few constants fitted
by ``benchmarks/fidelity.py`` on the 63 memory-breakdown cases of the calibration logs
(``engine-logs/engine_logs.jsonl``: 59 vLLM 0.19.0 DEBUG logs on H100 80GB from
llm-d-incubation/llm-d-planner@d3121e0, and 4 V0 logs). What the logs show, and the model:

* activation peak (``torch peak memory increase``): dominated by the logits and sampler buffers
  of the dummy sampler run, ``vocab x min(max_num_seqs, max_num_batched_tokens)`` values, plus
  the forward pass's hidden states, ``hidden x max_num_batched_tokens``. Not divided by tensor
  parallelism (Qwen2.5-7B logs 2.21 GiB at TP 1, 2 and 4: the logits are gathered whole); with
  pipeline parallelism the sampler term sits on the last stage only (Llama-3.1-8B PP 4: 1.10
  GiB on stage 0, 2.01 GiB on stage 3).
* non-torch memory (``non-torch forward increase``): a step with tensor parallelism (custom
  all-reduce and NCCL buffers): ~0.25 GiB at TP 1, ~2.1 GiB at TP >= 2, ~0.07 GiB at PP alone.
* CUDA graphs (charged only from 0.21, when the profiler's estimate is subtracted): 0.5-1.9 GiB
  with the default 51 capture sizes, growing with model depth and width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvlint.arith.units import GiB
from kvlint.model.spec import ModelSpec

# Fitted constants (benchmarks/fidelity.py --fit prints them and the cases that set them).
# Bytes per logit of the dummy sampler run (fp32 logits, their softmax and sort buffers).
ACT_BYTES_PER_LOGIT = 7.4
# Bytes per hidden element per batched token of the profile forward pass.
ACT_BYTES_PER_HIDDEN_TOKEN = 35.0
# non-torch growth during profiling.
NON_TORCH_TP1 = 0.25 * GiB
NON_TORCH_TP = 2.10 * GiB
NON_TORCH_PP_ONLY = 0.07 * GiB
# CUDA graph pool: a base plus a share per layer-width (hidden x layers on this GPU).
GRAPH_BASE = 0.35 * GiB
GRAPH_BYTES_PER_HIDDEN_LAYER = 3.6


@dataclass(frozen=True)
class Overheads:
    """Per-GPU memory vLLM charges against the budget besides weights and KV."""

    activation: int
    non_torch: int
    cudagraph: int

    @property
    def total(self) -> int:
        return self.activation + self.non_torch + self.cudagraph


def activation_bytes(
    spec: ModelSpec,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    last_stage: bool = True,
) -> int:
    """The profile run's peak torch memory above what stays resident, on one GPU."""
    hidden = spec.hidden_size * max_num_batched_tokens * ACT_BYTES_PER_HIDDEN_TOKEN
    if not last_stage:
        return round(hidden)
    rows = min(max_num_seqs, max_num_batched_tokens)
    return round(hidden + spec.vocab_size * rows * ACT_BYTES_PER_LOGIT)


def non_torch_bytes(tp: int, pp: int) -> int:
    if tp > 1:
        return round(NON_TORCH_TP)
    if pp > 1:
        return round(NON_TORCH_PP_ONLY)
    return round(NON_TORCH_TP1)


def cudagraph_bytes(spec: ModelSpec, *, tp: int, layers_on_gpu: int) -> int:
    """The CUDA-graph pool estimate (``profile_cudagraph_memory``) on one GPU."""
    width = spec.hidden_size * layers_on_gpu / math.sqrt(math.sqrt(max(1, tp)))
    return round(GRAPH_BASE + width * GRAPH_BYTES_PER_HIDDEN_LAYER * 1024)


def overheads(
    spec: ModelSpec,
    *,
    tp: int,
    pp: int,
    stage: int,
    layers_on_gpu: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    cudagraphs: bool,
) -> Overheads:
    return Overheads(
        activation=activation_bytes(
            spec,
            max_num_batched_tokens=max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            last_stage=stage == pp - 1,
        ),
        non_torch=non_torch_bytes(tp, pp),
        cudagraph=cudagraph_bytes(spec, tp=tp, layers_on_gpu=layers_on_gpu) if cudagraphs else 0,
    )
