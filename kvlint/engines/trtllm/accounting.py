"""TensorRT-LLM's KV pool: free memory after loading times ``free_gpu_memory_fraction``, in
blocks of ``tokens_per_block``, per rank.

Mirrors NVIDIA/TensorRT-LLM (commits in ``defaults``):

* PyTorch backend, ``tensorrt_llm/_torch/pyexecutor/_util.py`` ``KvCacheCreator._cal_max_memory``:
  after a profiling forward of ``max_num_tokens`` tokens, ``available_kv_mem = (total_gpu_memory -
  peak_memory + temporary_kv) * fraction`` ("Peak memory during memory usage profiling (torch +
  non-torch): X GiB, available KV cache memory when calculating max tokens: Y GiB"), clamped by
  ``kv_cache_config.max_gpu_total_bytes``; the pool is that over the per-token size.
* C++ runtime (engines built by ``trtllm-build``), ``cpp/tensorrt_llm/batch_manager/
  kvCacheManager.cpp`` ``calculateMaxNumBlocks``: ``freePrimaryMemBytes = (freeMem +
  memoryPoolFree) * freeMemFraction`` after the engine, its execution context, runtime buffers
  and decoder are allocated ("Memory usage when calculating max tokens in paged kv cache: total:
  X GiB, available: Y GiB"); with ``max_tokens`` also set "the smaller value will be used".
* Both: ``blocksInPrimaryPool = ceilDiv(maxTokens, tokensPerBlock)`` ("Number of blocks in KV
  cache primary pool: N"); the pool holds blocks x tokens_per_block tokens ("[MemUsageChange]
  Allocated X GiB for max tokens in paged KV cache (N)"). Each rank holds ceil(kv_heads / TP)
  heads of its pipeline stage's layers (all heads with attention data parallelism); an MLA layer
  stores ``kv_lora_rank + qk_rope_head_dim`` once.
* When one request of ``max_seq_len`` does not fit, the runtime warns "maxAttentionWindow and
  maxSequenceLen are too large for at least one sequence to fit in kvCache. they are reduced to
  N" and starts with N = (blocks - 1) x tokens_per_block + 1 (82 blocks of 64 -> 5185 in a
  published log); ``--fail_fast_on_attention_window_too_large`` makes that an error instead.

The predicted pool memory carries the 90% band of the corpora's TensorRT-LLM logs
(kvlint/engines/band.py; the table is generated into band_logs.py by ``python
benchmarks/fidelity.py --write-band``), one regime per backend, model class and TP as far as the
logs' sources allow: the pool, the concurrency and the verdict are read at both ends.
"""

from __future__ import annotations

from dataclasses import replace

from kvlint.arith.kv import KvSize
from kvlint.arith.parallel import tp_problem
from kvlint.arith.weights import pp_layer_ranges
from kvlint.arith.weights import weight_bytes_per_gpu
from kvlint.engines.band import BandTable
from kvlint.engines.band import regime_chain
from kvlint.engines.band import shipped
from kvlint.engines.band import with_band
from kvlint.engines.common import ceil_div
from kvlint.engines.common import head_dims
from kvlint.engines.common import reserved_bytes
from kvlint.engines.common import reserved_note
from kvlint.engines.common import without_storage
from kvlint.engines.trtllm import defaults as D
from kvlint.engines.trtllm.effective import TrtllmSettled
from kvlint.engines.trtllm.effective import built_by_build_py
from kvlint.engines.trtllm.facts import FACTS
from kvlint.estimate import REFUSES
from kvlint.estimate import STARTS
from kvlint.estimate import EngineEstimate
from kvlint.estimate import Refusal
from kvlint.model.spec import CacheKind
from kvlint.model.spec import LayerSpec
from kvlint.model.spec import ModelSpec
from kvlint.storage import CacheTypes
from kvlint.units import GiB


def layer_bytes(layer: LayerSpec, types: CacheTypes, kv_tp: int) -> int:
    """One token of one layer on one rank, as the KV cache manager sizes it."""
    if layer.kind in (CacheKind.SHARED, CacheKind.STATE, CacheKind.NONE):
        return 0
    if layer.kind is CacheKind.MLA:
        return types.k.bytes_for(layer.head_dim_k)
    heads = ceil_div(max(1, layer.kv_heads), max(1, kv_tp))
    head_k, head_v = head_dims(layer)
    return types.k.bytes_for(heads * head_k, heads) + types.v.bytes_for(heads * head_v, heads)


def _kept(window: int | None, context: int) -> float:
    """The share of a ``context``-token sequence a layer keeps: all of it, or its window."""
    if not window or not context:
        return 1.0
    return min(window, context) / context


