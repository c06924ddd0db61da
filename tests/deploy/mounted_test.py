"""An engine config file a container mounts from a ConfigMap of the same manifest is read into
that container's deployment, with spans into the ConfigMap."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.config import Settings
from kvlint.config import load_config
from kvlint.config import resolve
from kvlint.deploy.load import load_text
from kvlint.linter import lint_paths
from kvlint.registry import default_registry

CONTEXT_CODE = "KV402"  # context-beyond-max-positions

CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: trtllm-extra
data:
  extra.yaml: |
    kv_cache_config:
      free_gpu_memory_fraction: 0.85
      dtype: fp8
    max_batch_size: 512
"""


def _manifest(path: str, mount: str) -> str:
    return (
        CONFIG_MAP
        + f"""\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
        - name: trtllm
          image: nvcr.io/nvidia/tensorrt-llm/release:1.0.0
          command: [trtllm-serve]
          args: [meta-llama/Llama-3.1-8B-Instruct, --max_batch_size, "64",
                 --extra_llm_api_options, {path}]
          volumeMounts:
{mount}
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
      volumes:
        - name: extra
          configMap:
            name: trtllm-extra
"""
    )


DIRECTORY = """\
            - name: extra
              mountPath: /etc/trtllm"""


def test_a_file_of_a_mounted_config_map_is_read_with_its_spans() -> None:
    result = load_text(_manifest("/etc/trtllm/extra.yaml", DIRECTORY), display="deploy.yaml")
    (dep,) = result.deployments  # the ConfigMap's file is not a deployment of its own too
    assert dep.carrier == "kubernetes"
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 512  # the file wins
    assert (dep.max_num_seqs.span.line, dep.max_num_seqs.span.column) == (10, 21)
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.85
    assert (dep.memory_fraction.span.line, dep.memory_fraction.span.column) == (8, 33)
    assert dep.kv_cache_dtype is not None and dep.kv_cache_dtype.value == "fp8"


def test_a_sub_path_mount_puts_one_key_at_the_mount_path() -> None:
    mount = """\
            - name: extra
              mountPath: /config/llm-api.yaml
              subPath: extra.yaml"""
    result = load_text(_manifest("/config/llm-api.yaml", mount), display="deploy.yaml")
    (dep,) = result.deployments
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 512


def test_a_path_the_mount_does_not_cover_keeps_the_command_line() -> None:
    result = load_text(_manifest("/elsewhere/extra.yaml", DIRECTORY), display="deploy.yaml")
    container = [d for d in result.deployments if d.carrier == "kubernetes"]
    assert len(container) == 1
    assert container[0].max_num_seqs is not None and container[0].max_num_seqs.value == 64
    # Nothing reads the ConfigMap's file through a flag: it stays a config of its own.
    assert [d.carrier for d in result.deployments].count("engine_yaml") == 1


def test_items_project_a_key_at_their_own_path() -> None:
    text = _manifest("/etc/trtllm/llm-api.yaml", DIRECTORY).replace(
        "            name: trtllm-extra\n",
        "            name: trtllm-extra\n"
        "            items:\n"
        "              - {key: extra.yaml, path: llm-api.yaml}\n",
    )
    (dep,) = load_text(text, display="deploy.yaml").deployments
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 512


def test_a_dynamo_workers_extra_engine_args_from_a_config_map() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: agg-config
data:
  agg.yaml: |
    max_batch_size: 256
    kv_cache_config:
      free_gpu_memory_fraction: 0.85
---
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: trtllm-agg}
spec:
  services:
    TRTLLMWorker:
      componentType: worker
      resources: {limits: {gpu: "1"}}
      extraPodSpec:
        volumes:
          - name: engine-config
            configMap: {name: agg-config}
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.6.0
          command: [/bin/sh, -c]
          args:
            - >-
              python3 -m dynamo.trtllm --model-path Qwen/Qwen3-8B
              --extra-engine-args /engine/agg.yaml
          volumeMounts:
            - {name: engine-config, mountPath: /engine}
"""
    (dep,) = load_text(text, display="dgd.yaml").deployments
    assert dep.carrier == "dynamo"
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 256
    assert dep.max_num_seqs.span.line == 7
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.85


# vLLM's --config: the file's keys go into argv before the command line's flags, so a flag on
# the command line wins (the opposite layering of TensorRT-LLM's options file above).
VLLM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: vllm-config
data:
  config.yaml: |
    model: meta-llama/Llama-3.1-8B-Instruct
    max-model-len: {length}
    max-num-seqs: 16
    gpu-memory-utilization: 0.85
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [{args}]
          volumeMounts:
            - {{name: cfg, mountPath: /etc/vllm}}
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
      volumes:
        - name: cfg
          configMap: {{name: vllm-config}}
"""


def _vllm(args: str, length: int = 8192) -> str:
    return VLLM.format(args=args, length=length)


def test_a_mounted_vllm_config_is_read_with_its_spans() -> None:
    text = _vllm('"--config", /etc/vllm/config.yaml')
    (dep,) = load_text(text, display="deploy.yaml").deployments
    assert dep.carrier == "kubernetes"  # the ConfigMap's file is not a deployment of its own
    assert dep.model is not None and dep.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert (dep.model.span.line, dep.model.span.column) == (7, 12)
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192
    assert (dep.max_model_len.span.line, dep.max_model_len.span.column) == (8, 20)
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.85
    assert dep.memory_fraction.span.line == 10


