"""A GGUF file's metadata, read from its header within bounds; tensors and weights never.

The layout (ggml docs/gguf.md): ``GGUF``, a version, the tensor and key/value counts, then each
key/value as a length-prefixed key, a value type and the value; an array is an item type, a
count and the items. Every count and length comes from the file, so each is checked against
what is left of it (and of ``reading.GGUF_HEADER``) before anything is read: an array claiming
2^40 items, a key of 2^63 bytes or a billion key/values is refused at once instead of looping
or allocating. Arrays of more than ``SHORT_ARRAY`` items (the tokenizer's vocabulary, scores
and merges) are skipped over and kept as their length only, which is all kvlint uses of them.
"""

from __future__ import annotations

import os
import pathlib
import struct
from typing import Any
from typing import BinaryIO
from typing import NamedTuple

from kvlint import reading

# The fixed-size value types (gguf.md `gguf_metadata_value_type`): type -> struct code.
_SCALARS = {
    0: "B",  # UINT8
    1: "b",  # INT8
    2: "H",  # UINT16
    3: "h",  # INT16
    4: "I",  # UINT32
    5: "i",  # INT32
    6: "f",  # FLOAT32
    7: "?",  # BOOL
    10: "Q",  # UINT64
    11: "q",  # INT64
    12: "d",  # FLOAT64
}
_STRING, _ARRAY = 8, 9
SHORT_ARRAY = 4096  # per-layer arrays are a few hundred items; longer ones are kept as a length
MAX_NESTING = 4  # an array of arrays of ...: none of the keys kvlint reads nests at all
_CHUNK = 2**20


class ArrayLength(NamedTuple):
    """A long array, skipped: its item count (``len(tokenizer.ggml.tokens)`` is the vocabulary)."""

    items: int


class GgufError(ValueError):
    """The header is not a GGUF header kvlint can read; the message says where and why."""


class _Cursor:
    """Reads forward through the header, never past the file's end or the header cap."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.end = min(size, reading.GGUF_HEADER.limit)
        self.size = size
        self.offset = 0  # of buffer[0] in the file
        self.buffer = b""
        self.pos = 0  # in buffer
        self.order = "<"

    @property
    def left(self) -> int:
        return self.end - (self.offset + self.pos)

    def take(self, n: int, what: str) -> bytes:
        if n > self.left:
            where = self.offset + self.pos
            if self.end < self.size and n <= self.size - where:
                limit = reading.size_text(reading.GGUF_HEADER.limit)
                raise GgufError(f"{what} at byte {where} lies beyond the first {limit} read")
            raise GgufError(f"{what} at byte {where} needs {n:,} bytes; the file ends first")
        if self.pos + n > len(self.buffer):
            rest = self.buffer[self.pos :]
            wanted = min(max(n - len(rest), _CHUNK), self.left - len(rest))
            self.offset += self.pos
            self.buffer = rest + self.handle.read(wanted)
            self.pos = 0
            if len(self.buffer) < n:
                raise GgufError(f"{what}: the file ended while it was read")
        out = self.buffer[self.pos : self.pos + n]
        self.pos += n
        return out

    def skip(self, n: int, what: str) -> None:
        if n > self.left:
            self.take(n, what)  # raises the right error
        if self.pos + n <= len(self.buffer):
            self.pos += n
            return
        beyond = n - (len(self.buffer) - self.pos)
        self.offset += len(self.buffer) + beyond
        self.handle.seek(self.offset)
        self.buffer, self.pos = b"", 0

    def unpack(self, code: str, what: str) -> Any:
        fmt = self.order + code
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]


def read_gguf_metadata(path: pathlib.Path) -> dict[str, Any]:
    """Every metadata key/value of the GGUF file at ``path``. Raises OSError for a file that
    cannot be opened (``kvlint.reading``), GgufError for a header that is not readable."""
    with reading.open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        return _parse(_Cursor(handle, size))


def _parse(cursor: _Cursor) -> dict[str, Any]:
    if cursor.take(4, "the magic") != b"GGUF":
        raise GgufError("the file does not start with GGUF")
    raw = cursor.take(4, "the version")
    version = struct.unpack("<I", raw)[0]
    if version & 0xFFFF == 0:  # written on a big-endian machine (as gguf-py detects it)
        cursor.order = ">"
        version = struct.unpack(">I", raw)[0]
    if version not in (1, 2, 3):
        raise GgufError(f"GGUF version {version} is not one kvlint reads (1 to 3)")
    count = "I" if version == 1 else "Q"  # version 1 counted in 32 bits
    cursor.unpack(count, "the tensor count")
    pairs = cursor.unpack(count, "the key/value count")
    # The smallest key/value: an empty key's length, a type and a one-byte value.
    smallest = struct.calcsize(count) + 4 + 1
    if pairs * smallest > cursor.left:
        raise GgufError(f"the header claims {pairs:,} key/values, more than the file holds")
    out: dict[str, Any] = {}
    for _ in range(pairs):
        key = _string(cursor, count, "a key")
        kind = cursor.unpack("I", f"the type of {key!r}")
        out[key] = _value(cursor, kind, count, key, 0)
    return out


def _string(cursor: _Cursor, count: str, what: str) -> str:
    length = cursor.unpack(count, f"the length of {what}")
    return cursor.take(length, what).decode("utf-8", errors="replace")


def _value(cursor: _Cursor, kind: int, count: str, key: str, depth: int) -> Any:
    if kind in _SCALARS:
        return cursor.unpack(_SCALARS[kind], f"the value of {key!r}")
    if kind == _STRING:
        return _string(cursor, count, f"the value of {key!r}")
    if kind != _ARRAY:
        raise GgufError(f"{key!r} has value type {kind}, which GGUF does not define")
    if depth >= MAX_NESTING:
        raise GgufError(f"{key!r} nests arrays deeper than {MAX_NESTING} levels")
    item = cursor.unpack("I", f"the item type of {key!r}")
    items = cursor.unpack(count, f"the item count of {key!r}")
    if item in _SCALARS:
        width = struct.calcsize(_SCALARS[item])
        if items * width > cursor.left:
            raise GgufError(f"{key!r} claims {items:,} items, more than the file holds")
        if items > SHORT_ARRAY:
            cursor.skip(items * width, f"the items of {key!r}")
            return ArrayLength(items)
        fmt = f"{cursor.order}{items}{_SCALARS[item]}"
        return list(struct.unpack(fmt, cursor.take(items * width, f"the items of {key!r}")))
    # Strings and arrays: each item holds at least its own length.
    if items * struct.calcsize(count) > cursor.left:
        raise GgufError(f"{key!r} claims {items:,} items, more than the file holds")
    if item == _STRING and items > SHORT_ARRAY:
        for _ in range(items):
            length = cursor.unpack(count, f"an item of {key!r}")
            cursor.skip(length, f"an item of {key!r}")
        return ArrayLength(items)
    values = [_value(cursor, item, count, key, depth + 1) for _ in range(items)]
    return ArrayLength(items) if items > SHORT_ARRAY else values
