"""Every real deployment file of ../shared: recognised, or reported once with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvlint.deploy.load import load_path
from testing.shared import DEPLOYMENTS_REAL
from testing.shared import requires_shared

GCP = "GoogleCloudPlatform__kubernetes-engine-samples__"
STACK = "vllm-project__production-stack__tutorials__assets__"
KUBEAI = "substratusai__kubeai__manifests__models__"
KEYS = (
    "max-model-len",
    "max-num-seqs",
    "gpu-memory-utilization",
    "tensor-parallel-size",
    "pipeline-parallel-size",
    "kv-cache-dtype",
    "ctx-size",
    "cache-type-k",
    "max-total-tokens",
    "max-input-tokens",
    "num-shard",
    "tp-size",
    "quantize",
    "quantization",
)

# file -> deployments as (engine, model, gpu, gpu count, key settings), and problems.
EXPECTED: dict[str, tuple[list[tuple[Any, ...]], list[tuple[str, int, int]]]] = {
    f"{GCP}ai-ml__llm-multihost-gpus__vllm-deepseek-r1-A3.yaml": (
        [
            (
                "vllm",
                "deepseek-ai/DeepSeek-R1",
                "nvidia-h100-80gb",
                8,
                {"tensor-parallel-size": 8, "pipeline-parallel-size": 2, "max-model-len": 4096},
            )
        ],
        [],
    ),
    f"{GCP}ai-ml__llm-multiple-gpus__llama3-70b__text-generation-inference.yaml": (
        [
            (
                "tgi",
                "meta-llama/Meta-Llama-3-70B-Instruct",
                "nvidia-l4",
                2,
                {"num-shard": 2, "max-input-tokens": 2048, "quantize": "bitsandbytes-nf4"},
            )
        ],
        [],
    ),
    f"{GCP}ai-ml__llm-serving-gemma__tgi__tgi-2-27b-it.yaml": (
        [
            (
                "tgi",
                "google/gemma-2-27b-it",
                "nvidia-l4",
                4,
                {"num-shard": 4, "max-total-tokens": 2048},
            )
        ],
        [],
    ),
    f"{GCP}ai-ml__llm-serving-gemma__vllm__vllm-3-27b-it.yaml": (
        [
            (
                "vllm",
                "google/gemma-3-27b-it",
                "nvidia-a100-80gb",
                1,
                {
                    "tensor-parallel-size": 1,
                    "gpu-memory-utilization": 0.95,
                    "max-model-len": 32768,
                    "max-num-seqs": 4,
                },
            )
        ],
        [],
    ),
    f"{GCP}ai-ml__llm-serving-gemma__vllm__vllm-7b-kvcache.yaml": (
        [
            (
                "vllm",
                "google/gemma-7b",
                "nvidia-l4",
                1,
                {"tensor-parallel-size": 1, "kv-cache-dtype": "fp8_e5m2", "max-model-len": 1200},
            )
        ],
        [],
    ),
    f"{GCP}ai-ml__llm-serving-llama__vllm__vllm-llama4-maverick-17b-128e-instruct-fp8.yaml": (
        [
            (
                "vllm",
                "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
                "nvidia-h100-80gb",
                8,
                {
                    "max-model-len": 524288,
                    "gpu-memory-utilization": 0.9,
                    "tensor-parallel-size": 8,
                },
            )
        ],
        [("KV901", 95, 17)],
    ),
    f"{GCP}ai-ml__vllm-tpu__vllm-llama3-70b.yaml": (
        [
            (
                "vllm",
                "meta-llama/Llama-3.1-70B",
                "tpu-v6e-slice",  # a TPU: KV907 says kvlint does not size it
                8,  # `google.com/tpu: 8`: the chips the pod asks for
                {"tensor-parallel-size": 8, "max-model-len": 4096, "max-num-seqs": 128},
            )
        ],
        # `type: LoadBalancer<TAB>` is YAML whitespace (kubectl's go-yaml reads it): no KV901.
        [],
    ),
    f"{GCP}app-design-center__ai-inference__values.yaml": (
        [
            (
                "vllm",
                "google/gemma-7b-it",
                "nvidia-l4",
                1,
                {"tensor-parallel-size": 1, "max-model-len": 512},
            )
        ],
        [],
    ),
    f"{GCP}cost-optimization__gke-keda__ollama__helm-values-ollama.yaml": (
        [("ollama", "gemma:7b", None, 1, {}), ("ollama", "llama2:7b", None, 1, {})],
        [],
    ),
    "ai-dynamo__dynamo__examples__backends__vllm__deploy__disagg_kvbm_tp2.yaml": (
        [
            (
                "vllm",
                "Qwen/Qwen3-8B",
                None,
                2,
                {
                    "gpu-memory-utilization": 0.23,
                    "max-model-len": 32000,
                    "tensor-parallel-size": 2,
                },
            )
        ]
        * 2,
        [],
    ),
    "awslabs__ai-on-eks__blueprints__inference__vllm-ray-gpu-deepseek__ray-vllm-deepseek.yml": (
        [
            (
                "vllm",
                "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
                None,
                1,
                {
                    "gpu-memory-utilization": 0.9,
                    "max-model-len": 8192,
                    "max-num-seqs": 4,
                    "tensor-parallel-size": 1,
                },
            )
        ],
        [],
    ),
    "awslabs__ai-on-eks__blueprints__inference__vllm-rayserve-gpu__ray-service-vllm.yaml": (
        [
            (
                "vllm",
                "mistralai/Mistral-7B-Instruct-v0.2",
                None,
                1,
                {"gpu-memory-utilization": 0.9, "max-model-len": 8192, "max-num-seqs": 4},
            )
        ],
        [],
    ),
    "coder-cong__PesticideRecipeGen__train__GRPO__vllm_config.yaml": (
        [
            (
                "vllm",
                "/data/lyl/models/qwen2.5-7B",
                None,
                None,
                {
                    "tensor-parallel-size": 2,
                    "gpu-memory-utilization": 0.6,
                    "quantization": "bitsandbytes",
                },
            )
        ],
        [],
    ),
    "kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__llmisvc-single-gpu.yaml": (
        [("vllm", "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", None, 1, {})],
        [],
    ),
    "kserve__kserve__docs__samples__llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce__"
    "llm-inference-service-dp-ep-deepseek-r1-gpu-deepep-ht.yaml": (
        [
            (
                "vllm",
                "deepseek-ai/DeepSeek-R1-0528",
                None,
                8,
                {"gpu-memory-utilization": 0.95, "max-model-len": 8192},
            )
        ],
        [],
    ),
    # The leader runs a custom wrapper (/llamacpp-leader): reported once, not guessed at.
    "kubernetes-sigs__lws__docs__examples__llamacpp__k8s__lws.yaml": ([], [("KV905", 19, 20)]),
    "kubernetes-sigs__lws__docs__examples__sglang__lws.yaml": (
        [("sglang", "meta-llama/Meta-Llama-3.1-8B-Instruct", None, 1, {"tp-size": 2})],
        [],
    ),
    "kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml": (
        [
            (
                "vllm",
                "meta-llama/Llama-3.1-405B-Instruct",
                None,
                8,
                {"tensor-parallel-size": 8, "pipeline-parallel-size": 2},
            )
        ],
        [],
    ),
    "llm-d__llm-d__guides__inference-scheduling__ms-inference-scheduling__values.yaml": (
        [("vllm", "Qwen/Qwen3-32B", None, 2, {"gpu-memory-utilization": 0.95})],
        [],
    ),
    "ray-project__kuberay__ray-operator__config__samples__ray-service.llm-serve.yaml": (
        [
            (
                "vllm",
                "Qwen/Qwen2.5-7B-Instruct",
                None,
                1,
                {"max-model-len": 1024, "gpu-memory-utilization": 0.75},
            )
        ],
        [],
    ),
    "sgl-project__sglang__docker__compose.yaml": (
        [("sglang", "meta-llama/Meta-Llama-3.1-8B-Instruct", None, 1, {})],
        [],
    ),
    "sgl-project__sglang__docker__k8s-sglang-distributed-sts.yaml": ([], [("KV901", 26, 1)]),
    f"{KUBEAI}deepseek-r1-mi300x.yaml": (
        [
            (
                "vllm",
                "deepseek-ai/DeepSeek-R1",
                "amd-mi300x",
                8,
                {
                    "max-model-len": 32768,
                    "max-num-seqs": 1024,
                    "tensor-parallel-size": 8,
                    "gpu-memory-utilization": 0.9,
                    "kv-cache-dtype": "fp8",
                },
            )
        ],
        [("KV501", 13, 7)],  # --max-num-batched-token (sic)
    ),
    f"{KUBEAI}gemma-3-27b-ollama-l4.yaml": ([("ollama", "gemma3:27b", "nvidia-l4", 1, {})], []),
    f"{KUBEAI}llama-3.1-405b-instruct-fp8-a100-80b.yaml": (
        [
            (
                "vllm",
                "neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8",
                "nvidia-a100-80gb",
                8,
                {
                    "max-model-len": 65536,
                    "gpu-memory-utilization": 0.98,
                    "tensor-parallel-size": 8,
                    "max-num-seqs": 128,
                    "kv-cache-dtype": "fp8",
                },
            )
        ],
        [("KV501", 12, 7)],
    ),
    f"{KUBEAI}llama-3.1-70b-instruct-fp8-1-h100.yaml": (
        [
            (
                "vllm",
                "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
                "nvidia-h100",
                1,
                {"max-model-len": 16384, "gpu-memory-utilization": 0.95, "kv-cache-dtype": "fp8"},
            )
        ],
        [("KV501", 13, 7)],
    ),
    f"{KUBEAI}llama-3.1-70b-instruct-fp8-l4.yaml": (
        [
            (
                "vllm",
                "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
                "nvidia-l4",
                8,
                {
                    "max-model-len": 32768,
                    "max-num-seqs": 512,
                    "gpu-memory-utilization": 0.9,
                    "pipeline-parallel-size": 4,
                    "tensor-parallel-size": 2,
                    "kv-cache-dtype": "fp8",
                },
            )
        ],
        [("KV501", 12, 7)],
    ),
    f"{KUBEAI}qwen2.5-coder-1.5b-rtx4070-8gb.yaml": (
        [
            (
                "vllm",
                "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                "nvidia-rtx4070-8gb",
                1,
                {
                    "max-model-len": 2048,
                    "max-num-seqs": 16,
                    "kv-cache-dtype": "fp8",
                    "quantization": "fp8",
                },
            )
        ],
        [],
    ),
    "thr3a__llama-cpp-docker-compose__docker-compose.yml": (
        [
            (
                "llamacpp",
                "/root/.cache/llama.cpp/gemma-4-31B-it-Q4_K_M.gguf",
                None,
                1,
                {"ctx-size": 40000, "cache-type-k": "q8_0"},
            )
        ],
        [],
    ),
    "unarmedpuppy__homelab-ai__apps__local-ai-server__docker-compose.yml": (
        [
            (
                "vllm",
                "Qwen/Qwen2.5-7B-Instruct-AWQ",
                None,
                1,
                {"max-model-len": 2048, "gpu-memory-utilization": 0.95, "quantization": "awq"},
            )
        ],
        [],
    ),
    f"{STACK}values-02-basic-config.yaml": (
        [
            (
                "vllm",
                "meta-llama/Llama-3.1-8B-Instruct",
                None,
                1,
                {"max-model-len": 4096, "gpu-memory-utilization": 0.8},
            )
        ],
        [],
    ),
    f"{STACK}values-15-a-minimal-pipeline-parallel-example-raycluster.yaml": (
        [
            (
                "vllm",
                "distilbert/distilgpt2",
                None,
                1,
                {"tensor-parallel-size": 1, "pipeline-parallel-size": 2},
            )
        ],
        [],
    ),
    f"{STACK}values-16-disagg-prefill.yaml": (
        [("vllm", "meta-llama/Llama-3.1-8B-Instruct", None, None, {"max-model-len": 32000})] * 2,
        [],
    ),
    f"{STACK}values-17-kv-aware.yaml": (
        [
            (
                "vllm",
                "openai/gpt-oss-20b",
                None,
                1,
                {"max-model-len": 8000, "gpu-memory-utilization": 0.9},
            )
        ],
        [],
    ),
    f"{STACK}values-25-v100-multi-gpu-tp4.yaml": (
        [
            (
                "vllm",
                "Qwen/Qwen2.5-14B-Instruct",
                None,
                4,
                {"tensor-parallel-size": 4, "max-model-len": 8192, "gpu-memory-utilization": 0.9},
            )
        ],
        [],
    ),
    "vllm-project__vllm__examples__online_serving__chart-helm__values.yaml": (
        [("vllm", "/data/", "TYPE_GPU_USED", 1, {})],
        [],
    ),
}


def _summary(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[str, int, int]]]:
    result = load_path(path, display=path.name)
    deployments = [
        (
            d.engine.value,
            d.model.value if d.model else None,
            d.gpu.value if d.gpu else None,
            d.gpu_count.value if d.gpu_count else None,
            {k: v.value for k, v in d.settings.items() if k in KEYS},
        )
        for d in result.deployments
    ]
    problems = [(p.code, p.span.line, p.span.column) for p in result.problems]
    return deployments, problems


@requires_shared
def test_every_real_file_is_listed() -> None:
    names = {p.name for p in DEPLOYMENTS_REAL.iterdir() if p.suffix in (".yaml", ".yml")}
    assert names == set(EXPECTED)


@requires_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_file(name: str) -> None:
    assert _summary(DEPLOYMENTS_REAL / name) == EXPECTED[name]


BROKEN = [
    (
        "sgl-project__sglang__docker__k8s-sglang-distributed-sts.yaml",
        "26:1",
        "unresolved git merge-conflict marker `<<<<<<< HEAD` "
        "(more markers at lines 28, 30, 43, 45, 46): resolve the conflict",
    ),
    (
        f"{GCP}ai-ml__llm-serving-llama__vllm__vllm-llama4-maverick-17b-128e-instruct-fp8.yaml",
        "95:17",
        "unfilled template placeholder `{{HF_TOKEN}}`: render the template (or quote the value) "
        "first",
    ),
]


@requires_shared
@pytest.mark.parametrize(("name", "where", "message"), BROKEN)
def test_the_broken_files_say_where_and_why(name: str, where: str, message: str) -> None:
    (problem,) = load_path(DEPLOYMENTS_REAL / name, display="f.yaml").problems
    assert (problem.code, problem.span.location(), problem.message) == (
        "KV901",
        f"f.yaml:{where}",
        message,
    )


@requires_shared
def test_sh_c_max_model_len_token_position() -> None:
    name = f"{GCP}ai-ml__llm-multihost-gpus__vllm-deepseek-r1-A3.yaml"
    result = load_path(DEPLOYMENTS_REAL / name, display="a3.yaml")
    (dep,) = result.deployments
    assert dep.max_model_len is not None
    span = dep.max_model_len.span
    assert (span.location(), span.end_column, dep.max_model_len.raw) == (
        "a3.yaml:46:195",
        199,
        "4096",
    )
    line = result.text.splitlines()[45]
    assert line[span.column - 1 : span.end_column - 1] == "4096"  # type: ignore[operator]
