"""Argument types the sub-commands share: counts as people write them."""

from __future__ import annotations

import argparse


def human_count(text: str) -> int:
    """A positive count, written as people write it: ``131072``, ``128k``, ``1M``."""
    from kvlint.units import parse_human_int

    try:
        value = parse_human_int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a count of at least 1, got {text!r}")
    return value
