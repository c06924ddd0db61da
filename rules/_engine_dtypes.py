"""The KV-cache dtypes each engine starts with: the flag tables of ``kvlint.engines``
(what each engine's argument parser accepts), less what it accepts and then refuses."""

from __future__ import annotations

from kvlint.engines.llamacpp import spelling as llamacpp
from kvlint.engines.ollama import spelling as ollama
from kvlint.engines.sglang import spelling as sglang
from kvlint.engines.tgi import spelling as tgi
from kvlint.engines.vllm import spelling as vllm

VLLM_011: tuple[str, ...] = vllm.KV_CACHE_DTYPES_0_11
VLLM_CURRENT: tuple[str, ...] = vllm.KV_CACHE_DTYPES
ALLOWED: dict[str, tuple[str, ...]] = {
    # SGLang 0.5.23's argparse still lists fp4_e2m1, but configure_kv_cache_dtype raises
    # "--kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16." at start.
    "sglang": tuple(d for d in sglang.KV_CACHE_DTYPES if d != "fp4_e2m1"),
    "llamacpp": llamacpp.CACHE_TYPES,
    "tgi": tgi.KV_CACHE_DTYPES,
    "ollama": ollama.KV_CACHE_TYPES,
}
QUANTISED_TYPES = tuple(t for t in llamacpp.CACHE_TYPES if t.startswith(("q", "iq")))
