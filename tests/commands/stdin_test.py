"""``kvlint check -``: rendered output on stdin (``helm template``, ``kustomize build``), with
``--stdin-filename`` for positions, config lookup and reports; Helm templates in a walk."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from testing.cli import run_cli

# What `helm template` prints for a vLLM chart: one Deployment, 512 sequences of 32K on one H100.
RENDERED = """\
---
# Source: chat/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - --model=meta-llama/Llama-3.1-8B-Instruct
            - --max-model-len=32768
            - --max-num-seqs=512
          resources:
            limits:
              nvidia.com/gpu: 1
"""


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    return tmp_path


def stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))


def test_stdin_without_a_filename_is_shown_as_dash(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin(monkeypatch, RENDERED)
    result = run_cli(["check", "-"], capsys)
    assert result.code == 1
    (line,) = result.out.splitlines()
    assert line.startswith("-:18:30: KV301 [warning] [~] `max_num_seqs` 512 needs ")


def test_stdin_filename_gives_positions_config_and_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "charts" / "chat"
    chart.mkdir(parents=True)
    (chart / ".kvlint.yaml").write_text("severity: {KV301: error}\n", encoding="utf-8")
    stdin(monkeypatch, RENDERED)
    argv = ["check", "-", "--stdin-filename", "charts/chat/rendered.yaml", "--format", "full"]
    result = run_cli(argv, capsys)
    assert result.code == 1
    # The chart's own config applies (KV301 raised to error) and the frame shows the text read
    # from stdin, though no such file exists on disk.
    assert result.out.startswith(
        "charts/chat/rendered.yaml:18:30: KV301 [error] `max_num_seqs` 512 needs "
    )
    assert "18 |             - --max-num-seqs=512\n" in result.out
    stdin(monkeypatch, RENDERED)
    report = json.loads(
        run_cli(["check", "-", "--stdin-filename", "x.yaml", "--format", "json"], capsys).out
    )
    assert [f["path"] for f in report["findings"]] == ["x.yaml"]
    assert report["summary"]["files"] == 1


def test_kustomize_output_of_several_documents(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    second = RENDERED.replace("name: chat", "name: chat-2").replace("512", "8")
    stdin(monkeypatch, RENDERED + second)
    result = run_cli(["check", "-", "--format", "json"], capsys)
    report = json.loads(result.out)
    assert report["summary"]["deployments"] == 2
    assert [f["code"] for f in report["findings"]] == ["KV301"]


def test_stdin_is_checked_alone_and_never_fixed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["check", "-", "other.yaml"], ["check", "-", "--fix"], ["check", "-", "--diff"]):
        stdin(monkeypatch, RENDERED)
        result = run_cli(argv, capsys)
        assert result.code == 2
        assert result.err == "kvlint: `-` (stdin) is checked alone, and without --fix or --diff\n"


def test_empty_and_unreadable_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin(monkeypatch, "")
    assert run_cli(["check", "-"], capsys).code == 0
    stdin(monkeypatch, "a: [1\n")
    result = run_cli(["check", "-", "--stdin-filename", "bad.yaml"], capsys)
    assert result.code == 2
    assert result.out.startswith("bad.yaml:")
    assert ": KV901 [error] " in result.out


def test_a_helm_template_in_a_walk_is_one_info_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chat\nversion: 0.1.0\n")
    template = RENDERED.replace("name: chat", "name: {{ .Release.Name }}").replace(
        "--max-num-seqs=512", "--max-num-seqs={{ .Values.maxNumSeqs }}"
    )
    (chart / "templates" / "deployment.yaml").write_text(template)
    (chart / "templates" / "_helpers.yaml").write_text('{{- define "x" -}}\n{{- end -}}\n')
    (chart / "files").mkdir()  # `.Files.Get "files/patch.yaml" | tpl`: a template too
    (chart / "files" / "patch.yaml").write_text(
        "metadata:\n  namespace: {{ .Release.Namespace }}\n"
    )
    (chart / "files" / "plain.yaml").write_text("kind: ConfigMap\napiVersion: v1\n")
    loose = tmp_path / "ops" / "templates"
    loose.mkdir(parents=True)
    (loose / "job.yaml").write_text("{{ if .Values.on }}\nkind: Job\n{{ end }}\n")
    result = run_cli(["check", "."], capsys)
    assert result.code == 0  # info findings, not exit 2
    assert result.out.splitlines() == [
        "chart/files/patch.yaml:1:1: KV905 [info] a Helm template of the chart `chart`: not "
        "read; check what it renders (`helm template chart | kvlint check -`)",
        "chart/templates/_helpers.yaml:1:1: KV905 [info] a Helm template of the chart `chart`: "
        "not read; check what it renders (`helm template chart | kvlint check -`)",
        "chart/templates/deployment.yaml:1:1: KV905 [info] a Helm template of the chart "
        "`chart`: not read; check what it renders (`helm template chart | kvlint check -`)",
        "ops/templates/job.yaml:1:1: KV905 [info] a Helm template of the chart `ops`: not "
        "read; check what it renders (`helm template ops | kvlint check -`)",
    ]