def _window(layer: LayerSpec, context: int) -> int:
    """The tokens of a sequence a layer keeps: its window when bounded, else all of them."""
    if layer.kind.bounded and layer.window and (not context or layer.window < context):
        return layer.window
    return context


def activation_bytes(spec: ModelSpec, tokens: int, tp: int) -> int:
    """The profiling forward's peak over the weights: ``tokens`` hidden states and the MLP's
    fused gate/up output and its activation, in 16 bits (first principles, not fitted)."""
    intermediate = (spec.intermediate_size or 4 * spec.hidden_size) // max(1, tp)
    return tokens * (3 * intermediate + 4 * spec.hidden_size) * 2


def engine_activation_bytes(spec: ModelSpec, tokens: int, tp: int) -> int:
    """The activation memory of an engine the 0.5-0.7 build.py scripts built, for its token
    profile: TensorRT keeps one decoder block's live tensors at the profile's largest shape
    (docs/source/reference/memory.md: memory is reused across blocks and tensors). In the
    0.5.0 graph (tensorrt_llm/layers/mlp.py GatedMLP.forward: fc, its activation, gate, then
    their product into proj) the widest moment holds the activated fc output, the gate output
    and their product (3 x intermediate) beside the residual stream (hidden), in 16 bits;
    attention's q/k/v and output are narrower, and context FMHA keeps its workspace small."""
    intermediate = (spec.intermediate_size or 4 * spec.hidden_size) // max(1, tp)
    return tokens * (3 * intermediate + spec.hidden_size) * 2


def decoder_bytes(spec: ModelSpec, batch: int, beams: int, max_seq_len: int) -> int:
    """The C++ runtime's runtime buffers and decoder, allocated before the pool is sized
    ("[MemUsageChange] Allocated X GB GPU memory for runtime buffers / for decoder"), per
    sequence slot (``max_batch_size x max_beam_width``), from the source:

    * the engine's float32 logits, one row of the vocabulary per slot;
    * ``runtime/decoderState.cpp`` ``reshapeBuffers``: output ids, parent ids, log probs and
      the tiled log probs, 4 bytes x ``max_seq_len`` each; the embedding bias, one
      vocabulary row in the model dtype (2 bytes);
    * the sampling layer's workspace (``kernels/samplingTopPKernels.cu``
      ``getTopPWorkspaceSizes``): sorted probabilities (float32), sorted ids and id values
      (int32) over the vocabulary of every slot.

    The vocabulary is padded to the tensor-parallel size at most; left as the model's."""
    slots = batch * beams
    vocab = spec.vocab_size
    logits = slots * vocab * 4
    state = slots * 4 * 4 * max_seq_len + batch * vocab * 2
    sampling = slots * vocab * (4 + 4 + 4)
    return logits + state + sampling


def regime_keys(s: TrtllmSettled) -> tuple[str, ...]:
    """The band's regimes of a deployment, most specific first: its backend's (the PyTorch
    backend's profiling run and an engine built ahead miss memory in different ways) by model
    class and TP, then coarser (kvlint.engines.band.regime_chain)."""
    gpus = s.tensor_parallel_size.value * s.pipeline_parallel_size.value
    return regime_chain(s.backend, s.spec, gpus)


def estimate(s: TrtllmSettled, band: BandTable | None = None) -> EngineEstimate:
    """What TensorRT-LLM allocates for the settled deployment, with the 90% band on the pool
    memory and the three-valued verdict. ``band`` is the band's table (the shipped one by
    default; the fidelity benchmark builds it without the source it predicts)."""
    point = _point(s)
    if point.fits is None:
        return point
    predicted = _predicted_memory(s, point)
    table = band if band is not None else shipped(FACTS.name)
    found = table.band_of(regime_keys(s)) if predicted is not None else None
    if point.refusal is Refusal.LAYOUT or found is None:
        return replace(point, verdict=STARTS if point.fits else REFUSES)
    assert predicted is not None and point.gpu_total_bytes is not None
    assert s.memory_fraction is not None
    budget = point.gpu_total_bytes * s.memory_fraction.value
    cap = s.kv_cache_memory_bytes.value if s.kv_cache_memory_bytes is not None else None

    def at(memory: int) -> EngineEstimate:
        return _point(s, memory=memory)

    return with_band(point, found, budget, at, predicted=predicted, cap=cap)


