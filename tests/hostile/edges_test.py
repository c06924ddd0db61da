"""One clear line, never an internal error, for values at the edges (issue 15, item 6): integers
past Python's 4,300-digit limit however YAML writes them, a 5,000-digit image-tag version,
``total_size: 1e400``, TOML nested 5,000 deep, ``--output-file /dev/full``, a closed output pipe,
``--diff`` and ``explain --file`` on a binary or broken file, a ``pyproject.toml`` that is not
UTF-8; ``kvlint solve`` searching past the bounds a file's GPU count and parallel sizes have, or
sizing with a cache dtype no engine spells. The other findings of the file survive the one bad
value. The real CLI as a child."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import Outcome
from tests.hostile.runner import child_env
from tests.hostile.runner import run_kvlint

ARGS = ("check", "--offline", "--no-config", "--format", "concise")
MODEL = "model: meta-llama/Llama-3.1-8B-Instruct\n"
# The twin of every bad value: a second bad setting whose finding must survive it.
ALSO = "max-num-seqs: 0\n"
ALSO_LINE = "x.yaml:3:15: KV502 [error] `max-num-seqs` must be a positive integer, got `0`"
GPU_LINE = "x.yaml:1:1: KV907 [info] the files do not give the GPU type"


def check(tmp_path: Path, text: str, *extra: str) -> Outcome:
    (tmp_path / "x.yaml").write_text(text)
    outcome = run_kvlint([*ARGS, *extra, "x.yaml"], tmp_path)
    assert_well_behaved(outcome)
    return outcome


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0x" + "f" * 5000, "a number of 5002 characters"),  # hexadecimal
        ("0" + "7" * 5000, "a number of 5001 characters"),  # YAML 1.1 octal
        ("0b" + "1" * 20000, "a number of 20002 characters"),  # binary
        ("9" * 5000, "a number of 5000 characters"),  # decimal
    ],
)
def test_an_integer_past_the_digit_limit(tmp_path: Path, value: str, shown: str) -> None:
    outcome = check(tmp_path, f"{MODEL}max-model-len: {value}\n{ALSO}")
    assert outcome.code == 1
    lines = outcome.lines()
    assert lines[0].startswith(GPU_LINE)
    assert lines[1:] == [
        f"x.yaml:2:16: KV502 [error] `max-model-len` is out of range: {shown}",
        ALSO_LINE,
    ]


def test_a_five_thousand_digit_image_tag_version(tmp_path: Path) -> None:
    text = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.{"1" * 5000}.0
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "0"]
"""
    outcome = check(tmp_path, text)
    # No version is read from it (sized as the newest release); the bad setting still reported.
    assert outcome.code == 1
    assert [line.split(" [")[0] for line in outcome.lines()] == [
        "x.yaml:8:11: KV907",
        "x.yaml:10:83: KV502",
    ]


def test_a_safetensors_index_of_1e400_bytes(tmp_path: Path) -> None:
    config = {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "max_position_embeddings": 131072, "vocab_size": 128256, "torch_dtype": "bfloat16",
    }  # fmt: skip
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(json.dumps(config))
    (tmp_path / "model" / "model.safetensors.index.json").write_text(
        '{"metadata": {"total_size": 1e400}, "weight_map": {}}'
    )
    outcome = check(tmp_path, f"model: ./model\nmax-model-len: 4096\n{ALSO}")
    assert outcome.code == 1  # the size is unknown, the model is read, the bad setting found
    assert [line.split(" [")[0] for line in outcome.lines()] == [
        "x.yaml:1:1: KV907",
        "x.yaml:3:15: KV502",
    ]