def test_a_vllm_flag_on_the_command_line_wins_over_the_file() -> None:
    text = _vllm('"--config", /etc/vllm/config.yaml, "--max-num-seqs", "64"')
    (dep,) = load_text(text, display="deploy.yaml").deployments
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 64  # not the file's 16
    assert dep.max_num_seqs.span.line == 22  # the command line's value, where it is written
    # A flag given before --config wins as well: the file goes in ahead of every flag.
    text = _vllm('"--max-num-seqs", "32", "--config", /etc/vllm/config.yaml')
    (dep,) = load_text(text, display="deploy.yaml").deployments
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 32
    # What the command line leaves alone keeps the file's value and span.
    assert dep.max_model_len is not None and dep.max_model_len.span.line == 8


def test_a_positional_model_wins_over_the_files_model() -> None:
    text = _vllm('serve, Qwen/Qwen3-8B, "--config", /etc/vllm/config.yaml').replace(
        "image: vllm/vllm-openai:v0.11.0",
        "image: vllm/vllm-openai:v0.11.0\n          command: [vllm]",
    )
    (dep,) = load_text(text, display="deploy.yaml").deployments
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.model.span.line == 23
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192


def test_without_the_mount_the_vllm_config_stays_a_deployment_of_its_own() -> None:
    text = _vllm('"--config", /opt/other/config.yaml, "--max-num-seqs", "64"')
    deps = load_text(text, display="deploy.yaml").deployments
    assert sorted(d.carrier for d in deps) == ["engine_yaml", "kubernetes"]
    (container,) = [d for d in deps if d.carrier == "kubernetes"]
    assert container.max_model_len is None


def test_sglang_config_is_layered_under_its_command_line() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: sglang-config}
data:
  server.yaml: |
    model-path: Qwen/Qwen3-8B
    context-length: 16384
    mem-fraction-static: 0.8
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sglang}
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.2
          command: [python3, -m, sglang.launch_server]
          args: [--config, /cfg/server.yaml, --mem-fraction-static, "0.7"]
          volumeMounts:
            - {name: cfg, mountPath: /cfg}
          resources: {limits: {nvidia.com/gpu: 1}}
      volumes:
        - {name: cfg, configMap: {name: sglang-config}}
"""
    (dep,) = load_text(text, display="deploy.yaml").deployments
    assert dep.engine is not None and dep.engine.value == "sglang"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-8B"
    assert dep.max_model_len is not None and dep.max_model_len.value == 16384
    assert dep.max_model_len.span.line == 7
    assert dep.memory_fraction is not None and dep.memory_fraction.value == 0.7
    assert dep.memory_fraction.span.line == 20


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    return resolve(load_config(None), default_registry(), offline=True)


def _context_findings(path: Path, settings: Settings) -> list[tuple[int, int]]:
    result = lint_paths([str(path)], settings)
    return [(f.span.line, f.span.column) for f in result.findings if f.code == CONTEXT_CODE]


def test_a_rule_fires_on_a_value_from_the_mounted_file(tmp_path: Path, offline: Settings) -> None:
    # 262,144 tokens is beyond Llama 3.1's 131,072 positions: reported at the ConfigMap's line.
    path = tmp_path / "deploy.yaml"
    path.write_text(_vllm('"--config", /etc/vllm/config.yaml', length=262144))
    assert _context_findings(path, offline) == [(8, 20)]
    # The same value overridden on the command line is not what vLLM runs with.
    path.write_text(
        _vllm('"--config", /etc/vllm/config.yaml, "--max-model-len", "8192"', length=262144)
    )
    assert _context_findings(path, offline) == []


def _notes(text: str) -> list[tuple[int, str]]:
    problems = load_text(text, display="deploy.yaml").problems
    return [(p.span.line, p.message) for p in problems if "not checked" in p.message]


def test_a_config_map_in_another_file_is_said_not_checked() -> None:
    deployment = _vllm('"--config", /etc/vllm/config.yaml').partition("---\n")[2]
    ((line, message),) = _notes(deployment)
    assert line == 11  # the path, in the args
    assert "the key `config.yaml` of the ConfigMap `vllm-config`, which is not in this file" in (
        message
    )


def test_a_config_file_no_config_map_provides_is_said_not_checked() -> None:
    ((line, message),) = _notes(_vllm('"--config", /app/config.yaml'))
    assert line == 22
    assert "`--config /app/config.yaml` reads a file in the container" in message
    # A key the ConfigMap of this file does not hold as YAML.
    text = _vllm('"--config", /etc/vllm/other.yaml')
    ((_, message),) = _notes(text)
    assert "the key `other.yaml` of the ConfigMap `vllm-config`, which holds no such" in message


def test_a_mounted_or_run_time_config_path_is_not_said() -> None:
    assert _notes(_vllm('"--config", /etc/vllm/config.yaml')) == []
    assert _notes(_vllm('"--config", "$(CONFIG_PATH)"')) == []
