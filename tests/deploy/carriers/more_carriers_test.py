"""Workload kinds and chart shapes beyond the fixtures: each finds its engine and settings."""

from __future__ import annotations

import pytest

from kvlint.deploy.load import load_text

POD = """\
      containers:
        - name: server
          image: vllm/vllm-openai:v0.11.0
          command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-num-seqs, "32"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("kind", "head", "indent"),
    [
        ("Deployment", "spec:\n  template:\n    spec:\n", 0),
        ("DaemonSet", "spec:\n  template:\n    spec:\n", 0),
        ("Job", "spec:\n  template:\n    spec:\n", 0),
        ("CronJob", "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n", 4),
        ("Pod", "spec:\n", -4),
    ],
)
def test_pod_template_kinds(kind: str, head: str, indent: int) -> None:
    pod = "".join(
        (" " * indent + line if indent >= 0 else line[-indent:]) + "\n" for line in POD.splitlines()
    )
    text = f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: q}}\n{head}{pod}"
    result = load_text(text, display="k.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.name == f"{kind}/q container server"
    assert dep.model is not None and dep.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 32
    assert dep.gpu_count is not None and dep.gpu_count.value == 1


def test_serving_runtime_containers() -> None:
    text = (
        "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {name: vllm-rt}\n"
        "spec:\n  containers:\n    - name: kserve-container\n"
        "      image: vllm/vllm-openai:v0.9.2\n"
        "      args: [--port=8080, --model=/mnt/models, --max-model-len=4096]\n"
    )
    (dep,) = load_text(text, display="rt.yaml").deployments
    assert dep.engine_version is not None and dep.engine_version.value == "0.9.2"
    assert dep.max_model_len is not None and dep.max_model_len.value == 4096


def test_dynamo_worker_services() -> None:
    text = (
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: agg}\n"
        "spec:\n  services:\n    Frontend:\n      componentType: frontend\n"
        "      extraPodSpec: {mainContainer: {image: nvcr.io/nvidia/ai-dynamo/vllm-runtime}}\n"
        "    VllmWorker:\n      componentType: worker\n      resources: {limits: {gpu: '1'}}\n"
        "      extraPodSpec:\n        mainContainer:\n"
        "          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0\n"
        "          command: [python3, -m, dynamo.vllm]\n"
        "          args: [--model, Qwen/Qwen3-0.6B, --is-prefill-worker, --connector, nixl, "
        "--max-model-len, '16384']\n"
    )
    result = load_text(text, display="d.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.name == "DynamoGraphDeployment/agg service VllmWorker"
    assert dep.max_model_len is not None and dep.max_model_len.value == 16384
    assert dep.gpu_count is not None and dep.gpu_count.value == 1


def test_llm_d_values_gpu_count_from_parallelism() -> None:
    text = (
        "modelArtifacts:\n  uri: hf://Qwen/Qwen3-32B\n  name: Qwen/Qwen3-32B\n"
        "decode:\n  create: true\n  parallelism: {tensor: 4, dataLocal: 2}\n"
        "  containers:\n    - name: vllm\n      image: ghcr.io/llm-d/llm-d-cuda:v0.5.0\n"
        "      modelCommand: vllmServe\n      args: [--max-model-len=32768]\n"
        "prefill:\n  create: false\n"
    )
    (dep,) = load_text(text, display="v.yaml").deployments
    assert dep.model is not None and dep.model.value == "Qwen/Qwen3-32B"
    assert dep.tensor_parallel_size is not None and dep.tensor_parallel_size.value == 4
    assert dep.gpu_count is not None and dep.gpu_count.value == 8
    assert dep.max_model_len is not None and dep.max_model_len.value == 32768


def test_ollama_chart_values() -> None:
    text = (
        "ollama:\n  gpu:\n    enabled: true\n    type: nvidia\n    number: 2\n"
        "  models:\n    pull: [llama3.1:8b]\n    run: [llama3.1:8b]\n"
        "extraEnv:\n  - name: OLLAMA_NUM_PARALLEL\n    value: '8'\n"
    )
    (dep,) = load_text(text, display="o.yaml").deployments
    assert (dep.engine.value, dep.model.value if dep.model else None) == ("ollama", "llama3.1:8b")
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == 8
    assert dep.gpu_count is not None and dep.gpu_count.value == 2


def test_vllm_example_chart_values() -> None:
    text = (
        "image:\n  repository: vllm/vllm-openai\n  tag: v0.10.1\n"
        '  command: ["vllm", "serve", "/data/", "--max-model-len", "8192"]\n'
        "resources:\n  limits:\n    nvidia.com/gpu: 1\n"
        "gpuModels:\n  - NVIDIA-L40S\n"
    )
    (dep,) = load_text(text, display="values.yaml").deployments
    assert dep.engine_version is not None and dep.engine_version.value == "0.10.1"
    assert dep.max_model_len is not None and dep.max_model_len.value == 8192
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-L40S"


def test_application_config_is_not_an_engine_config() -> None:
    text = "host: 0.0.0.0\nport: 8080\nmodel: gpt-4\ndatabase_url: postgres://db\n"
    result = load_text(text, display="app.yaml")
    assert result.deployments == []
    assert [p.code for p in result.problems] == ["KV905"]