def test_toml_nested_five_thousand_deep(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.kvlint]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "x.yaml").write_text(MODEL)
    outcome = run_kvlint(["check", "--offline", "x.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.code == 2
    assert outcome.lines() == [
        f"kvlint: {tmp_path / 'pyproject.toml'}: invalid TOML: nested too deeply to read"
    ]


def test_a_pyproject_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.kvlint]\ngpu = "H\xe9100"\n')
    (tmp_path / "x.yaml").write_text(MODEL)
    outcome = run_kvlint(["check", "--offline", "x.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.code == 2
    assert outcome.lines() == [
        f"kvlint: {tmp_path / 'pyproject.toml'}:2:9: invalid UTF-8 (byte 0xe9): save the file as "
        "UTF-8"
    ]


def test_the_twin_a_pyproject_without_kvlint_is_not_kvlints(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.other]\nname = "H\xe9"\n')
    (tmp_path / "x.yaml").write_text(MODEL)
    outcome = run_kvlint(["check", "--offline", "--format", "concise", "x.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.code == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_output_file_dev_full(tmp_path: Path) -> None:
    outcome = check(tmp_path, MODEL + ALSO, "--output-file", "/dev/full")
    assert outcome.code == 2
    assert outcome.err.splitlines() == [
        "kvlint: /dev/full: cannot write the report: No space left on device"
    ]


def test_a_closed_output_pipe_keeps_the_verdict(tmp_path: Path) -> None:
    """`kvlint check | head -1`: exit 1 for a finding, as without the pipe (it was 0)."""
    flags = ", ".join(f'"--max-num-seqz{i}"' for i in range(5000))  # far more than a pipe holds
    (tmp_path / "x.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n    - name: vllm\n"
        f"      image: vllm/vllm-openai:v0.11.0\n      args: [{flags}]\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "kvlint", *ARGS, "x.yaml"],
        cwd=tmp_path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1, err
    assert first.startswith(b"x.yaml:") and err == ""


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (
            b"\x00\x01binary",
            "x.yaml:1:1: KV901 [error] binary file (NUL bytes): not a YAML or JSON",
        ),
        (MODEL.encode() + b"max-model-len: [8192\n", "x.yaml:3:1: KV901 [error] invalid YAML: "),
    ],
)
def test_diff_and_explain_on_a_file_they_cannot_read(
    tmp_path: Path, content: bytes, line: str
) -> None:
    (tmp_path / "x.yaml").write_bytes(content)
    diff = run_kvlint(["check", "--offline", "--no-config", "--diff", "x.yaml"], tmp_path)
    assert_well_behaved(diff, concise=False)
    assert diff.code == 2 and diff.out == ""
    assert diff.err.splitlines()[0].startswith(line), diff.err
    explain = run_kvlint(["explain", "KV301", "--offline", "--file", "x.yaml"], tmp_path)
    assert_well_behaved(explain, concise=False)
    assert explain.code == 2
    assert explain.err.splitlines()[0].startswith(line), explain.err


SOLVE = ("solve", "--offline", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "H100")


@pytest.mark.parametrize(
    ("flag", "value", "line"),
    [
        # The search walked every GPU count up to it: 1e14 never ended.
        ("--max-gpus", "100000000000000", "a GPU count of at most 4,096"),
        ("--max-tp", "100000000000000", "a GPU count of at most 4,096"),
        ("--tp", "16385", "a tensor parallel size of at most 16,384"),
        ("--pp", "1025", "a pipeline parallel size of at most 1,024"),
    ],
)
def test_a_solver_search_past_its_bound_is_a_usage_error(
    tmp_path: Path, flag: str, value: str, line: str
) -> None:
    outcome = run_kvlint([*SOLVE, flag, value], tmp_path)
    assert_well_behaved(outcome, concise=False)
    assert outcome.code == 2 and outcome.out == ""
    assert outcome.err.splitlines()[-1] == (
        f"kvlint solve: error: argument {flag}: expected {line}, got '{value}'"
    )


def test_the_solver_bounds_are_the_files_bounds() -> None:
    from kvlint.commands.solve import GPU_COUNT
    from kvlint.commands.solve import PP_SIZE
    from kvlint.commands.solve import TP_SIZE
    from kvlint.deploy.carriers.container import MAX_COUNT
    from kvlint.deploy.flags import MAX_PARALLEL

    assert GPU_COUNT(str(MAX_COUNT)) == MAX_COUNT
    assert TP_SIZE(str(MAX_PARALLEL["tensor_parallel_size"])) > 0
    assert PP_SIZE(str(MAX_PARALLEL["pipeline_parallel_size"])) > 0
    for parse, limit in [
        (GPU_COUNT, MAX_COUNT),
        (TP_SIZE, MAX_PARALLEL["tensor_parallel_size"]),
        (PP_SIZE, MAX_PARALLEL["pipeline_parallel_size"]),
    ]:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(str(limit + 1))


def test_the_twin_the_largest_search_ends(tmp_path: Path) -> None:
    outcome = run_kvlint(
        [*SOLVE, "--max-gpus", "4096", "--max-tp", "4096", "--any-layout"], tmp_path
    )
    assert_well_behaved(outcome, concise=False)
    assert outcome.code == 0, outcome.err


def test_an_unknown_cache_dtype_for_the_solver_is_one_line(tmp_path: Path) -> None:
    """It was `kvlint: internal error: UnknownCacheDtype: ...` (the solver sized the cache with
    it before anything said it was no dtype)."""
    outcome = run_kvlint([*SOLVE, "--kv-cache-dtype", "bogus\x1b[2J"], tmp_path)
    assert_well_behaved(outcome, concise=False)
    assert outcome.code == 2 and outcome.out == ""
    (line,) = outcome.err.splitlines()
    assert line.startswith(
        "kvlint: --kv-cache-dtype: unknown cache dtype 'bogus\\x1b[2J'; known: auto, "
    ), line
