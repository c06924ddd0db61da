"""What TensorRT-LLM does when a file is silent.

Every figure cites the source it mirrors: NVIDIA/TensorRT-LLM at
00209af149e7774406881a37283dce303571eb11 (``tensorrt_llm/commands/serve.py``) and at
0004396720054fd8e205cbf616f21f0b57c6b412 (``tensorrt_llm/_torch/pyexecutor/_util.py``); the
C++ runtime's ``cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp``; Dynamo's TensorRT-LLM
worker ``components/src/dynamo/trtllm/backend_args.py`` (ai-dynamo/dynamo at
0a6a115c6cd15ae95647e90c55be2ea06b36e66f).
"""

from __future__ import annotations

from kvlint.units import GiB

# trtllm-serve --kv_cache_free_gpu_memory_fraction and KvCacheConfig.free_gpu_memory_fraction
# (the C++ KvCacheConfig::kDefaultGpuMemFraction): the share of the memory still free after the
# weights, buffers and the profiling run that the pool takes.
FREE_GPU_MEMORY_FRACTION = 0.9
# BuildConfig's defaults, which trtllm-serve and Dynamo's worker pass on.
MAX_BATCH_SIZE = 2048
MAX_NUM_TOKENS = 8192
MAX_BEAM_WIDTH = 1
# KvCacheConfig.tokens_per_block in the PyTorch backend (and Dynamo's --kv-block-size 32).
TOKENS_PER_BLOCK = 32
# Engines built by older trtllm-build releases page in blocks of 64 tokens (the C++ runtime
# prints "Number of tokens per block: 64."); 0.19 engines built without --tokens_per_block
# print 32 (NVIDIA/TensorRT-LLM#4275).
TOKENS_PER_BLOCK_OLD_ENGINES = 64
OLD_ENGINES_BEFORE = (0, 15)
# The backend trtllm-serve runs when --backend is not given (serve.py: default="pytorch").
BACKEND = "pytorch"

# Memory the process holds before the pool is sized, besides the weights: the CUDA context,
# cuBLAS and NCCL workspaces (~0.6 GiB on one GPU, more with NCCL between ranks). Read off the
# C++ runtime's own [MemUsageChange] lines in docs/source/reference/memory.md (0.75 GiB beyond
# the engine, its execution context, runtime buffers and decoder on an H100), not fitted.
CONTEXT_BYTES = round(0.6 * GiB)
CONTEXT_BYTES_MULTI_GPU = round(1.0 * GiB)

# Engines built by the per-model examples/<model>/build.py scripts (0.5 to 0.7), read at
# NVIDIA/TensorRT-LLM release/0.5.0 (98e78cc):
# * tensorrt_llm/models/generation_mixin.py prepare_basic_inputs: with max_num_tokens unset the
#   engine's token profile is max_input_len x max_batch_size (max(that, max_beam_width x
#   max_batch_size) with one profile), and TensorRT sizes the activation memory for it
#   (docs/source/reference/memory.md: "If max_num_tokens is not specified, the max number of
#   input tokens will be derived as max_batch_size*max_input_len");
# * examples/llama/build.py: --max_input_len defaults to 2048, --max_output_len to 512;
# * the Triton backend (triton-inference-server/tensorrtllm_backend v0.5.0 to v0.7.1,
#   inflight_batcher_llm/src): "kv_cache_free_gpu_mem_fraction is not specified, will use
#   default value of 0.85"; from v0.8.0 the default is 0.9.
BUILD_PY_BEFORE = (0, 8)
BUILD_PY_MAX_INPUT_LEN = 2048
OLD_RUNTIME_FREE_GPU_MEMORY_FRACTION = 0.85
