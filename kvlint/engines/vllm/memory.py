"""vLLM's memory that is neither weights nor KV cache: activation peak, non-torch, CUDA graphs.

vLLM measures these by profiling; kvlint cannot, so it models each with a few constants fitted
by ``benchmarks/fidelity.py`` on the 63 memory-breakdown cases of the calibration logs
(``engine-logs/engine_logs.jsonl``: 59 vLLM 0.19.0 DEBUG logs on H100 80GB from
llm-d-incubation/llm-d-planner@d3121e0, and 4 V0 logs). What the logs show, and the model:

* activation peak (``torch peak memory increase``): the larger of two peaks. The dummy sampler
  run holds ``vocab x min(max_num_seqs, max_num_batched_tokens)`` logits with their softmax and
  sort buffers (~15.5 bytes per logit: 1.89 GiB for Llama-3.1-8B's 128k vocabulary at 1024
  rows, 3.6-4.0 GiB for Gemma's 256k); the forward pass holds the MLP activations,
  ``intermediate_size / tp x max_num_batched_tokens`` (~10 bytes each: Llama-3.1-8B's pipeline
  stage 0, which runs no sampler, logs 1.10 GiB; CodeLlama-7B's 32k vocabulary logs 0.77 GiB).
  The logits do not shrink with tensor parallelism (Qwen2.5-7B logs 2.21 GiB at TP 1, 2 and 4:
  they are gathered whole); the MLP does (Llama-3.3-70B at TP 4 logs 1.97 GiB, below the 2.2
  GiB an unsplit 28,672-wide MLP would take). With pipeline parallelism only the last stage
  runs the sampler
  (Llama-3.1-8B PP 4: 1.10 GiB on stage 0, 2.01 GiB on stage 3). MoE models run ~0.4 GiB above
  this model (Qwen3-30B-A3B 2.68 GiB, DeepSeek-V2-Lite 1.93 GiB).
* non-torch memory (``non-torch forward increase``): a step with tensor parallelism (custom
  all-reduce and NCCL buffers). vLLM 0.19: 0.25 GiB at TP 1, 2.1 GiB at TP >= 2, 0.07 GiB with
  pipeline parallelism alone (medians of 40, 14 and 2 cases). vLLM 0.10.1.1 (the A100 sweep of
  dennislee22/vLLM-benchmarking) charges far less: total x gmu - weights - available is 0.56
  GiB at TP 1 and 0.67 GiB at TP 2, activation included, so ~0 and ~0.1 GiB. The V0 engine's
  ``non_torch_memory`` is 0.03-0.04 GiB on one consumer GPU.
* CUDA graphs (charged only from 0.21, when the profiler's estimate is subtracted): 0.5-1.9 GiB
  with the default 51 capture sizes, growing with model depth and width; fitted on the 0.19
  estimator's figure (``CUDA graph pool memory: ... (estimated)``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from kvlint.model.spec import ModelSpec
from kvlint.units import GiB

# Fitted constants (benchmarks/fidelity.py --fit prints them and the cases that set them).
# Bytes per logit of the dummy sampler run (fp32 logits, their softmax and sort buffers).
ACT_BYTES_PER_LOGIT = 15.5
# Bytes per MLP activation (intermediate_size x batched tokens) of the profile forward pass.
ACT_BYTES_PER_INTERMEDIATE_TOKEN = 10.0
# non-torch growth during profiling, vLLM 0.19 and later: (TP 1, TP >= 2, PP alone).
NON_TORCH = (0.25 * GiB, 2.10 * GiB, 0.07 * GiB)
# The same before 0.19 (vLLM 0.10.1.1 on A100) and on the V0 engine.
NON_TORCH_BEFORE_0_19 = (0.0, 0.11 * GiB, 0.0)
NON_TORCH_V0 = (0.04 * GiB, 0.04 * GiB, 0.04 * GiB)
# CUDA graph pool: a base plus a share per layer-width (hidden x layers on this GPU).
GRAPH_BASE = 0.607 * GiB
GRAPH_BYTES_PER_HIDDEN_LAYER = 2.125


class Overheads(NamedTuple):
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
    tp: int = 1,
) -> int:
    """The profile run's peak torch memory above what stays resident, on one GPU: the larger
    of the forward pass's MLP activations (split by tensor parallelism) and (on the last
    stage) the sampler's logits (gathered whole)."""
    intermediate = (spec.intermediate_size or 4 * spec.hidden_size) / max(1, tp)
    forward = intermediate * max_num_batched_tokens * ACT_BYTES_PER_INTERMEDIATE_TOKEN
    if not last_stage:
        return round(forward)
    rows = min(max_num_seqs, max_num_batched_tokens)
    return round(max(forward, spec.vocab_size * rows * ACT_BYTES_PER_LOGIT))


def non_torch_bytes(tp: int, pp: int, version: tuple[int, ...] = (0, 19)) -> int:
    """Non-torch memory growth during profiling (NCCL / custom all-reduce buffers)."""
    table = NON_TORCH
    if version < (0, 8):
        table = NON_TORCH_V0
    elif version < (0, 19):
        table = NON_TORCH_BEFORE_0_19
    if tp > 1:
        return round(table[1])
    if pp > 1:
        return round(table[2])
    return round(table[0])


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
    version: tuple[int, ...] = (0, 19),
) -> Overheads:
    return Overheads(
        activation=activation_bytes(
            spec,
            max_num_batched_tokens=max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            last_stage=stage == pp - 1,
            tp=tp,
        ),
        non_torch=non_torch_bytes(tp, pp, version),
        cudagraph=cudagraph_bytes(spec, tp=tp, layers_on_gpu=layers_on_gpu) if cudagraphs else 0,
    )
