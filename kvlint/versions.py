"""Version numbers as engines and image tags write them (a record-level helper: pure)."""

from __future__ import annotations

import re


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``v0.11.0``, ``0.10.1.1``, ``vllm/vllm-openai:v0.11.0``, ``0.19.0rc1`` -> (0, 11, 0).

    None when the text holds no dotted number (``latest``, ``nightly``).
    """
    if not text:
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def version_label(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
