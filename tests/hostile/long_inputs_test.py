"""The inputs that made kvlint super-linear (issue 15, item 4), at the attack's own sizes, through
the real CLI under the memory cap and the hang guard (``runner.py``): each ends at once with its
answer pinned. A 4.4 KB GPU node label took 283 s, 80 KB lines 7 to 53 s, a 2.4 MB ``sh -c``
script of escapes 21 s. (The growth of each path at ten times these sizes: scaling_test.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import run_kvlint

ARGS = ("check", "--offline", "--no-config", "--format", "concise")
MODEL = "model: meta-llama/Llama-3.1-8B-Instruct\n"
K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: hostile}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: LABEL
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          ARGS
"""
PLAN = """\
kvlint: plan/v1
name: p
engine: vllm
model: meta-llama/Llama-3.1-8B-Instruct
gpu: H100-80GB
gpus: 1
settings:
  max-model-len: 8192
claims:
  kv_per_token: "VALUE"
"""
SCRIPT = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 4096 --bogus-flag "


def _k8s(label: str, args: str = 'args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]') -> str:
    return K8S.replace("LABEL", label).replace("ARGS", args)


# name -> (the file's text, exit code, the first output line's prefix)
CASES: dict[str, tuple[Callable[[], str], int, str]] = {
    "gpu-label-4kb.yaml": (
        lambda: _k8s('"' + "1 " * 2200 + '"'),
        1,
        "gpu-label-4kb.yaml:8:33: KV903 [warning] unknown GPU `1 1 1 1 ",
    ),
    "gpu-label-size-word-4kb.yaml": (
        lambda: _k8s('"' + "h100 " * 880 + '7gb"'),
        1,
        "gpu-label-size-word-4kb.yaml:8:33: KV903 [warning] unknown GPU `h100 h100 ",
    ),
    "trailing-tabs-80kb.yaml": (
        lambda: MODEL + "max-model-len: 4096" + " \t" * 40_000 + "x\n",
        2,
        "trailing-tabs-80kb.yaml:2:21: KV901 [error] a TAB character where YAML allows only spaces",
    ),
    "placeholder-80kb.yaml": (
        lambda: MODEL + 'max-model-len: b: "' + "{{" * 40_000 + '"\n',
        2,
        "placeholder-80kb.yaml:2:17: KV901 [error] invalid YAML: mapping values are not allowed "
        "here",
    ),
    "size-80kb.yaml": (
        lambda: PLAN.replace("VALUE", "1" + " " * 80_000 + "x!"),
        2,
        "size-80kb.yaml:10:17: KV502 [error] `claims.kv_per_token`: expected a size such as "
        "'320 KiB' or '2.62 GB', got '1 ",
    ),
    "unresolved-80kb.yaml": (
        lambda: MODEL + "max-model-len: '" + "{" * 80_000 + "'\n",
        1,
        "unresolved-80kb.yaml:1:1: KV907 [info] the files do not give the GPU type",
    ),
    "sh-c-escapes-2mb.yaml": (
        lambda: _k8s(
            "NVIDIA-H100-80GB-HBM3",
            'command: ["sh", "-c", "' + SCRIPT + "\\u00e9" * 400_000 + '"]',
        ),
        1,
        "sh-c-escapes-2mb.yaml:12:99: KV501 [error] unknown flag `--bogus-flag` for vllm",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_long_input_ends_at_once(tmp_path: Path, name: str) -> None:
    make, code, first = CASES[name]
    (tmp_path / name).write_text(make())
    outcome = run_kvlint([*ARGS, name], tmp_path)
    assert_well_behaved(outcome)
    assert outcome.lines()[0].startswith(first), outcome.lines()[0][:300]
    assert outcome.code == code, outcome
    # One line each, however long the value quoted: cut in its middle (finding.message_text).
    assert all(len(line) < 2_200 for line in outcome.lines()), [len(s) for s in outcome.lines()]


def test_a_tree_of_nineteen_hundred_nested_folders_ends_at_once(tmp_path: Path) -> None:
    """A repository whose one deployment sits 1,900 folders deep (3.8 KB of path, under the
    system's 4,096): the walk was a RecursionError (an internal error, exit 2) without a
    config, and ran for more than ten minutes looking for each folder's config and .gitignore
    files up every parent."""
    from tests.hostile.scaling_test import _nested
    from tests.hostile.scaling_test import remove_tree

    try:
        root = _nested(tmp_path / "repo", 1_900)
        outcome = run_kvlint(["check", "--offline", "--format", "concise", "."], root)
    finally:
        remove_tree(tmp_path / "repo")
    assert_well_behaved(outcome)
    assert outcome.code == 0, outcome
    (line,) = outcome.lines()
    assert line.startswith("d/d/d/") and line.endswith(
        "/x.yaml:1:1: KV907 [info] the files do not give the GPU type: the checks that need it "
        "did not run (name the GPU with `--gpu` or `gpu` in the kvlint config)"
    ), line[-300:]
