"""Engine versions: the newest release of each engine kvlint mirrors, and version parsing."""

from __future__ import annotations

import re

# The newest release of each engine whose accounting kvlint mirrors; a deployment that names
# no version is sized as this one.
NEWEST: dict[str, str] = {
    "vllm": "0.33.0",
    "sglang": "0.5.23",
    "llamacpp": "0c1e570",  # the git commit research/engines.md read (2026)
    "tgi": "3.3.6",
    "ollama": "0.12.0",
}


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
