"""vLLM's memory that is neither weights nor KV cache: activation peak, non-torch, CUDA graphs.

vLLM measures these by profiling (``Worker.determine_available_memory``); kvlint cannot, so
each term is the engine's own structure with as few constants as the logs need. What the
source does, by release line (``memory_line``):

* the profile run (``profile_run``): one forward pass over ``max_num_batched_tokens`` tokens
  (V0 without chunked prefill: ``max(max_model_len, max_num_batched_tokens)``, the settle step
  fills that in), then on the last pipeline stage the dummy sampler over
  ``min(max_num_seqs, max_num_batched_tokens)`` rows (``_dummy_sampler_run``: fp32 logits of
  the whole vocabulary, gathered across tensor parallelism, with the top-k/top-p sort's values
  and int64 indices). The torch peak is the larger of the two, so the activation term is
  ``max(forward, sampler)``: the MLP activations of the batch (``intermediate_size / tp`` wide,
  split by tensor parallelism) against ``vocab x rows`` logits (not split).
* the encoder profile of a multimodal model (``profile_run`` in V1, V0's dummy sequences):
  dummy images of the largest size the processor makes (``kvlint.model.vision``) go through
  the vision tower. V1 runs the encoder first on ``min(budget // tokens, max_num_seqs x
  limit)`` images, the encoder budget being ``max(max_num_batched_tokens, tokens)`` of one
  image ("Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 63
  image items"), keeps their embeddings in the encoder cache and then runs the decoder's
  dummy batch and the sampler beside them. V0 gives each of ``min(max_num_seqs,
  max_num_batched_tokens // tokens)`` dummy sequences (at least one) ``limit`` images and runs
  the tower inside the forward pass, the merged embeddings beside the decoder's activations.
  The tower's peak is over the images' patches: its MLP activations at the profile forward's
  bytes per activation (the same transformer block the text forward's constant was fitted
  on), or a rotary tower's attention tensors where those are larger (``encoder_bytes``).
* non-torch memory: what the device holds outside PyTorch's allocator. V0 and the first V1
  releases charge all of it since the worker started (``peak_memory += non_torch_allocations``),
  later ones only its growth during the profile run (``memory_profiling``'s
  ``non_torch_increase``: cuBLAS workspaces, NCCL and the custom all-reduce buffers with tensor
  parallelism). Its size is not in the source (drivers and NCCL decide it): one constant per
  release line and parallel layout (``NON_TORCH``), fitted.
* CUDA graphs: charged from 0.21 only (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``); before,
  graphs were captured after the KV cache into the ``1 - gpu_memory_utilization`` slack. The
  estimate grows with depth and width (``GRAPH_BASE`` + a share per layer-width), fitted on the
  0.19 estimator's own figure.

``MemoryConstants``' defaults are what the source alone gives (the priors a fit starts from and
falls back to where the logs say nothing); ``CONSTANTS``, the figures kvlint uses, are fitted on
the calibration logs by ``python benchmarks/fidelity.py --write-band`` into ``fitted.py``, which
names the cases behind each and the range it holds over. The benchmark cross-validates them by
leaving each source out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import NamedTuple

from kvlint.model.spec import ModelSpec
from kvlint.model.spec import VisionEncoder
from kvlint.units import GiB

# The release lines whose profilers differ (``memory_line``): V0 (before 0.8), the first V1
# releases (0.8-0.10, which charge the CUDA context and NCCL as non-torch memory), the 0.11 line
# (growth during profiling only) and 0.21 on (CUDA graphs charged too).
LINES = ("v0", "v1-0.8", "v1-0.11", "v1-0.21")


def memory_line(version: tuple[int, ...], v0: bool = False) -> str:
    """The profiler line of a vLLM release (``v0``: the V0 engine runs, ``VLLM_USE_V1=0``)."""
    if v0 or version < (0, 8):
        return "v0"
    if version < (0, 11):
        return "v1-0.8"
    if version < (0, 21):
        return "v1-0.11"
    return "v1-0.21"


@dataclass(frozen=True)
class MemoryConstants:
    """The fitted constants of the memory model, in one record so that the fidelity benchmark
    can refit them without a source and predict it (leave-one-source-out)."""

    # Bytes per logit of the dummy sampler run on FlashInfer's or the Triton top-k/top-p kernel
    # (native_sampler false): the fp32 logits, their probabilities and a fp32 working copy,
    # 4 + 4 + 4.
    bytes_per_logit: float = 12.0
    # The same on PyTorch's own top-k/top-p sort (native_sampler true): fp32 logits (4), the
    # sort's values and int64 indices (4 + 8), the sorted probabilities and their cumulative
    # sum (4 + 4), the mask (1), the scattered logits (4), the probabilities and the
    # exponential noise (4 + 4): 37.
    bytes_per_logit_native: float = 37.0
    # Bytes per MLP activation (intermediate_size / tp x batched tokens) of the profile forward
    # pass: gate_up (2 x 2 bytes) and the activation's output (2 bytes), at least.
    bytes_per_intermediate_token: float = 6.0
    # Non-torch memory charged, by release line: (TP 1, TP >= 2, pipeline parallel alone). The
    # source does not size it (drivers, cuBLAS and NCCL do): a cuBLAS workspace and a context's
    # growth on one GPU, NCCL and the custom all-reduce buffers (8 MiB a rank by default) with
    # their peer mappings beside them with TP.
    non_torch: tuple[tuple[str, tuple[float, float, float]], ...] = tuple(
        (line, (0.3 * GiB, 1.5 * GiB, 0.1 * GiB)) for line in LINES
    )
    # CUDA graph pool: a base plus a share per layer-width (hidden x layers on this GPU).
    graph_base: float = 0.5 * GiB
    graph_bytes_per_hidden_layer: float = 2.0
    # The cases each constant was fitted on (benchmarks/fidelity.py --fit), for the record.
    fitted_on: tuple[tuple[str, int], ...] = field(default=(), compare=False)

    def non_torch_bytes(self, line: str, tp: int, pp: int) -> int:
        table = dict(self.non_torch)
        row = table.get(line) or table["v1-0.11"]
        if tp > 1:
            return round(row[1])
        if pp > 1:
            return round(row[2])
        return round(row[0])

    def with_non_torch(self, line: str, row: tuple[float, float, float]) -> MemoryConstants:
        table = dict(self.non_torch)
        table[line] = row
        return replace(self, non_torch=tuple((key, table[key]) for key in LINES if key in table))


PRIORS = MemoryConstants()


def _fitted() -> MemoryConstants:
    """The figures ``fitted.py`` holds (plain data, regenerated by the fidelity benchmark)."""
    from kvlint.engines.vllm import fitted

    return replace(
        PRIORS,
        **fitted.CONSTANTS,
        non_torch=tuple((line, fitted.NON_TORCH[line]) for line in LINES),
        fitted_on=tuple(sorted(fitted.CASES.items())),
    )


CONSTANTS = _fitted()


class Overheads(NamedTuple):
    """Per-GPU memory vLLM charges against the budget besides weights and KV."""

    activation: int
    non_torch: int
    cudagraph: int

    @property
    def total(self) -> int:
        return self.activation + self.non_torch + self.cudagraph


# Which top-k/top-p the dummy sampler runs, by release (vllm/v1/sample/ops/topk_topp_sampler.py):
# * V0, and V1 before 0.11: PyTorch's sort (the wheels came without FlashInfer; 0.8 turned the
#   kernel off for FlashInfer >= 0.2.3, vllm-project/vllm#14815). An image that ships FlashInfer
#   runs its kernel (dennislee22/vLLM-benchmarking's 0.10.1.1 logs: "Using FlashInfer for top-p &
#   top-k sampling"); nothing in a deployment file says which, so the wheel's path is taken.
# * 0.11.0: FlashInfer, a dependency of the CUDA wheel by then, on CUDA; the sort on ROCm.
# * 0.11.1 on: the sort again everywhere, "Disable FlashInfer sampler by default" (#26859,
#   merged 2025-10-15, after 0.11.0; #29415 of 2025-11-25: "disabled by default and opt-in").
#   Gemma-3-27B on a B200 (0.11.2) and Qwen3-30B-A3B on an RTX PRO 6000 (0.12.0) miss 6.0 and
#   3.5 GiB of overhead without it, what 1,024 rows of 262,208 and 151,936 logits cost sorted.
# * from SAMPLER_LOW_MEMORY_SINCE: a Triton top-k/top-p kernel (#33538, "~80MiB of extra VRAM",
#   no sort; apply_top_k_top_p takes it whenever Triton is there, ROCm too), then FlashInfer by
#   default again (#40376). The 0.19.0 logs are the first that show it (llm-d-incubation/
#   llm-d-planner: 15.5 bytes per logit over 1,024 rows); no CUDA log between 0.12 and 0.19
#   tells the release that brought it, so 0.19 is the first release seen with it.
# * VLLM_USE_FLASHINFER_SAMPLER=1 (``flashinfer``) on CUDA: FlashInfer's kernel wherever the
#   package is installed, from the first V1 release seen taking it unasked (0.10.1.1: the
#   dennislee22/vLLM-benchmarking logs, `pip install vllm ... flashinfer-python`, print "Using
#   FlashInfer for top-p & top-k sampling"; 0.8 had turned it off for FlashInfer >= 0.2.3).
#   The replay of such a log reads that line as the variable set. 0 keeps the sort where
#   FlashInfer was the default (0.11.0).
SORT_SAMPLER_AGAIN_SINCE = (0, 11, 1)
SAMPLER_LOW_MEMORY_SINCE = (0, 19)
FLASHINFER_SAMPLER_SEEN = (0, 10)


def native_sampler(
    version: tuple[int, ...], vendor: str | None, v0: bool = False, flashinfer: bool | None = None
) -> bool:
    """True when the dummy sampler runs PyTorch's own top-k/top-p sort (see above)."""
    if v0:
        return True
    cuda = vendor != "amd"
    if flashinfer and cuda and version >= FLASHINFER_SAMPLER_SEEN:
        return False
    if version < (0, 11):
        return True
    if version < SORT_SAMPLER_AGAIN_SINCE:
        return not cuda or flashinfer is False
    return version < SAMPLER_LOW_MEMORY_SINCE


