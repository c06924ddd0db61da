"""An engine config file a container mounts from a ConfigMap of the same manifest is read into
that container's deployment, with spans into the ConfigMap."""

from __future__ import annotations

from kvlint.deploy.load import load_text

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