def _predicted_memory(s: TrtllmSettled, point: EngineEstimate) -> int | None:
    """The pool memory predicted from the GPU, before a stated cap: ``fraction`` of what the
    weights and buffers leave (negative when the weights alone do not fit); None where the
    memory is not predicted (no GPU: a stated budget sizes the pool)."""
    if point.gpu_total_bytes is None or point.weights_bytes is None or s.memory_fraction is None:
        return None
    free = point.gpu_total_bytes - _held_bytes(s) - point.weights_bytes
    return int(free * s.memory_fraction.value)


def _held_bytes(s: TrtllmSettled) -> int:
    """What the process holds on the GPU before the pool is sized, besides the weights: the
    CUDA context and workspaces, the profiling forward's activations (or a built engine's),
    the C++ runtime's buffers and decoder, and other residents' memory."""
    spec = s.spec
    tp, pp = s.tensor_parallel_size.value, s.pipeline_parallel_size.value
    held = D.CONTEXT_BYTES if tp * pp == 1 else D.CONTEXT_BYTES_MULTI_GPU
    batch = s.max_num_seqs.value if s.max_num_seqs is not None else D.MAX_BATCH_SIZE
    tokens = s.max_num_batched_tokens.value if s.max_num_batched_tokens else D.MAX_NUM_TOKENS
    if built_by_build_py(s.backend, s.version_numbers):
        held += engine_activation_bytes(spec, tokens, tp)
    else:
        held += activation_bytes(spec, tokens, tp)
    if s.backend == "tensorrt":
        held += decoder_bytes(spec, batch, s.beam_width, s.max_model_len.value)
    # The pool is a share of cudaMemGetInfo's free memory: other residents come off it.
    return held + reserved_bytes(s)