class EncoderProfile(NamedTuple):
    """The encoder profile's dummy images: how many, of the tower's largest size."""

    items: int
    encoder: VisionEncoder


# limit_mm_per_prompt's default: one item of each modality a prompt (vllm/config/multimodal.py).
DEFAULT_ITEMS_PER_PROMPT = 1


def encoder_profile(
    encoder: VisionEncoder | None,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    v0: bool = False,
    limit: int | None = None,
    skip: bool = False,
) -> EncoderProfile | None:
    """The images the profile run encodes (see above); None without a tower kvlint reads, with
    ``--skip-mm-profiling``, or where ``--limit-mm-per-prompt`` allows no image."""
    if encoder is None or skip or limit == 0:
        return None
    per_prompt = DEFAULT_ITEMS_PER_PROMPT if limit is None else max(1, limit)
    if v0:
        # vllm/worker/model_runner.py profile_run: max_num_seqs = min(max_num_seqs,
        # max_num_batched_tokens // max_mm_tokens), at least one, each with the prompt's limit.
        seqs = max(1, min(max_num_seqs, max_num_batched_tokens // (per_prompt * encoder.tokens)))
        return EncoderProfile(seqs * per_prompt, encoder)
    budget = max(max_num_batched_tokens, encoder.tokens)
    items = min(budget // encoder.tokens, max_num_seqs * per_prompt)
    return EncoderProfile(max(1, items), encoder)


# Bytes per patch and unit of the tower's width in the attention of a rotary tower (Qwen2-VL,
# Qwen2.5-VL: vllm/model_executor/models/qwen2_vl.py Qwen2VisionAttention.forward): the
# residual, the fused qkv projection's output and the three contiguous per-head copies of q, k
# and v, and their concatenation q || k, at 16 bits (1 + 3 + 3 + 2 = 9 x 2 bytes), with q || k
# rotated in fp32 (``apply_rotary_emb`` with fp32 compute: its input and output, 2 x 2 x 4).
ROTARY_ATTENTION_BYTES_PER_WIDTH = 9 * 2 + 2 * 2 * 4


def encoder_bytes(profile: EncoderProfile, *, tp: int, constants: MemoryConstants) -> float:
    """The vision tower's peak over the dummy images' patches on one GPU: the larger of its
    MLP's activations (``intermediate`` wide, at the profile forward's bytes per activation,
    which was fitted on gated decoder MLPs: gate and up, then the activation, 3 x 2 bytes; an
    ungated fc1 has two of those three) and, in a rotary tower, its attention's tensors
    (``ROTARY_ATTENTION_BYTES_PER_WIDTH``). Both split by tensor parallelism (vLLM shards the
    tower's linear layers as the language model's)."""
    e = profile.encoder
    mlp = e.intermediate * constants.bytes_per_intermediate_token * (1.0 if e.gated else 2 / 3)
    attention = e.width * ROTARY_ATTENTION_BYTES_PER_WIDTH if e.rotary else 0.0
    return profile.items * e.patches * max(mlp, attention) / max(1, tp)


def encoder_output_bytes(profile: EncoderProfile) -> int:
    """The dummy images' embeddings (16-bit, the language model's width) kept while the
    decoder's dummy batch runs."""
    return profile.items * profile.encoder.tokens * profile.encoder.output_width * 2


def forward_bytes(
    spec: ModelSpec, *, max_num_batched_tokens: int, tp: int, constants: MemoryConstants
) -> float:
    """The profile forward pass's MLP activations on one GPU."""
    intermediate = (spec.intermediate_size or 4 * spec.hidden_size) / max(1, tp)
    return intermediate * max_num_batched_tokens * constants.bytes_per_intermediate_token


def sampler_bytes(spec: ModelSpec, *, rows: int, native: bool, constants: MemoryConstants) -> float:
    """The dummy sampler's logits and buffers on the last stage (gathered whole)."""
    per = constants.bytes_per_logit_native if native else constants.bytes_per_logit
    return spec.vocab_size * rows * per


def activation_bytes(
    spec: ModelSpec,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    last_stage: bool = True,
    tp: int = 1,
    native: bool = False,
    constants: MemoryConstants = CONSTANTS,
    encoder: EncoderProfile | None = None,
    v0: bool = False,
) -> int:
    """The profile run's peak torch memory above what stays resident, on one GPU: the larger
    of the forward pass's MLP activations (split by tensor parallelism) and (on the last
    stage) the sampler's logits (gathered whole); with ``encoder`` (the first stage of a
    multimodal model) also the vision tower's peak, the images' embeddings beside the
    decoder's batch (V0 holds them twice: the tower's output and the merged input)."""
    forward = forward_bytes(
        spec, max_num_batched_tokens=max_num_batched_tokens, tp=tp, constants=constants
    )
    kept = 0
    tower = 0.0
    if encoder is not None:
        kept = encoder_output_bytes(encoder) * (2 if v0 else 1)
        tower = encoder_bytes(encoder, tp=tp, constants=constants)
    peak = max(tower, forward + kept)
    if not last_stage:
        return round(peak)
    rows = min(max_num_seqs, max_num_batched_tokens)
    sampler = sampler_bytes(spec, rows=rows, native=native, constants=constants)
    # V1 samples with the encoder cache still held; V0 has freed the embeddings by then.
    return round(max(peak, sampler + (0 if v0 else kept)))


# vLLM's LoRA defaults (vllm/config/lora.py): --max-lora-rank 16, --max-loras 1.
DEFAULT_MAX_LORA_RANK = 16
DEFAULT_MAX_LORAS = 1


def lora_bytes(
    spec: ModelSpec,
    *,
    rank: int,
    max_loras: int = DEFAULT_MAX_LORAS,
    tp: int = 1,
    layers: int | None = None,
    first_stage: bool = True,
    last_stage: bool = True,
    dtype_bytes: int = 2,
) -> int:
    """The LoRA slots ``--enable-lora`` allocates when the model loads, on one GPU (inside
    "Model loading took": V0's load_model and V1's wrap the model in its LoRA manager there).

    vLLM replaces each linear layer with a LoRA layer holding ``max_loras`` adapters of
    ``max_lora_rank`` (vllm/lora/layers.py ``create_lora_weights``): a column-parallel layer
    (the fused qkv and gate_up projections) keeps A of its whole input per slice (``rank x
    hidden``, three and two slices) and B of its output share (``out / tp x rank``); a
    row-parallel one (o_proj, down_proj) A of its input share and B of its whole output. The
    embedding keeps A of the vocabulary (``vocab x rank``) and B of the width; the output head
    A of the width and B of its vocabulary share. All in the model dtype (``lora_dtype``
    auto). Dense attention and MLP projections only: a mixture of experts' experts and a
    recurrent mixer are not counted. Unsloth's own estimate (unsloth_zoo vllm_utils.py
    ``approximate_vllm_memory_usage``) counts the same q, k, v, o and MLP slots."""
    h = spec.hidden_size
    q = spec.num_attention_heads * spec.head_dim
    kv = spec.num_key_value_heads * spec.head_dim
    tp = max(1, tp)
    column = 3 * h + (q + 2 * kv) / tp  # qkv: A per slice, B of the output share
    row = q / tp + h  # o_proj
    if not spec.num_experts:
        i = spec.intermediate_size or 4 * h
        column += 2 * h + 2 * i / tp  # gate_up
        row += i / tp + h  # down_proj
    total = (spec.num_layers if layers is None else layers) * (column + row)
    if first_stage:
        total += spec.vocab_size + h
    if last_stage:
        total += h + spec.vocab_size / tp
    return round(total * rank * max(1, max_loras) * dtype_bytes)


def non_torch_bytes(
    tp: int,
    pp: int,
    version: tuple[int, ...] = (0, 19),
    constants: MemoryConstants = CONSTANTS,
    v0: bool = False,
    linked: bool = True,
) -> int:
    """Non-torch memory charged by the profiler of ``version`` (NCCL / custom all-reduce).

    Tensor parallelism without NVLink-class links (``linked`` false: cards with no NVLink,
    NCCL_P2P_DISABLE, ranks on several nodes) is charged as one GPU. Without P2P vLLM's custom
    all-reduce is off ("Custom allreduce is disabled because your platform lacks GPU P2P
    capability", or "because this process group spans across nodes") and NCCL's shared-memory
    and network transports keep their FIFOs in host memory (NVIDIA/nccl src/transport/shm.cc,
    ncclShmAllocateShareableBuffer -> ncclCuMemHostAlloc); over PCIe P2P NCCL runs a few
    channels of a few MiB each. The growth the TP >= 2 figure measures on NVLink boards (device
    buffers per peer over up to 32 channels, NVLS on NVSwitch: src/transport/nvls.cc) is not
    there: dennislee22's A100 pairs without P2P leave 0.1 GiB on one node and 0.2 across two,
    the 0.19 H100 SXM sweep 2.1 GiB."""
    return constants.non_torch_bytes(memory_line(version, v0), tp if linked else 1, pp)


def graph_width(spec: ModelSpec, *, tp: int, layers_on_gpu: int) -> float:
    """What the CUDA-graph pool grows with: hidden size x layers on the GPU, damped by TP."""
    return spec.hidden_size * layers_on_gpu / math.sqrt(math.sqrt(max(1, tp))) * 1024


def cudagraph_bytes(
    spec: ModelSpec, *, tp: int, layers_on_gpu: int, constants: MemoryConstants = CONSTANTS
) -> int:
    """The CUDA-graph pool estimate (``profile_cudagraph_memory``) on one GPU."""
    width = graph_width(spec, tp=tp, layers_on_gpu=layers_on_gpu)
    return round(constants.graph_base + width * constants.graph_bytes_per_hidden_layer)


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
    vendor: str | None = None,
    constants: MemoryConstants = CONSTANTS,
    v0: bool = False,
    flashinfer: bool | None = None,
    linked: bool = True,
    encoder: EncoderProfile | None = None,
) -> Overheads:
    return Overheads(
        activation=activation_bytes(
            spec,
            max_num_batched_tokens=max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            last_stage=stage == pp - 1,
            tp=tp,
            native=native_sampler(version, vendor, v0, flashinfer),
            constants=constants,
            encoder=encoder if stage == 0 else None,  # the tower sits on the first stage
            v0=v0,
        ),
        non_torch=non_torch_bytes(tp, pp, version, constants, v0, linked),
        cudagraph=cudagraph_bytes(spec, tp=tp, layers_on_gpu=layers_on_gpu, constants=constants)
        if cudagraphs
        else 0,
    )
