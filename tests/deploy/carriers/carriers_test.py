"""Compose, Helm values, KubeAI, KServe, Ray: the settings each carries, with their spans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvlint.deploy.load import load_path
from kvlint.deploy.load import load_text
from kvlint.deployment import Deployment

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "deployments"


def _settings(dep: Deployment) -> dict[str, tuple[Any, int, int]]:
    return {k: (v.value, v.span.line, v.span.column) for k, v in dep.settings.items()}


def _one(name: str) -> Deployment:
    result = load_path(FIXTURES / name, display=name)
    assert result.problems == []
    (dep,) = result.deployments
    return dep


def test_production_stack_values() -> None:
    dep = _one("production-stack-values.yaml")
    assert (dep.carrier, dep.name) == ("helm", "servingEngineSpec.modelSpec llama70b")
    assert dep.engine_version is not None and dep.engine_version.value == "0.11.0"
    assert _settings(dep) == {
        "model": ("meta-llama/Llama-3.1-70B-Instruct", 8, 17),
        "max-model-len": (65536, 15, 22),
        "tensor-parallel-size": (4, 16, 29),
        "gpu-memory-utilization": (0.92, 17, 31),
        "max-num-seqs": (64, 18, 21),
        "dtype": ("bfloat16", 19, 16),
        "kv-cache-dtype": ("fp8", 21, 41),
        "max-num-batched-tokens": (16000, 21, 74),
    }
    assert dep.gpu_count is not None and dep.gpu_count.value == 4
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-H100-80GB-HBM3"
    assert "VLLM_USE_V1" not in dep.env  # no `v0: "1"`: the V1 engine


def test_production_stack_v0_switch() -> None:
    text = (
        "servingEngineSpec:\n  modelSpec:\n    - name: q\n      repository: vllm/vllm-openai\n"
        "      tag: v0.8.5\n      modelURL: Qwen/Qwen2.5-14B-Instruct\n"
        '      vllmConfig: {v0: "1", maxModelLen: 8192}\n'
    )
    (dep,) = load_text(text, display="v.yaml").deployments
    assert dep.env["VLLM_USE_V1"].value == "0"
    assert dep.env["VLLM_USE_V1"].span.location() == "v.yaml:7:24"


def test_production_stack_what_the_chart_does_not_deploy() -> None:
    """The chart's own values.yaml ships an example model spec with `enabled: false` ("not
    deployed by default"): kvlint read it and reported KV306 on an example nothing runs. Its
    tests share one GPU between two pods with `requestGPU: 0.5`: the chart requests
    `int requestGPU` GPUs (none), which kvlint called a KV502 error "must be a whole number";
    it is a warning that says what the chart does."""
    spec = (
        "servingEngineSpec:\n  modelSpec:\n    - name: q\n      repository: vllm/vllm-openai\n"
        "      tag: v0.8.5\n      modelURL: Qwen/Qwen2.5-14B-Instruct\n"
        "      requestGPU: {gpus}\n{extra}"
        "      vllmConfig: {{tensorParallelSize: 2, gpuMemoryUtilization: 0.4}}\n"
    )
    disabled = load_text(spec.format(gpus=1, extra="      enabled: false\n"), display="v.yaml")
    assert (disabled.deployments, disabled.problems) == ([], [])
    engine_off = "servingEngineSpec:\n  enableEngine: false\n" + spec.format(gpus=1, extra="")[19:]
    assert load_text(engine_off, display="v.yaml").deployments == []
    shared = load_text(spec.format(gpus=0.5, extra=""), display="v.yaml")
    assert [(p.code, p.severity.name, p.message) for p in shared.problems] == [
        (
            "KV502",
            "WARNING",
            "`requestGPU` 0.5 requests no GPU: the chart renders `int requestGPU` of them (0), "
            "so the pod is scheduled without one and sees only what the node's container "
            "runtime exposes",
        )
    ]
    (dep,) = shared.deployments
    assert dep.gpu_count is None  # no GPU resource requested
    wrong = load_text(spec.format(gpus=1.5, extra=""), display="v.yaml")
    assert [(p.code, p.span.location()) for p in wrong.problems] == [("KV502", "v.yaml:7:19")]
    (dep,) = load_text(
        spec.format(gpus=2, extra="      enabled: true\n"), display="v.yaml"
    ).deployments
    assert dep.gpu_count is not None and dep.gpu_count.value == 2


def test_an_empty_chart_value_is_unset() -> None:
    """OPEA's TGI chart ships `MAX_INPUT_LENGTH: ""` and renders it only `{{- if
    .Values.MAX_INPUT_LENGTH }}`: an empty value is unset, not a KV502 "expects an integer"."""
    text = (
        "image: {repository: ghcr.io/huggingface/text-generation-inference, tag: '2.4.1'}\n"
        "LLM_MODEL_ID: Intel/neural-chat-7b-v3-3\nMAX_INPUT_LENGTH: ''\nMAX_TOTAL_TOKENS: '4096'\n"
    )
    result = load_text(text, display="values.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert "max-input-length" not in dep.settings
    assert dep.settings["max-total-tokens"].value == 4096


def test_kubeai_model() -> None:
    dep = _one("kubeai-model.yaml")
    assert dep.model is not None
    assert (dep.model.value, dep.model.span.location()) == (
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "kubeai-model.yaml:7:13",
    )
    assert _settings(dep) == {
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN": (False, 15, 36),
        "max-model-len": (16384, 10, 23),
        "max-num-seqs": (64, 11, 22),
        "gpu-memory-utilization": (0.9, 12, 32),
        "kv-cache-dtype": ("fp8", 13, 24),
    }
    assert dep.gpu is not None and (dep.gpu.value, dep.gpu.raw) == ("nvidia-l4", "nvidia-gpu-l4:1")
    assert dep.gpu_count is not None
    assert (dep.gpu_count.value, dep.gpu_count.span.location()) == (1, "kubeai-model.yaml:17:34")


def test_kserve_huggingface_runtime() -> None:
    dep = _one("kserve-hf-isvc.yaml")
    assert (dep.engine.value, dep.name) == ("vllm", "InferenceService/huggingface-llama3 predictor")
    assert dep.model is not None
    assert (dep.model.value, dep.model.span.location()) == (
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "kserve-hf-isvc.yaml:14:22",
    )
    assert _settings(dep) == {
        "max-model-len": (8192, 15, 27),
        "gpu-memory-utilization": (0.85, 16, 36),
    }
    assert dep.gpu is not None and dep.gpu.value == "nvidia-l4"
    assert dep.gpu_count is not None and dep.gpu_count.value == 1


def test_rayservice_llm_configs_in_a_block_string() -> None:
    dep = _one("rayservice-llm.yaml")
    assert dep.name == "RayService/ray-serve-llm app llms model qwen-32b"
    assert _settings(dep) == {
        "model": ("Qwen/Qwen2.5-32B-Instruct", 15, 27),
        "tensor-parallel-size": (2, 18, 35),
        "max-model-len": (32768, 19, 28),
        "max-num-seqs": (48, 20, 27),
        "gpu-memory-utilization": (0.9, 21, 37),
    }
    assert dep.tensor_parallel_size is not None
    assert dep.tensor_parallel_size.span.key == "$.applications[0].args.llm_configs[0]" + (
        ".engine_kwargs.tensor_parallel_size"
    )
    assert dep.gpu is not None and dep.gpu.value == "L40S"
    assert dep.gpu_count is not None and dep.gpu_count.value == 2  # per replica: tp x pp


def test_compose_vllm_image_with_args_only() -> None:
    text = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
        "    command: --model Qwen/Qwen2.5-7B-Instruct --max-model-len 4096\n"
        "    environment:\n      - VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              device_ids: ['0', '1']\n"
        "              capabilities: [gpu]\n"
    )
    result = load_text(text, display="docker-compose.yml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.engine_version is not None and dep.engine_version.value == "0.8.5"
    assert dep.max_model_len is not None
    assert dep.max_model_len.span.location() == "docker-compose.yml:4:63"
    assert dep.allow_long_max_model_len is not None
    assert dep.allow_long_max_model_len.span.location() == "docker-compose.yml:6:39"
    assert dep.gpu_count is not None and dep.gpu_count.value == 2


def test_unknown_serving_resource_is_reported_once() -> None:
    text = (
        "apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: whisper}\n"
        "spec:\n  url: hf://openai/whisper-large-v3\n  engine: FasterWhisper\n"
    )
    result = load_text(text, display="m.yaml")
    assert result.deployments == []
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        ("KV905", "m.yaml:6:11", "Model/whisper: engine `FasterWhisper` is not one kvlint reads")
    ]


def test_kserve_runtime_reads_max_length_and_ignores_unknown_flags() -> None:
    text = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: t5}\n"
        "spec:\n  predictor:\n    model:\n      modelFormat: {name: huggingface}\n"
        "      storageUri: hf://Qwen/Qwen2.5-0.5B-Instruct\n"
        "      args: [--model_name=qwen, --max_length=2048, --no-such-flag=1]\n"
    )
    result = load_text(text, display="i.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.model is not None and dep.model.value == "Qwen/Qwen2.5-0.5B-Instruct"
    assert dep.max_model_len is not None
    assert (dep.max_model_len.value, dep.max_model_len.span.location()) == (2048, "i.yaml:9:46")
    assert [u.value for u in dep.unknown_flags] == ["--no-such-flag=1"]


@pytest.mark.parametrize(
    ("count", "gpus", "problem"),
    [
        ("all", None, None),
        ("'${INFERENCE_GPU_COUNT:-all}'", None, None),  # NVIDIA's RAG example compose file
        ("'${GPUS}'", None, None),  # the shell's to fill in
        ("'${GPUS:-2}'", (2, "c.yaml:9:48"), None),  # the default's own characters
        ("2", (2, "c.yaml:9:39"), None),
        ("'${GPUS:-two}'", None, ("KV502", "c.yaml:9:48")),
    ],
)
def test_compose_gpu_count(
    count: str, gpus: tuple[int, str] | None, problem: tuple[str, str] | None
) -> None:
    """`count: all` is every GPU of the host, also as a variable's default (it was KV502
    "must be a whole number, got `${INFERENCE_GPU_COUNT:-all}`")."""
    text = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: [--model, Qwen/Qwen2.5-7B-Instruct]\n    deploy:\n      resources:\n"
        "        reservations:\n          devices:\n"
        f"            - {{driver: nvidia, count: {count}, capabilities: [gpu]}}\n"
    )
    result = load_text(text, display="c.yaml")
    assert [(p.code, p.span.location()) for p in result.problems] == ([problem] if problem else [])
    (dep,) = result.deployments
    got = (dep.gpu_count.value, dep.gpu_count.span.location()) if dep.gpu_count else None
    assert got == gpus


def test_zarf_package_variables_are_filled_in_at_deploy_time() -> None:
    """LeapfrogAI's vLLM values: `###ZARF_VAR_TENSOR_PARALLEL_SIZE###` is a Zarf package
    variable, set when the package is deployed (four KV502 errors before)."""
    text = (
        "image: {repository: vllm/vllm-openai, tag: v0.11.0}\nmodel: Qwen/Qwen2.5-7B-Instruct\n"
        "tensorParallelSize: '###ZARF_VAR_TENSOR_PARALLEL_SIZE###'\n"
        "gpuMemoryUtilization: '###ZARF_VAR_GPU_MEMORY_UTILIZATION###'\n"
        "resources: {limits: {nvidia.com/gpu: '###ZARF_VAR_GPU_LIMIT###'}}\n"
    )
    result = load_text(text, display="values.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.gpu_count is None
    assert dep.runtime["tensor_parallel_size"].value == "###ZARF_VAR_TENSOR_PARALLEL_SIZE###"
