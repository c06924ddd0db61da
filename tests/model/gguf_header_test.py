"""kvlint.model.gguf_header: the metadata gguf-py's own reader gives, read within bounds; counts
and lengths a file cannot hold refused before anything is read."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from kvlint.model.gguf_header import SHORT_ARRAY
from kvlint.model.gguf_header import ArrayLength
from kvlint.model.gguf_header import GgufError
from kvlint.model.gguf_header import read_gguf_metadata


def _written(path: Path) -> Path:
    gguf = pytest.importorskip("gguf", reason="the optional gguf extra writes the test file")
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("Tiny")
    writer.add_block_count(4)
    writer.add_context_length(8192)
    writer.add_head_count(8)
    writer.add_head_count_kv([2, 2, 4, 4])  # a per-layer array
    writer.add_float32("llama.rope.freq_base", 500000.0)
    writer.add_bool("llama.use_parallel_residual", True)
    writer.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(SHORT_ARRAY + 10)])
    writer.add_array("tokenizer.ggml.scores", [0.5] * (SHORT_ARRAY + 1))
    writer.add_array("llama.sliding", [True, False])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _reference(path: Path) -> dict[str, Any]:
    """Every field as gguf-py's GGUFReader reads it (long arrays as their length)."""
    from gguf import GGUFReader

    out: dict[str, Any] = {}
    for name, field in GGUFReader(str(path), "r").fields.items():
        if name.startswith("GGUF."):
            continue  # the reader's own pseudo-fields (version, counts)
        value = field.contents()
        out[name] = (
            ArrayLength(len(value))
            if isinstance(value, list) and len(value) > SHORT_ARRAY
            else value
        )
    return out


def test_the_metadata_is_what_gguf_py_reads(tmp_path: Path) -> None:
    path = _written(tmp_path / "tiny.gguf")
    ours = read_gguf_metadata(path)
    assert ours == _reference(path)
    assert ours["tokenizer.ggml.tokens"] == ArrayLength(SHORT_ARRAY + 10)
    assert ours["llama.attention.head_count_kv"] == [2, 2, 4, 4]
    assert ours["general.name"] == "Tiny"


def _header(*pairs: bytes, count: int | None = None, version: int = 3) -> bytes:
    return (
        b"GGUF"
        + struct.pack("<IQQ", version, 0, len(pairs) if count is None else count)
        + b"".join(pairs)
    )


def _key(name: str) -> bytes:
    return struct.pack("<Q", len(name)) + name.encode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not a gguf file", "does not start with GGUF"),
        (_header(version=7), "GGUF version 7 is not one kvlint reads"),
        (_header(count=10**12), "claims 1,000,000,000,000 key/values"),
        (
            _header(struct.pack("<Q", 2**63) + b"\0" * 16),
            "needs 9,223,372,036,854,775,808 bytes",
        ),
        (_header(_key("a") + struct.pack("<IIQ", 9, 8, 2**40)), "'a' claims 1,099,511,627,776"),
        (_header(_key("a") + struct.pack("<IIQ", 9, 12, 2**40)), "'a' claims 1,099,511,627,776"),
        (_header(_key("a") + struct.pack("<I", 99) + b"\0" * 8), "value type 99"),
        (
            _header(_key("a") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 5 + b"\0" * 64),
            "nests arrays deeper than 4 levels",
        ),
        (_header(_key("a") + struct.pack("<I", 8) + struct.pack("<Q", 100) + b"ab"), "file ends"),
    ],
)
def test_an_impossible_header_is_refused_before_it_is_read(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "evil.gguf"
    path.write_bytes(data)
    with pytest.raises(GgufError, match=message):
        read_gguf_metadata(path)


def test_a_big_endian_file_is_read(tmp_path: Path) -> None:
    key = b"general.architecture"
    value = b"llama"
    data = b"GGUF" + struct.pack(">IQQ", 3, 0, 1)
    data += struct.pack(">Q", len(key)) + key + struct.pack(">I", 8)
    data += struct.pack(">Q", len(value)) + value
    path = tmp_path / "be.gguf"
    path.write_bytes(data)
    assert read_gguf_metadata(path) == {"general.architecture": "llama"}
