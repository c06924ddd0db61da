"""``load_path``: I/O failures raise KvlintError; content problems never do."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.deploy.load import load_path
from kvlint.errors import KvlintError


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(KvlintError, match="no such file") as missing:
        load_path(tmp_path / "nope.yaml", display="nope.yaml")
    assert str(missing.value) == "nope.yaml: no such file"
    with pytest.raises(KvlintError, match="is a directory"):
        load_path(tmp_path)


def test_binary_file_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x00\x01\x02")
    result = load_path(path, display="model.bin")
    assert result.deployments == []
    assert [(p.code, p.span.location()) for p in result.problems] == [("KV901", "model.bin:1:1")]


def test_display_path_in_every_span(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("model: m\nmax-num-seqs: 4\n")
    result = load_path(path, display="deploy/c.yaml")
    assert result.path == "deploy/c.yaml"
    (dep,) = result.deployments
    assert dep.path == "deploy/c.yaml"
    assert dep.max_num_seqs is not None
    assert dep.max_num_seqs.span.location() == "deploy/c.yaml:2:15"


def test_json_file(tmp_path: Path) -> None:
    path = tmp_path / "vllm.json"
    path.write_text('{\n\t"model": "m",\n\t"max_model_len": 8192\n}\n')
    (dep,) = load_path(path, display="vllm.json").deployments
    assert dep.max_model_len is not None
    assert (dep.max_model_len.value, dep.max_model_len.span.location()) == (8192, "vllm.json:3:19")


def test_kubectl_list_and_flux_helm_release(tmp_path: Path) -> None:
    listing = tmp_path / "dump.yaml"
    listing.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: a}\n"
        "    spec:\n      template:\n        spec:\n          containers:\n"
        "            - {name: v, image: 'vllm/vllm-openai:v0.11.0', args: [--model, m]}\n"
        "  - apiVersion: v1\n    kind: Service\n    metadata: {name: s}\n"
    )
    (dep,) = load_path(listing, display="dump.yaml").deployments
    assert dep.name == "Deployment/a container v"
    release = tmp_path / "release.yaml"
    release.write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: stack}\n"
        "spec:\n  chart: {spec: {chart: vllm-stack}}\n  values:\n    servingEngineSpec:\n"
        "      modelSpec:\n        - name: llama\n          repository: vllm/vllm-openai\n"
        "          tag: v0.11.0\n          modelURL: meta-llama/Llama-3.1-8B-Instruct\n"
        "          vllmConfig: {maxModelLen: 16384}\n"
    )
    result = load_path(release, display="release.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.max_model_len is not None
    assert dep.max_model_len.span.location() == "release.yaml:13:37"


def test_huge_file_is_refused_not_read(tmp_path: Path) -> None:
    path = tmp_path / "dump.yaml"
    path.write_bytes(b"a: 1\n" * (4 * 2**20))  # 20 MiB
    result = load_path(path, display="dump.yaml")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV901",
            "dump.yaml:1:1",
            "20 MiB is too large for a deployment file (the limit is 16 MiB): not read",
        )
    ]


def test_files_every_repository_holds_are_not_reported(tmp_path: Path) -> None:
    texts = {
        "Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
        "ci.yaml": "name: CI\non: [push]\njobs:\n  test: {runs-on: ubuntu-latest}\n",
        ".pre-commit-config.yaml": "repos:\n  - repo: local\n    hooks: []\n",
        "kustomization.yaml": "resources: [deploy.yaml]\nnamespace: llm\n",
    }
    for name, text in texts.items():
        path = tmp_path / name
        path.write_text(text)
        result = load_path(path, display=name)
        assert (name, result.problems, result.deployments) == (name, [], [])
