"""Every read bounded and regular (issue 15, item 5): a FIFO, a ``/dev/zero`` link or a file past
its kind's cap, wherever kvlint reads (model ``config.json`` and safetensors index, the config
file, a GGUF header, what ``--fix`` and ``--diff`` read), is one clear line, never a hang or a
memory blow-up; the 100,000-entry cap counts every way of writing an item or a document; a GGUF
array claiming 2^40 items is refused before it is read. The real CLI as a child under the
memory cap and the hang guard (``runner.py``)."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import Outcome
from tests.hostile.runner import run_kvlint

ARGS = ("check", "--offline", "--no-config", "--format", "concise")
CONFIG = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}
GPU_LINE = "deploy.yaml:1:1: KV907 [info] the files do not give the GPU type"


def model_dir(root: Path, *, config: str | None = "regular", index: str | None = None) -> None:
    """``root/model``, its config.json and safetensors index each regular, a FIFO, a link to
    /dev/zero or too large; and ``root/deploy.yaml`` serving it."""
    folder = root / "model"
    folder.mkdir(parents=True)
    for name, how in (("config.json", config), ("model.safetensors.index.json", index)):
        path = folder / name
        if how == "regular":
            path.write_text(json.dumps(CONFIG))
        elif how == "fifo":
            os.mkfifo(path)
        elif how == "zero":
            path.symlink_to("/dev/zero")
        elif how == "large":
            with open(path, "w") as handle:
                handle.write('{"metadata": {"total_size": 1}, "pad": "')
                handle.write("x" * (65 * 2**20) + '"}')
    (root / "deploy.yaml").write_text("model: ./model\nmax-model-len: 4096\n")


def check(root: Path, *args: str) -> Outcome:
    outcome = run_kvlint([*ARGS, *args], root)
    assert_well_behaved(outcome)
    return outcome


# Every KV902 ends with the checks that did not run for want of the model.
NOT_RUN = (
    "; not checked without the model: KV101, KV102, KV301, KV302, KV303, KV304, KV305, KV401, KV402"
)


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("fifo", "not a regular file (a pipe, socket or device): not read"),
        ("zero", "not a regular file (a pipe, socket or device): not read"),
    ],
)
def test_a_model_config_that_is_no_regular_file(tmp_path: Path, how: str, why: str) -> None:
    model_dir(tmp_path, config=how)
    outcome = check(tmp_path, "deploy.yaml")
    assert outcome.code == 2
    assert outcome.lines()[1:] == [
        f"deploy.yaml:1:8: KV902 [error] model/config.json: cannot read the model config: {why}"
        f"{NOT_RUN}"
    ]


def test_a_model_config_past_its_cap(tmp_path: Path) -> None:
    model_dir(tmp_path, config=None)
    with open(tmp_path / "model" / "config.json", "w") as handle:
        json.dump({**CONFIG, "pad": "x" * (5 * 2**20)}, handle)
    outcome = check(tmp_path, "deploy.yaml")
    assert outcome.lines()[1:] == [
        "deploy.yaml:1:8: KV902 [error] model/config.json: cannot read the model config: 5 MiB is "
        f"too large for a model config (the limit is 4 MiB): not read{NOT_RUN}"
    ]


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("fifo", "not a regular file (a pipe, socket or device): not read"),
        ("zero", "not a regular file (a pipe, socket or device): not read"),
        ("large", "65 MiB is too large for a safetensors index (the limit is 64 MiB): not read"),
    ],
)
def test_a_safetensors_index_that_is_no_regular_file(tmp_path: Path, how: str, why: str) -> None:
    model_dir(tmp_path, index=how)
    outcome = check(tmp_path, "deploy.yaml")
    assert outcome.code == 2
    assert outcome.lines()[1:] == [
        f"deploy.yaml:1:8: KV902 [error] model/model.safetensors.index.json: {why}{NOT_RUN}"
    ]


def test_the_twin_a_regular_model_directory_is_read(tmp_path: Path) -> None:
    model_dir(tmp_path, index="regular")
    (tmp_path / "model" / "model.safetensors.index.json").write_text(
        '{"metadata": {"total_size": 16060522496}, "weight_map": {}}'
    )
    outcome = check(tmp_path, "deploy.yaml")
    assert outcome.code == 0
    assert [line[: len(GPU_LINE)] for line in outcome.lines()] == [GPU_LINE]


@pytest.mark.parametrize("how", ["fifo", "zero"])
def test_a_config_file_that_is_no_regular_file(tmp_path: Path, how: str) -> None:
    (tmp_path / "deploy.yaml").write_text("model: meta-llama/Llama-3.1-8B-Instruct\n")
    config = tmp_path / "kvlint.yaml"
    if how == "fifo":
        os.mkfifo(config)
    else:
        config.symlink_to("/dev/zero")
    outcome = run_kvlint(["check", "--offline", "--config", "kvlint.yaml", "deploy.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.code == 2
    assert outcome.lines() == [
        "kvlint: kvlint.yaml: config file: not a regular file (a pipe, socket or device): not read"
    ]


@pytest.mark.parametrize("name", [".kvlint.yaml", "pyproject.toml"])
def test_a_discovered_config_that_is_a_fifo_is_not_waited_for(tmp_path: Path, name: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy.yaml").write_text("model: meta-llama/Llama-3.1-8B-Instruct\n")
    os.mkfifo(tmp_path / name)
    outcome = run_kvlint(["check", "--offline", "--format", "concise", "deploy.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.code == 0


def test_a_config_file_past_its_cap(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text("model: meta-llama/Llama-3.1-8B-Instruct\n")
    (tmp_path / ".git").mkdir()
    with open(tmp_path / ".kvlint.yaml", "w") as handle:
        handle.write("gpu: H100\n" + "#" * (5 * 2**20) + "\n")
    outcome = run_kvlint(["check", "--offline", "deploy.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.code == 2
    assert outcome.lines() == [
        f"kvlint: {tmp_path / '.kvlint.yaml'}: config file: 5 MiB is too large for a config "
        "file (the limit is 4 MiB): not read"
    ]


def gguf(path: Path, *, items: int, kind: int = 8) -> None:
    """A GGUF v3 header with one array key claiming ``items`` items of value type ``kind``."""
    key = b"tokenizer.ggml.tokens"
    with open(path, "wb") as handle:
        handle.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1))
        handle.write(struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, kind, items))
        handle.write(b"\0" * 64)


@pytest.mark.parametrize("kind", [8, 4])  # an array of strings, of uint32
def test_a_gguf_array_of_two_to_the_forty_items_is_refused_unread(
    tmp_path: Path, kind: int
) -> None:
    pytest.importorskip("gguf", reason="kvlint reads GGUF metadata with the gguf extra")
    gguf(tmp_path / "evil.gguf", items=2**40, kind=kind)
    (tmp_path / "deploy.yaml").write_text("model: ./evil.gguf\nmax-model-len: 4096\n")
    outcome = check(tmp_path, "deploy.yaml")
    assert outcome.code == 2
    assert outcome.lines()[1:] == [
        "deploy.yaml:1:8: KV902 [error] evil.gguf: not a readable GGUF file "
        "('tokenizer.ggml.tokens' claims 1,099,511,627,776 items, more than the file holds)"
        f"{NOT_RUN}"
    ]


def test_diff_and_fix_never_wait_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "deploy.yaml")
    for mode in ("--diff", "--fix"):
        outcome = check(tmp_path, mode, "deploy.yaml")
        assert outcome.code == 2, mode
        assert "deploy.yaml:1:1: KV901 [error] not a regular file (a pipe, socket or device)" in (
            outcome.text
        ), mode


@pytest.mark.parametrize(
    ("form", "item"),
    [
        ("block items on their own line", "-\n a\n"),
        ("documents", "---\na\n"),
        ("explicit keys", "? a\n"),
    ],
)
def test_the_entry_cap_counts_every_way_to_write_an_item(
    tmp_path: Path, form: str, item: str
) -> None:
    text = "model: meta-llama/Llama-3.1-8B-Instruct\n---\n" + item * 150_000
    (tmp_path / "deploy.yaml").write_text(text)
    outcome = check(tmp_path, "deploy.yaml")
    assert outcome.code == 2, form
    (line,) = outcome.lines()
    assert line.startswith("deploy.yaml:1:1: KV901 [error] about "), line
    assert line.endswith(
        " keys and items, more than any deployment file holds (the limit is 100,000): not read"
    )
