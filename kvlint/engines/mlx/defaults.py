"""What mlx-lm's server does when a command line is silent (ml-explore/mlx-lm@d78bf58, 0.32.0).

``mlx_lm/server.py`` ``main()`` for the flags, ``mlx_lm/models/cache.py`` for the caches.
"""

from __future__ import annotations

DECODE_CONCURRENCY = 32  # --decode-concurrency: sequences the BatchGenerator decodes at once
PROMPT_CONCURRENCY = 8  # --prompt-concurrency: prompts it prefills together
PREFILL_STEP_SIZE = 2048  # --prefill-step-size: tokens of a prompt per forward pass
PROMPT_CACHE_SIZE = 10  # --prompt-cache-size: finished sessions' caches the LRU keeps
KV_GROUP_SIZE = 64  # generate.py --kv-group-size
QUANTIZED_KV_START = 5000  # generate.py DEFAULT_QUANTIZED_KV_START: tokens before quantising
# KVCache, RotatingKVCache and QuantizedKVCache grow their buffers in steps of 256 tokens
# (``step = 256``); a rotating cache stops at its ``max_size``.
CACHE_STEP = 256
# mlx_lm.server wires the GPU's recommended working set at start
# (``mx.set_wired_limit(mx.device_info()["max_recommended_working_set_size"])``); Metal's
# ``iogpu.wired_limit_mb`` sysctl is in MiB.
WIRED_LIMIT_UNIT = 2**20
