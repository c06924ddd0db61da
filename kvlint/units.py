"""Units in one place: parsing sizes and token counts, formatting bytes binary or decimal.

A message uses one system throughout: ``format_binary`` (KiB, MiB, GiB) or ``format_decimal``
(kB, MB, GB), never both.
"""

from __future__ import annotations

import math

from kvlint.lazy_re import lazy

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_DECIMAL_UNITS = ("B", "kB", "MB", "GB", "TB", "PB")

_NAMED_UNITS = {
    "": 1,
    "b": 1,
    "kib": KiB,
    "mib": MiB,
    "gib": GiB,
    "tib": TiB,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}

# The largest count or size any engine stores (C / torch int64): a value above it is refused
# where it is read, which also keeps every float conversion in the arithmetic finite.
INT64_MAX = 2**63 - 1

_DECIMAL_SUFFIX = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY_SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
# Matched against the stripped text: `\s*([A-Za-z]*)\s*$` tried every split of a long run of
# spaces between its two `\s*` (80 KB: seconds).
_SIZE_RE = lazy(r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)")
_HUMAN_INT_RE = lazy(r"^([0-9]+(?:\.[0-9]+)?)([kKmMgGtT])$")


def parse_size(text: str | int | float) -> int:
    """``320 KiB``, ``2.62 GB``, ``8G``, ``1.5GiB`` -> bytes; a bare number is bytes.

    Raises ValueError with a message naming the accepted units.
    """
    if isinstance(text, bool):
        raise ValueError(f"expected a size such as '320 KiB' or '2.62 GB', got {text!r}")
    if isinstance(text, (int, float)):
        try:
            value = float(text)
        except OverflowError:  # an int of hundreds of digits: no size is that large
            value = math.inf
        return _finite_nonnegative(value, str(text))
    match = _SIZE_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"expected a size such as '320 KiB' or '2.62 GB', got {text!r}")
    number, unit = match.groups()
    if unit in _BINARY_SUFFIX:  # vLLM's human-readable style: "8G" is 8 GiB
        factor = _BINARY_SUFFIX[unit]
    elif unit in _DECIMAL_SUFFIX:  # and "8g" is 8 GB
        factor = _DECIMAL_SUFFIX[unit]
    elif unit.lower() in _NAMED_UNITS:
        factor = _NAMED_UNITS[unit.lower()]
    else:
        raise ValueError(
            f"unknown size unit {unit!r} in {text!r} (use B, KiB, MiB, GiB, kB, MB, GB)"
        )
    return _finite_nonnegative(float(number) * factor, text)


def _finite_nonnegative(value: float, text: str) -> int:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"expected a non-negative finite size, got {text!r}")
    return round(value)


def parse_human_int(text: str | int) -> int:
    """A token count as vLLM's ``human_readable_int`` reads it.

    ``1k`` = 1,000 and ``25.6k`` = 25,600 (decimal, lower case); ``1K`` = 1,024 (binary, upper
    case, whole numbers only); plain integers as they are.
    """
    if isinstance(text, bool):
        raise ValueError(f"expected an integer, got {text!r}")
    if isinstance(text, int):
        return text
    value = text.strip()
    match = _HUMAN_INT_RE.match(value)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL_SUFFIX:
            scaled = float(number) * _DECIMAL_SUFFIX[suffix]
            if not math.isfinite(scaled):  # hundreds of digits before the suffix
                raise ValueError(f"expected an integer such as 8192, 32k or 128K, got {text!r}")
            return int(scaled)
        if "." in number:
            raise ValueError(
                f"decimals are not allowed with binary suffixes like {suffix!r}; "
                f"did you mean {number}{suffix.lower()}?"
            )
        return int(number) * _BINARY_SUFFIX[suffix]
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"expected an integer such as 8192, 32k or 128K, got {text!r}") from None


def _format(n: float, base: int, units: tuple[str, ...], digits: int) -> str:
    sign = "-" if n < 0 else ""
    value = abs(float(n))
    index = 0
    while value >= base and index < len(units) - 1:
        value /= base
        index += 1
    if index == 0:
        return f"{sign}{int(value):,} B"
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{sign}{text} {units[index]}"


def format_binary(n: float, digits: int = 2) -> str:
    """327680 -> '320 KiB'; 2621440 -> '2.5 MiB'."""
    return _format(n, 1024, _BINARY_UNITS, digits)


def format_bytes(n: float) -> str:
    """Every byte figure kvlint computes, in one unit system: binary, as the engines' logs print
    memory ("Available KV cache memory: 26.39 GiB"); three significant digits below 10 of a
    unit, one decimal above ('1.07 GiB', '41.2 GiB', '320 KiB')."""
    value = abs(float(n))
    while value >= 1024:
        value /= 1024
    return format_binary(n, 2 if value < 10 else 1)


def format_band(low: float, high: float) -> str:
    """A band in the unit of its high end, both ends alike ('4.30-7.26 GiB', '0.24-17.09
    GiB'), so the two figures read side by side (never '245 MiB-17.1 GiB')."""
    unit, scale = "B", 1.0
    for name in ("KiB", "MiB", "GiB", "TiB"):
        if abs(high) < scale * 1024:
            break
        unit, scale = name, scale * 1024
    return f"{low / scale:.2f}-{high / scale:.2f} {unit}"


def format_decimal(n: float, digits: int = 2) -> str:
    """2684354560 -> '2.68 GB' (decimal units, as the seeds quote GB per sequence)."""
    return _format(n, 1000, _DECIMAL_UNITS, digits)


def format_tokens(n: int) -> str:
    return f"{n:,}"
