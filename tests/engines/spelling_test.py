"""Each engine's spellings -> Deployment fields, with the span of every value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvlint.deploy.load import load_path
from kvlint.deploy.load import load_text
from kvlint.deployment import Deployment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "deployments"
FIELDS = (
    "model",
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "kv_cache_dtype",
    "kv_cache_dtype_v",
    "memory_fraction",
    "tensor_parallel_size",
    "quantization",
    "flash_attention",
    "kv_unified",
    "swa_full",
    "n_gpu_layers",
)


def _fields(dep: Deployment) -> dict[str, tuple[Any, int, int]]:
    out = {}
    for name in FIELDS:
        value = getattr(dep, name)
        if value is not None:
            out[name] = (value.value, value.span.line, value.span.column)
    return out


def _one(name: str) -> Deployment:
    result = load_path(FIXTURES / name, display=name)
    assert result.problems == []
    (dep,) = result.deployments
    return dep


def test_llamacpp_short_flags_and_env() -> None:
    dep = _one("llamacpp-compose.yaml")
    assert (dep.engine.value, dep.name, dep.carrier) == ("llamacpp", "services.llama", "compose")
    assert dep.engine_version is not None and dep.engine_version.value == "b6123"
    assert _fields(dep) == {
        "model": ("unsloth/Qwen3-32B-GGUF:Q4_K_M", 10, 9),
        "max_model_len": (65536, 23, 28),  # LLAMA_ARG_CTX_SIZE=65536: the value after `=`
        "max_num_seqs": (4, 12, 9),
        "kv_cache_dtype": ("q8_0", 14, 9),
        "kv_cache_dtype_v": ("q8_0", 16, 9),
        "flash_attention": ("on", 17, 9),  # a bare -fa (older releases) means on
        "kv_unified": (True, 18, 9),
        "swa_full": (True, 19, 9),
        "n_gpu_layers": (99, 21, 9),
    }
    assert dep.gpu_count is not None and dep.gpu_count.value == 2


def test_llamacpp_flag_wins_over_env_and_negation() -> None:
    text = (
        "services:\n  s:\n    image: ghcr.io/ggml-org/llama.cpp:server\n"
        "    environment: {LLAMA_ARG_CTX_SIZE: '8192', LLAMA_ARG_KV_UNIFIED: '1'}\n"
        "    command: -m /models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 16384 -no-kvu"
        " -fa off -ctv q4_2\n"
    )
    result = load_text(text, display="c.yaml")
    (dep,) = result.deployments
    assert dep.max_model_len is not None and (dep.max_model_len.value, dep.max_model_len.raw) == (
        16384,
        "16384",
    )
    assert dep.kv_unified is not None and dep.kv_unified.value is False
    assert dep.flash_attention is not None and dep.flash_attention.value == "off"
    assert dep.model is not None and dep.model.value.endswith("Q4_K_M.gguf")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV502",
            "c.yaml:5:94",
            "`-ctv` must be one of f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1; "
            "got `q4_2`",
        )
    ]


def test_tgi_args_and_env() -> None:
    dep = _one("tgi-deployment.yaml")
    assert dep.engine_version is not None and dep.engine_version.value == "2.4.1"
    assert _fields(dep) == {
        "model": ("mistralai/Mistral-7B-Instruct-v0.3", 24, 15),
        "max_model_len": (8192, 26, 34),
        "max_num_seqs": (64, 37, 22),
        "max_num_batched_tokens": (8192, 28, 15),
        "kv_cache_dtype": ("fp8_e5m2", 30, 15),
        "memory_fraction": (0.9, 35, 22),
        "quantization": ("awq", 33, 22),
    }
    assert dep.settings["max-input-tokens"].value == 6144
    assert dep.gpu is not None and dep.gpu.value == "a10g"


def test_ollama_env() -> None:
    dep = _one("ollama-deployment.yaml")
    assert (dep.engine.value, dep.engine_version.value if dep.engine_version else None) == (
        "ollama",
        "0.5.7",
    )
    assert _fields(dep) == {
        "max_model_len": (32768, 21, 22),
        "max_num_seqs": (4, 23, 22),
        "kv_cache_dtype": ("q8_0", 25, 22),
        "flash_attention": ("on", 27, 22),
    }
    assert dep.gpu is not None and dep.gpu.value == "NVIDIA-GeForce-RTX-4090"


def test_sglang_launch_server() -> None:
    dep = _one("sglang-statefulset.yaml")
    assert dep.engine_version is not None and dep.engine_version.value == "0.5.4"
    assert _fields(dep) == {
        "model": ("Qwen/Qwen2.5-72B-Instruct", 22, 34),
        "max_model_len": (65536, 22, 83),
        "max_num_seqs": (64, 23, 77),
        "kv_cache_dtype": ("fp8_e5m2", 24, 38),
        "memory_fraction": (0.85, 23, 43),
        "tensor_parallel_size": (4, 24, 58),
    }
    assert dep.annotations["kvlint.dev/ignore"].value.startswith("KV907")


def test_sglang_unknown_flag() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n"
        "    - name: s\n      image: lmsysorg/sglang:latest\n"
        "      command: [python3, -m, sglang.launch_server, --model-path, m,\n"
        "                --max-running-request, '8']\n"
    )
    result = load_text(text, display="s.yaml")
    assert [(p.code, p.message) for p in result.problems] == [
        (
            "KV501",
            "unknown flag `--max-running-request` for sglang; did you mean "
            "`--max-running-requests`? (argparse takes it as an abbreviation of "
            "`--max-running-requests` today)",
        )
    ]


def test_vllm_serve_positional_model_repeated_flag_and_speculative() -> None:
    text = (
        "services:\n  v:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    entrypoint: vllm serve meta-llama/Llama-3.1-8B-Instruct\n"
        "    command: >-\n"
        "      --max-model-len 8192 --max-model-len=16384\n"
        "      --speculative-config\n"
        '      \'{"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4}\'\n'
        '      --hf-overrides \'{"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}\'\n'
    )
    result = load_text(text, display="v.yaml")
    assert result.problems == []
    (dep,) = result.deployments
    assert dep.model is not None and (dep.model.value, dep.model.span.line) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        4,
    )
    assert dep.max_model_len is not None
    assert (dep.max_model_len.value, dep.max_model_len.span.location()) == (16384, "v.yaml:6:44")
    assert dep.speculative_model is not None
    assert dep.speculative_model.value == "meta-llama/Llama-3.2-1B"
    assert dep.rope_scaling is not None and dep.rope_scaling.value["factor"] == 4.0


def test_vllm_flag_removed_before_the_image_release() -> None:
    text = (
        "services:\n  v:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: [--model, m, --num-scheduler-steps=8, --swap-space, '4']\n"
    )
    result = load_text(text, display="c.yaml")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV501",
            "c.yaml:4:27",
            "`--num-scheduler-steps` is not a flag of vllm 0.11.0: removed after 0.8.5 "
            "(absent from 0.11.0)",
        )
    ]
    text = "kvlint: plan/v1\nengine: vllm\nengine_version: 0.8.5\nmodel: m\n"
    text += "settings:\n  kv-offloading-size: 8\n"
    result = load_text(text, display="p.yaml")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV501",
            "p.yaml:6:3",
            "`kv-offloading-size` is not a flag of vllm 0.8.5: added after 0.11.0 "
            "(present from 0.33.0)",
        )
    ]


def test_values_the_engine_refuses() -> None:
    text = (
        "services:\n  a:\n    image: ghcr.io/ggml-org/llama.cpp:server\n"
        "    command: -m m.gguf -np 0\n"
        "  b:\n    image: ghcr.io/ggml-org/llama.cpp:server\n"
        "    command: -m m.gguf -np -1 -c 0\n"
        "  c:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: --model m --max-num-seqs 0 --tensor-parallel-size=-2\n"
    )
    result = load_text(text, display="c.yaml")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        ("KV502", "c.yaml:4:28", "`-np` must be at least -1 and not 0, got `0`"),
        ("KV502", "c.yaml:10:39", "`--max-num-seqs` must be a positive integer, got `0`"),
        ("KV502", "c.yaml:10:64", "`--tensor-parallel-size` must be a positive integer, got `-2`"),
    ]
    auto = result.deployments[1]
    assert auto.max_num_seqs is not None and auto.max_num_seqs.value == -1
    assert auto.max_model_len is not None and auto.max_model_len.value == 0


def test_tgi_refuses_both_input_length_spellings() -> None:
    text = (
        "services:\n  t:\n    image: ghcr.io/huggingface/text-generation-inference:2.4.1\n"
        "    environment: {MAX_INPUT_LENGTH: '2048'}\n"
        "    command: --model-id m --max-input-tokens 4096\n"
    )
    result = load_text(text, display="t.yaml")
    assert [(p.code, p.span.location(), p.message) for p in result.problems] == [
        (
            "KV502",
            "t.yaml:5:46",
            "`max-input-length` and `max-input-tokens` are both set: "
            "text-generation-launcher refuses to start; keep `max-input-tokens`",
        )
    ]