def _point(s: TrtllmSettled, *, memory: int | None = None) -> EngineEstimate:
    """The point prediction; with ``memory``, one end of the band: the pool and outcome when
    that much memory per GPU is left for the pool (only its pool, concurrency and fits are
    read)."""
    spec, gpu = s.spec, s.gpu
    tp, pp = s.tensor_parallel_size.value, s.pipeline_parallel_size.value
    notes = list(s.notes)
    context = s.max_model_len.value
    assert s.memory_fraction is not None and s.block_size is not None
    fraction = s.memory_fraction.value
    block = max(1, s.block_size.value)
    filled: list[tuple[str, object]] = []
    for name in ("engine_version", "max_model_len", "memory_fraction", "max_num_seqs"):
        value = getattr(s, "version" if name == "engine_version" else name)
        if value is not None and value.default:
            filled.append((name, value.value))
    if s.block_size.default:
        filled.append(("block_size", block))
    quantization = s.quantization.value if s.quantization is not None else None
    dtype = s.dtype.value if s.dtype is not None else None
    weights = weight_bytes_per_gpu(
        spec, tp=tp, pp=pp, stage=0, quantization=quantization, dtype=dtype
    )
    base = EngineEstimate(
        engine="trtllm",
        version=str(s.version.value),
        max_model_len=context,
        memory_fraction=fraction,
        weights_bytes=weights,
        block_size=block,
        defaults=tuple(filled),
        notes=tuple(notes),
    )
    types = s.cache_types
    if types is None:
        return without_storage(s, base)
    start, end = pp_layer_ranges(spec.num_layers, pp)[0]
    kv_tp = 1 if s.attention_dp else tp
    stage = spec.layers[start:end]
    per_token = sum(layer_bytes(layer, types, kv_tp) for layer in stage)
    # The PyTorch backend sizes every layer for max_seq_len unless kv_cache_config sets
    # max_attention_window (resource_manager.py: max_attention_window_vec = [max_seq_len]);
    # kvlint reads no such option, so a model's sliding windows shape the pool only in an
    # engine built by trtllm-build. gpt-oss-120b on trtllm-serve 1.1 logs 'kv size is 73728',
    # all 36 layers at full length, and one window in max_attention_window_vec.
    windowed = s.backend == "tensorrt"
    windows = {
        _window(layer, context) if windowed else context
        for layer in stage
        if layer_bytes(layer, types, kv_tp)
    }
    if not windowed and any(layer.kind.bounded and layer.window for layer in stage):
        notes.append(
            "sliding-window layers sized for max_seq_len (no kv_cache_config.max_attention_window)"
        )
    if len(windows) > 1:
        # Variable sliding-window attention: one pool per window size, the memory split in
        # proportion to window x that window's per-token size (kvCacheManager.cpp
        # calculateWindowSizeToShare), so every pool holds the same sequences of max_seq_len.
        # A token of the full-attention pool then costs each layer's bytes scaled by the share
        # of the sequence its window keeps.
        per_token = round(
            sum(layer_bytes(layer, types, kv_tp) * _kept(layer.window, context) for layer in stage)
        )
        notes.append("sliding-window layers in pools of their own window (VSWA)")
    # One window for every layer (Mistral 7B v0.1's 4,096): one pool of whole tokens, and a
    # request holds at most its window (maxAttentionWindow = min(window, max_seq_len)).
    held_tokens = min(windows) if len(windows) == 1 else context
    per_request = ceil_div(held_tokens, block)
    base = replace(
        base,
        bytes_per_token=per_token,
        blocks_per_request=per_request,
        needed_bytes_one_sequence=per_request * block * per_token,
        notes=tuple(notes),
    )
    problem = tp_problem(spec, FACTS.parallel, tp)
    if problem is not None:
        return replace(base, fits=False, error=problem, refusal=Refusal.LAYOUT)
    budget = s.kv_cache_memory_bytes.value if s.kv_cache_memory_bytes is not None else None
    total = gpu.total_bytes if gpu is not None else None
    available: int | None = None
    if memory is not None:
        available = memory  # a band end: the memory left for the pool is given
    elif total is not None:
        held = _held_bytes(s)
        note = reserved_note(s, "taken off the free memory")
        if note is not None:
            notes.append(note)
        if gpu is not None and gpu.memory_kind == "unified":
            # On unified memory (GB10) the device's free memory is what the host's processes
            # leave: gpt-oss-120b on a DGX Spark logs 49.78 GiB "used outside torch" after
            # loading, which sized its pool to 5.95 GiB. No file states the host's share.
            notes.append(
                "unified memory: the pool is a share of what the host leaves free; "
                "kvlint counts only reserved_memory of the host's use"
            )
        base = replace(base, notes=tuple(notes))
        if weights > total - held:
            return replace(
                base,
                gpu_total_bytes=total,
                available_kv_bytes=0,
                fits=False,
                refusal=Refusal.WEIGHTS,
                error=(
                    f"CUDA out of memory loading the weights: {weights / GiB:.2f} GiB per GPU "
                    f"beside {held / GiB:.2f} GiB of activations and runtime buffers, "
                    f"of {total / GiB:.2f} GiB"
                ),
            )
        free = total - held - weights
        available = int(free * fraction)
        if budget is not None:
            available = min(available, budget)
    elif budget is not None:
        available = budget
    if available is None:
        return replace(base, missing=("GPU type",))
    max_tokens = available // per_token if per_token else 0
    if s.max_tokens is not None and s.max_tokens < max_tokens:
        max_tokens = s.max_tokens
        notes.append(f"kv_cache_config.max_tokens {s.max_tokens:,} caps the pool")
    blocks = ceil_div(max_tokens, block)
    # With attention data parallelism every rank of the tensor-parallel group serves requests
    # of its own from its own pool (all KV heads, each MLA latent once): the copy holds
    # tp x the blocks of one rank, where plain TP keeps the same tokens on every rank.
    ranks = tp if s.attention_dp and tp > 1 else 1
    if ranks > 1:
        notes.append(f"attention data parallelism: each of the {tp} ranks holds its own requests")
    per_rank_blocks = blocks
    blocks *= ranks
    pool_tokens = blocks * block
    common = replace(
        base,
        gpu_total_bytes=total,
        available_kv_bytes=available,
        num_blocks=blocks,
        kv_cache_tokens=pool_tokens,
        max_concurrency=round(pool_tokens / context, 2) if context else None,
        admitted=blocks // per_request if per_request else None,
        first_principles_tokens=KvSize(spec, types).tokens_fitting(available * tp * pp),
        notes=tuple(notes),
    )
    if per_rank_blocks == 0:
        return replace(
            common,
            fits=False,
            refusal=Refusal.NO_CACHE_MEMORY,
            error=(
                f"no memory left for the KV cache: {available / GiB:.2f} GiB after the weights "
                f"and buffers holds no block of {block} tokens"
            ),
        )
    if per_rank_blocks < per_request:
        shortened = (per_rank_blocks - 1) * block + 1
        if s.fail_fast:
            return replace(
                common,
                fits=False,
                refusal=Refusal.ONE_REQUEST,
                estimated_max_model_len=shortened,
                error=(
                    "the attention window is too large to fit even a single sequence in the "
                    "KV cache (--fail_fast_on_attention_window_too_large)"
                ),
            )
        notes.append(
            f"maxSequenceLen {context:,} does not fit one sequence: TensorRT-LLM reduces it "
            f"to {shortened:,}"
        )
        return replace(common, fits=True, shortened_max_model_len=shortened, notes=tuple(notes))
    return replace(common, fits=True)
