"""Fixes keep what they do not own (issue 15, item 8): a value's YAML tag and anchor stay, an alias
is fixed where it is written (this use only), and a value an alias shares is not changed under
it. The real CLI as a child."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import run_kvlint

FIX = ("check", "--offline", "--no-config", "--gpu", "H100", "--fix", "--unsafe-fixes")
VLLM = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 32768\nmax-num-seqs: {}\n"
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: x}}
spec:
  containers:
    - name: a
      image: vllm/vllm-openai:v0.11.0
      args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32768",
             "--max-num-seqs", &seqs "512"]
    - name: b
      image: vllm/vllm-openai:v0.11.0
      args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "{}",
             "--max-num-seqs", *seqs]
"""


@pytest.mark.parametrize(
    ("value", "fixed"),
    [("&seqs 512", "&seqs 14"), ("!!int 512", "!!int 14"), ("&seqs !!int 512", "&seqs !!int 14")],
)
def test_a_fix_keeps_the_tag_and_the_anchor(tmp_path: Path, value: str, fixed: str) -> None:
    (tmp_path / "x.yaml").write_text(VLLM.format(value))
    outcome = run_kvlint([*FIX, "x.yaml"], tmp_path)
    assert_well_behaved(outcome, concise=False)
    assert (tmp_path / "x.yaml").read_text() == VLLM.format(fixed)


def test_an_alias_is_fixed_where_it_is_written(tmp_path: Path) -> None:
    """Both containers are over budget: the alias becomes its own value first (round one),
    then the anchored value, no longer shared, is fixed for its own container."""
    (tmp_path / "pod.yaml").write_text(POD.format(8192))
    outcome = run_kvlint([*FIX, "pod.yaml"], tmp_path)
    assert_well_behaved(outcome, concise=False)
    text = (tmp_path / "pod.yaml").read_text()
    assert '"--max-num-seqs", &seqs "13"]' in text
    # the second container's own admitted count (what the pool holds at 8,192 tokens)
    assert re.search(r'"--max-num-seqs", "(5\d)"]', text), text


def test_a_shared_value_is_not_changed_under_its_alias(tmp_path: Path) -> None:
    """Only the first container is over budget; the second, sharing the value through the
    alias, is not: fixing the anchored value would change the second container too."""
    (tmp_path / "pod.yaml").write_text(POD.format(512))
    outcome = run_kvlint([*FIX, "pod.yaml"], tmp_path)
    assert_well_behaved(outcome, concise=False)
    assert (tmp_path / "pod.yaml").read_text() == POD.format(512)
    assert outcome.err.splitlines()[0] == (
        "kvlint: pod.yaml:9:38: KV301 fix not applied: the value is anchored (`&seqs`) and an "
        "alias uses it: fixing it would change that use too"
    )


@pytest.mark.parametrize(
    ("value", "line"),
    [
        # YAML 1.1's octal, as PyYAML's safe_load (vLLM's --config reader) reads it: 330.
        ("0512", "x.yaml:3:15: KV301 [warning] [~] `max_num_seqs` 330 needs 1.29 TiB of KV cache"),
        # YAML 1.2's octal is a string to PyYAML, so to vLLM: no integer.
        ("0o17", "x.yaml:3:15: KV502 [error] `max-num-seqs` expects an integer, got `0o17`"),
        # A reader error at its character, not 1:1.
        ("5\x0112", "x.yaml:3:16: KV901 [error] invalid YAML: control characters are not allowed"),
    ],
)
def test_a_value_reads_as_the_engines_yaml_reader_reads_it(
    tmp_path: Path, value: str, line: str
) -> None:
    (tmp_path / "x.yaml").write_text(VLLM.format(value))
    check = ("check", "--offline", "--no-config", "--gpu", "H100", "--format", "concise")
    outcome = run_kvlint([*check, "x.yaml"], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.lines()[0].startswith(line), outcome.lines()
