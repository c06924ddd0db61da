"""The reporters through the real CLI: `kvlint check --format github|full|sarif` on real files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from testing.cli import run_cli
from testing.shared import REPO
from testing.shared import SARIF_SCHEMA
from testing.shared import shared_file

# Llama 3.1 8B on one H100 under vLLM 0.11: 256 sequences of 32K do not fit (KV301, line 21)
# and a misspelt flag the engine rejects (KV501, line 22).
MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-8b
spec:
  replicas: 1
  selector:
    matchLabels: {app: llama-8b}
  template:
    metadata:
      labels: {app: llama-8b}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - --model=meta-llama/Llama-3.1-8B-Instruct
            - --max-model-len=32768
            - --max-num-seqs=256
            - --gpu-memory-utilisation=0.95
          resources:
            limits:
              nvidia.com/gpu: "1"
"""
CLEAN = MANIFEST.replace("--max-num-seqs=256", "--max-num-seqs=8").replace(
    "            - --gpu-memory-utilisation=0.95\n", ""
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "llama.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "deploy" / "clean.yaml").write_text(CLEAN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def test_github_format_one_command_per_finding(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = run_cli(["check", "--no-config", "--format", "github", "deploy/llama.yaml"], capsys)
    assert done.code == 1
    commands = done.out.splitlines()
    # "::<level> <properties>::<message>": the message escapes nothing but %, CR and LF.
    assert [c.split("::")[1] for c in commands] == [
        "warning file=deploy/llama.yaml,line=21,col=30,endColumn=33,title=KV301",
        "error file=deploy/llama.yaml,line=22,col=15,endColumn=44,title=KV501",
    ]
    assert commands[0].split("::")[2].startswith("`max_num_seqs` 256 needs ")
    assert commands[1].split("::")[2] == (
        "unknown flag `--gpu-memory-utilisation` for vllm; did you mean `--gpu-memory-utilization`?"
    )


def test_github_format_is_chosen_under_github_actions(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    done = run_cli(["check", "--no-config", "deploy"], capsys)
    assert done.code == 1
    assert [line[:40] for line in done.out.splitlines()] == [
        "::warning file=deploy/llama.yaml,line=21",
        "::error file=deploy/llama.yaml,line=22,c",
    ]


def test_full_format_frames_the_value(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(["check", "--no-config", "--format", "full", "deploy/llama.yaml"], capsys)
    assert done.code == 1
    assert "\x1b[" not in done.out  # not a terminal, --color auto
    # The error first, though it is on the later line: findings go by severity, then position.
    warning = done.out.index("deploy/llama.yaml:21:30: KV301 [warning] `max_num_seqs` 256 ")
    first, second = done.out[:warning], done.out[warning:]
    assert first == (
        "deploy/llama.yaml:22:15: KV501 [error] unknown flag `--gpu-memory-utilisation` for "
        "vllm; did you mean `--gpu-memory-utilization`?\n"
        "   |\n"
        "21 |             - --max-num-seqs=256\n"
        "22 |             - --gpu-memory-utilisation=0.95\n"
        "   |               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ KV501\n"
        "23 |           resources:\n"
        "   |\n"
        "\n"
    )
    assert (
        "21 |             - --max-num-seqs=256\n   |                              ^^^ KV301\n"
        in second
    )
    assert "  = fix [~]: Lower `max_num_seqs` to " in second
    assert second.endswith("\nFound 1 error, 1 warning in 1 file, 1 deployment.\n")


def test_full_format_in_colour_when_asked(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--no-config", "--format", "full", "deploy/llama.yaml"]
    assert "\x1b[1;31mKV501\x1b[0m" in run_cli([*argv, "--color", "always"], capsys).out
    assert "\x1b[" not in run_cli([*argv, "--color", "never"], capsys).out


def test_sarif_format_is_valid_with_findings_and_without(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = json.loads(shared_file(SARIF_SCHEMA).read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    found = run_cli(["check", "--no-config", "--format", "sarif", "deploy/llama.yaml"], capsys)
    clean = run_cli(["check", "--no-config", "--format", "sarif", "deploy/clean.yaml"], capsys)
    assert (found.code, clean.code) == (1, 0)
    found_log, clean_log = json.loads(found.out), json.loads(clean.out)
    validator.validate(found_log)
    validator.validate(clean_log)
    results = found_log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("KV301", "warning"),
        ("KV501", "error"),
    ]
    assert clean_log["runs"][0]["results"] == []
    rules = found_log["runs"][0]["tool"]["driver"]["rules"]
    # Every registered rule is described, so code scanning can show any rule's help.
    assert {"KV301", "KV501", "KV901"} <= {rule["id"] for rule in rules}
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    kv301 = rules[results[0]["ruleIndex"]]
    assert kv301["name"] == "max-num-seqs-over-kv-budget"
    assert kv301["defaultConfiguration"] == {"level": "warning"}
    # The rule's section of docs/rules.md, at the anchor GitHub gives its heading.
    assert kv301["helpUri"] == (
        "https://github.com/kvcache-lint/kvlint/blob/main/docs/rules.md"
        "#kv301-max-num-seqs-over-kv-budget"
    )
    assert "## KV301 max-num-seqs-over-kv-budget\n" in (REPO / "docs" / "rules.md").read_text()
    assert kv301["help"]["markdown"].startswith("## What it does\n")
