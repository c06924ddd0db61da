"""Every file kvlint reads, read one way: a regular file only, never more than a cap per kind.

A repository is hostile input: a file named ``deploy.yaml`` may be a FIFO (``open()`` blocks a
pre-commit hook forever), a symlink to ``/dev/zero`` (``read()`` fills memory) or a 2 GB
``config.json``. So every read path (deployment files, model ``config.json`` and
``model.safetensors.index.json``, ``.kvlint.yaml`` and ``pyproject.toml``, GGUF headers, what
``--fix`` / ``--diff`` re-read, plugin metadata) opens through ``open_regular``: ``O_NONBLOCK``
so a FIFO with no writer does not wait, ``fstat`` on the opened descriptor so a swapped path
cannot slip a device in, then at most the kind's cap plus one byte, so a file that grows while
it is read is still caught. ``tests/reading_test.py`` keeps every other module off ``open`` and
``Path.read_*``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO
from typing import NamedTuple

MiB = 2**20


class Kind(NamedTuple):
    """What is read, for the messages, and the most kvlint reads of it."""

    what: str  # "a deployment file"
    limit: int  # bytes


# Deployment files are kilobytes; the largest real bundle of CRDs seen is a few MiB.
DEPLOYMENT = Kind("a deployment file", 16 * MiB)
# A model's config.json is a few kB (a vision model's label maps reach ~100 kB).
MODEL_CONFIG = Kind("a model config", 4 * MiB)
# The safetensors index lists every tensor: ~9 MiB for a 1,000-tensor-per-layer MoE.
SAFETENSORS_INDEX = Kind("a safetensors index", 64 * MiB)
# .kvlint.yaml and pyproject.toml.
CONFIG_FILE = Kind("a config file", 4 * MiB)
# A GGUF file's header: metadata (the tokenizer's vocabulary and merges are the bulk, ~10 MiB
# for a 256k vocabulary) and tensor descriptions; the weights after it are never read.
GGUF_HEADER = Kind("a GGUF header", 256 * MiB)
# A distribution's entry_points.txt and METADATA headers.
PACKAGE_METADATA = Kind("package metadata", 4 * MiB)


class NotRegularFile(OSError):
    """A pipe, socket or device where a file was expected: not read."""


class FileTooLarge(OSError):
    """A file above its kind's cap: not read."""

    def __init__(self, size: int, kind: Kind) -> None:
        super().__init__(f"{size} bytes")
        self.size = size
        self.kind = kind


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, or an OSError; only a regular file opens.

    ``IsADirectoryError`` for a folder, ``NotRegularFile`` for a FIFO, socket or device (a
    symlink to ``/dev/zero`` included), else what ``os.open`` raises.
    """
    # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{path}: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{path}: not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], kind: Kind) -> bytes:
    """The whole of a regular file of at most ``kind.limit`` bytes, else an OSError
    (``FileTooLarge`` when it is bigger, before anything is read when its size says so)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > kind.limit:
            raise FileTooLarge(size, kind)
        # What fstat says and one byte more, not the cap: asked for the cap (16 MiB), the
        # reader allocated it for every file (50 microseconds of a 2 kB manifest).
        data = handle.read(size + 1)
        if len(data) > size:  # it grew since fstat: the rest, up to one byte past the cap
            data += handle.read(kind.limit + 1 - len(data))
    if len(data) > kind.limit:
        raise FileTooLarge(len(data), kind)
    return data


def read_prefix(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most the first ``limit`` bytes of a regular file (a METADATA file's headers)."""
    with open_regular(path) as handle:
        return handle.read(limit)


def read_utf8(path: str | os.PathLike[str], kind: Kind) -> str:
    """``read_bytes`` decoded as UTF-8 (a BOM dropped); UnicodeDecodeError when it is not."""
    return read_bytes(path, kind).decode("utf-8-sig")


def size_text(size: int) -> str:
    """``50 MiB`` / ``12 kB``: a size for a message."""
    if size >= MiB:
        return f"{size / MiB:.0f} MiB"
    return f"{size / 1000:.0f} kB" if size >= 1000 else f"{size} bytes"


def describe(exc: OSError) -> str:
    """The one line an OSError of a read becomes (without the path, which the caller shows)."""
    if isinstance(exc, FileTooLarge):
        return (
            f"{size_text(exc.size)} is too large for {exc.kind.what} "
            f"(the limit is {size_text(exc.kind.limit)}): not read"
        )
    if isinstance(exc, NotRegularFile):
        return "not a regular file (a pipe, socket or device): not read"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return f"cannot read: {exc.strerror or exc}"


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` (followed) is a regular file; False for anything that cannot be told."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False
