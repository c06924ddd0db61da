"""kvlint's built-in rules, loaded through the ``kvlint.rules`` entry point like any plugin."""

from __future__ import annotations
