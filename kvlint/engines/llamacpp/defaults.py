"""What llama.cpp's llama-server does when a file is silent.

Every figure cites the source it mirrors (``research/engines.md`` read vLLM 0.11.0 and 0.33.0,
SGLang 0.5.23, llama.cpp 0c1e570 and TGI db931fcf). Where a default changed between releases
the table says in which release, and how that was established.
"""

from __future__ import annotations

import re

# llama-server: -c 0 = the model's training context (common/common.h n_ctx = 0 in current
# builds; older builds defaulted to 4096: kvlint assumes the current build unless told).
LLAMACPP_DEFAULT_CTX_OLD = 4096
LLAMACPP_AUTO_PARALLEL = 4  # tools/server/server.cpp: -np auto -> 4 slots, kv_unified = true
LLAMACPP_UBATCH = 512
LLAMACPP_PAD = 256  # GGML_PAD(n_ctx, 256) in src/llama-context.cpp
# llama_params_fit (--fit, llama.cpp PR #16653): an unset context is lowered to at least
# --fit-ctx 4096, keeping --fit-target 1024 MiB free on each device.
LLAMACPP_FIT_MIN_CTX = 4096
# Builds before llama_params_fit (b7437 of 2025-12-16 already has it; the merge was a little
# earlier, not traced to the build).
LLAMACPP_FIT_SINCE_BUILD = 7300


# `-fa` takes a value (on|off|auto) instead of being a switch: llama.cpp's flash-attention
# auto mode (flash_attn_type), in every build from b6327 (the build llama.node synced to for it,
# 2025-08-31); 0/1/-1 and enabled/disabled are aliases (ggml-org/llama.cpp#15746).
LLAMACPP_FA_VALUE_SINCE_BUILD = 6327


def build_number(version: str | None) -> int | None:
    """The build of a llama.cpp version (``server-cuda-b6500``, ``b4000``), None when unnamed."""
    if not version:
        return None
    match = re.search(r"\bb?(\d{4,5})\b", version)
    return int(match.group(1)) if match is not None else None


def llamacpp_auto_fit(version: str | None) -> bool:
    """Whether ``--fit`` applies: any build from b7300 on, or an unnamed (newest) one."""
    build = build_number(version)
    return build is None or build >= LLAMACPP_FIT_SINCE_BUILD


def flash_attn_takes_value(version: str | None) -> bool:
    """Whether ``-fa`` needs on/off/auto: any build from b6327 on, or an unnamed (newest) one."""
    build = build_number(version)
    return build is None or build >= LLAMACPP_FA_VALUE_SINCE_BUILD


LLAMACPP_FIT_MARGIN = 1024 * 2**20
