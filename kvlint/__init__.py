"""kvlint: check LLM-serving deployments against the KV-cache arithmetic of their model."""

from __future__ import annotations

__version__ = "0.1.0"
