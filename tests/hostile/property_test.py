"""Generated deployments and model configs, wrong types and extreme values included, through the
real pipeline: findings or a clear exit 2, never an internal error; and ``kvlint check`` without
``--fix`` leaves every byte and mtime of the tree as it was."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from kvlint.main import main

# Values that have crashed or could crash arithmetic: zero, negatives, NaN, infinities, numbers
# past float and int64, wrong types, strings with units, empty things.
EXTREME_NUMBERS = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 2**63, 2**64 + 1, 10**400, -(10**400), 1e308, 1e-320]),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.5, -0.0]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)
WRONG_TYPES = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(["", "lots", "32k", "1.5M", "128K", "1e309", "auto", "-1", "0x10", "~", "[]"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)
VALUES = st.one_of(EXTREME_NUMBERS, WRONG_TYPES)

VLLM_KEYS = [
    "max-model-len",
    "max-num-seqs",
    "gpu-memory-utilization",
    "tensor-parallel-size",
    "pipeline-parallel-size",
    "data-parallel-size",
    "block-size",
    "kv-cache-dtype",
    "kv-cache-memory-bytes",
    "max-num-batched-tokens",
    "cpu-offload-gb",
    "dtype",
    "quantization",
    "num-gpu-blocks-override",
    "speculative-config",
    "hf-overrides",
]
PLAN_SETTINGS = {
    "vllm": VLLM_KEYS,
    "sglang": ["context-length", "max-running-requests", "mem-fraction-static", "tp-size",
               "page-size", "max-total-tokens", "swa-full-tokens-ratio", "kv-cache-dtype"],
    "llamacpp": ["ctx-size", "parallel", "n-gpu-layers", "cache-type-k", "cache-type-v",
                 "flash-attn", "batch-size", "ubatch-size"],
    "tgi": ["max-total-tokens", "max-input-tokens", "max-batch-total-tokens",
            "max-concurrent-requests", "cuda-memory-fraction", "num-shard"],
    "ollama": ["OLLAMA_NUM_PARALLEL", "OLLAMA_CONTEXT_LENGTH", "OLLAMA_KV_CACHE_TYPE"],
}  # fmt: skip
CLAIMS = ["concurrency", "context", "kv_per_token", "kv_per_sequence", "kv_pool_tokens",
          "kv_cache_dtype", "gpus_needed"]  # fmt: skip
MODELS = st.sampled_from(
    [
        "meta-llama/Llama-3.1-8B-Instruct",
        "deepseek-ai/DeepSeek-V3",
        "mistralai/Mistral-7B-v0.1",
        "google/gemma-3-27b-it",
        "Qwen/Qwen3-30B-A3B",
        "./model",
        "../../etc/passwd",
        "",
        "x" * 300,
    ]
)
GPUS = st.sampled_from(["H100", "A100-40GB", "L4", "nvidia-h100-80gb", "MI300X", "nope", ""])

# A small real-shaped config (Llama 3.1 8B's numbers) whose keys the strategy then spoils.
BASE_CONFIG: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "vocab_size": 128256,
    "torch_dtype": "bfloat16",
}
CONFIG_KEYS = [*BASE_CONFIG, "head_dim", "sliding_window", "layer_types", "rope_scaling",
               "kv_lora_rank", "qk_rope_head_dim", "text_config", "quantization_config",
               "num_experts", "attention_chunk_size", "tie_word_embeddings"]  # fmt: skip
CONFIG_VALUES = st.one_of(
    VALUES,
    st.sampled_from(["llama", "deepseek_v3", "gemma3", "qwen3_next", "mistral", "nope"]),
    st.just({"rope_type": "yarn", "factor": 0}),
    st.just({"quant_method": "awq", "bits": 0}),
    st.just(["sliding_attention", "full_attention"]),
)


@st.composite
def model_configs(draw: st.DrawFn) -> dict[str, Any]:
    config = dict(BASE_CONFIG)
    for key in draw(st.lists(st.sampled_from(CONFIG_KEYS), max_size=4, unique=True)):
        config[key] = draw(CONFIG_VALUES)
    return config


def _yaml_scalar(value: Any) -> str:
    """A value as YAML flow text (json.dumps is valid YAML, except for NaN and infinities)."""
    if isinstance(value, float) and math.isnan(value):
        return ".nan"
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return json.dumps(value)


@st.composite
def deployment_files(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["vllm-config", "plan", "kubernetes"]))
    model = draw(MODELS)
    if kind == "vllm-config":
        keys = draw(st.lists(st.sampled_from(VLLM_KEYS), min_size=1, max_size=6))
        lines = [f"model: {json.dumps(model)}"]
        lines += [f"{key}: {_yaml_scalar(draw(VALUES))}" for key in keys]
        return "\n".join(lines) + "\n"
    if kind == "plan":
        engine = draw(st.sampled_from(sorted(PLAN_SETTINGS)))
        keys = draw(st.lists(st.sampled_from(PLAN_SETTINGS[engine]), max_size=5))
        claims = draw(st.lists(st.sampled_from(CLAIMS), max_size=4, unique=True))
        lines = [
            "kvlint: plan/v1",
            f"engine: {engine}",
            f"model: {json.dumps(model)}",
            f"gpu: {json.dumps(draw(GPUS))}",
            f"gpus: {_yaml_scalar(draw(VALUES))}",
            "settings:",
            *(f"  {key}: {_yaml_scalar(draw(VALUES))}" for key in keys),
            "claims:",
            *(f"  {key}: {_yaml_scalar(draw(VALUES))}" for key in claims),
        ]
        if not keys:
            lines.remove("settings:")
        if not claims:
            lines.remove("claims:")
        return "\n".join(lines) + "\n"
    flags = draw(st.lists(st.sampled_from(VLLM_KEYS), max_size=5))
    args = [json.dumps("--model"), json.dumps(model)]
    for flag in flags:
        args += [json.dumps("--" + flag), json.dumps(str(_yaml_scalar(draw(VALUES))))]
    gpu_count = _yaml_scalar(draw(VALUES))
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: hostile}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: {json.dumps(draw(GPUS))}}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [{", ".join(args)}]
          resources: {{limits: {{nvidia.com/gpu: {gpu_count}}}}}
"""


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file and folder under ``root``: bytes (files), mtime in ns and mode."""
    state: dict[str, tuple[bytes, int, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            state[str(path.relative_to(root))] = (data, info.st_mtime_ns, info.st_mode)
    return state


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf-home")))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _check(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["check", "--no-config", "--format", "concise", "--jobs", "1", *extra, str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _assert_answer(code: int, text: str) -> None:
    assert "Traceback" not in text, text
    assert "internal error" not in text, text
    assert code in (0, 1, 2), text
    if code == 2:
        assert text.strip(), "exit 2 without a message"


def _write_case(folder: Path, text: str, config: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "deploy.yaml").write_text(text, encoding="utf-8")
    (folder / "model").mkdir(exist_ok=True)
    (folder / "model" / "config.json").write_text(json.dumps(config), encoding="utf-8")


def _iter_findings(text: str) -> Iterator[str]:
    return (line for line in text.splitlines() if ": KV" in line)


SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(
    text=deployment_files(), config=model_configs(), gpu=st.sampled_from([[], ["--gpu", "H100"]])
)
def test_generated_deployments_never_crash_nor_write(
    tmp_path: Path,
    offline: None,
    capsys: pytest.CaptureFixture[str],
    text: str,
    config: dict[str, Any],
    gpu: list[str],
) -> None:
    folder = tmp_path / "case"
    _write_case(folder, text, config)
    before = snapshot(tmp_path)
    code, output = _check(folder / "deploy.yaml", capsys, *gpu)
    _assert_answer(code, output)
    for line in _iter_findings(output):  # every finding names the file and a position
        assert line.startswith(str(folder / "deploy.yaml") + ":"), line
    assert snapshot(tmp_path) == before, "kvlint check wrote without --fix"


@SETTINGS
@given(config=model_configs())
def test_generated_model_configs_never_crash(
    tmp_path: Path, offline: None, capsys: pytest.CaptureFixture[str], config: dict[str, Any]
) -> None:
    folder = tmp_path / "case"
    _write_case(
        folder, "model: ./model\nmax-model-len: 4096\ngpu-memory-utilization: 0.9\n", config
    )
    code, output = _check(folder / "deploy.yaml", capsys, "--gpu", "H100")
    _assert_answer(code, output)
    code, output = _size(folder / "model", capsys)
    _assert_answer(code, output)


def _size(model: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["size", str(model)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".yaml", ".json"]))
def test_any_bytes_never_crash_nor_write(
    tmp_path: Path, offline: None, capsys: pytest.CaptureFixture[str], data: bytes, suffix: str
) -> None:
    folder = tmp_path / "bytes"
    folder.mkdir(exist_ok=True)
    (folder / f"input{suffix}").write_bytes(data)
    before = snapshot(tmp_path)
    code, output = _check(folder, capsys)
    _assert_answer(code, output)
    assert snapshot(tmp_path) == before


def test_check_leaves_a_fixable_tree_untouched(
    tmp_path: Path, offline: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file kvlint has a fix for (the cancelled KV figure) is only reported without --fix."""
    (tmp_path / "deploy.yaml").write_text(
        "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 131072\nmax-num-seqs: 512\n"
        "gpu-memory-utilization: 0.9\n"
    )
    before = snapshot(tmp_path)
    code, output = _check(tmp_path, capsys, "--gpu", "L4")
    _assert_answer(code, output)
    assert code == 1, output  # findings, so a fix could have applied
    assert snapshot(tmp_path) == before
