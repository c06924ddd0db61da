"""kvlint.reading: one bounded, regular-file-only reader, and no module reading around it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kvlint import reading

PACKAGE = Path(__file__).resolve().parents[1] / "kvlint"
# Reading a file's bytes or text any other way than through kvlint.reading.
OTHER_READS = re.compile(
    r"(?<!reading)\.read_(text|bytes)\(|(?<![\w.])open\(|os\.open\(|os\.fdopen\(|GGUFReader|memmap"
)
# The two modules whose job is the file system (kvlint.writing opens report files to write),
# and the one write of a fixed file (a temporary file beside it, then os.replace).
ALLOWED = {"reading.py", "writing.py"}
ALLOWED_LINES = {("fix.py", 'with os.fdopen(handle, "wb") as stream:')}


def test_every_read_goes_through_kvlint_reading() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ALLOWED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if OTHER_READS.search(code) and (path.name, line.strip()) not in ALLOWED_LINES:
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert offenders == []


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 100)
    assert reading.read_bytes(path, reading.Kind("a test file", 100)) == b"x" * 100


def test_a_file_past_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(3 * reading.MiB)  # sparse: its size alone says it is too large
    kind = reading.Kind("a test file", 2 * reading.MiB)
    with pytest.raises(reading.FileTooLarge) as info:
        reading.read_bytes(path, kind)
    assert reading.describe(info.value) == (
        "3 MiB is too large for a test file (the limit is 2 MiB): not read"
    )


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "deploy.yaml"
    os.mkfifo(fifo)
    with pytest.raises(reading.NotRegularFile) as info:
        reading.read_bytes(fifo, reading.DEPLOYMENT)
    assert reading.describe(info.value) == (
        "not a regular file (a pipe, socket or device): not read"
    )


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "config.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(reading.NotRegularFile):
        reading.read_bytes(link, reading.MODEL_CONFIG)
    assert not reading.is_regular_file(link)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a directory, not a file"),
        (lambda p: None, "no such file"),
    ],
)
def test_what_each_failure_says(tmp_path: Path, make: object, message: str) -> None:
    path = tmp_path / "x.yaml"
    make(path)  # type: ignore[operator]
    with pytest.raises(OSError) as info:
        reading.read_bytes(path, reading.DEPLOYMENT)
    assert reading.describe(info.value) == message


def test_a_prefix_reads_no_more_than_asked(tmp_path: Path) -> None:
    path = tmp_path / "METADATA"
    path.write_bytes(b"Name: x\n" + b"y" * 1000)
    assert reading.read_prefix(path, 8) == b"Name: x\n"


def _stat_saying(size: int) -> object:
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        values = list(real(fd))
        values[6] = size  # st_size, as if the file were this long when it was looked at
        return os.stat_result(values)

    return fstat


def test_a_file_that_grew_since_its_size_was_read_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"x" * 100)
    monkeypatch.setattr(reading.os, "fstat", _stat_saying(10))
    assert reading.read_bytes(path, reading.Kind("a test file", 100)) == b"x" * 100
    with pytest.raises(reading.FileTooLarge) as info:
        reading.read_bytes(path, reading.Kind("a test file", 50))
    assert info.value.size == 51  # one byte past the cap is enough to tell
