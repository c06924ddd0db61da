"""Version numbers as engines and image tags write them (a record-level helper: pure)."""

from __future__ import annotations

from kvlint.lazy_re import lazy

_VERSION_RE = lazy(r"(?<!\d)(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?(?!\d)")


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``v0.11.0``, ``0.10.1.1``, ``vllm/vllm-openai:v0.11.0``, ``0.19.0rc1`` -> (0, 11, 0).

    None when the text holds no dotted number (``latest``, ``nightly``).
    """
    if not text:
        return None
    # At most nine digits a part: a 5,000-digit "version" in an image tag is no version (and
    # past 4,300 digits int() refuses it).
    match = _VERSION_RE.search(text)
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def version_label(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
