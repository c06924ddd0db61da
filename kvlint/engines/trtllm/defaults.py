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
