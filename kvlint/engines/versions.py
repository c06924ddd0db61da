"""The newest release of each engine whose accounting kvlint mirrors."""

from __future__ import annotations

# The newest release of each engine whose accounting kvlint mirrors; a deployment that names
# no version is sized as this one.
NEWEST: dict[str, str] = {
    "vllm": "0.33.0",
    "sglang": "0.5.23",
    "llamacpp": "0c1e570",  # the git commit research/engines.md read (2026)
    "tgi": "3.3.6",
    "ollama": "0.12.0",
    "trtllm": "1.2.1",  # serve.py and _util.py as read (trtllm-serve keeps BuildConfig)
    "mlx": "0.32.0",  # mlx-lm, ml-explore/mlx-lm@d78bf58 (2026-08-22)
}
