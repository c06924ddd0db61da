"""Argument types the sub-commands share: counts as people write them."""

from __future__ import annotations

import argparse
from collections.abc import Callable


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


def count_at_most(limit: int, what: str) -> Callable[[str], int]:
    """``human_count`` no larger than ``limit``: the solver loops over GPU counts and stages, so
    ``--max-gpus 1e14`` would search for hours where a file's GPU count above the same bound is
    a KV502 (kvlint.deploy.carriers.container.MAX_COUNT, kvlint.deploy.flags.MAX_PARALLEL)."""

    def parse(text: str) -> int:
        value = human_count(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"expected {what} of at most {limit:,}, got {text!r}")
        return value

    return parse
