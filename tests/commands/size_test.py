"""``kvlint size MODEL``: the reference figures through the CLI from the catalog alone, every
shared config fixture as a table and as JSON, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import pathlib

import pytest

from testing.cli import run_cli
from testing.shared import hf_config_files
from testing.shared import requires_shared

FIXTURES = hf_config_files()


@pytest.fixture(autouse=True)
def _offline_and_no_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))


def size_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    result = run_cli(["size", *argv, "--format", "json"], capsys)
    assert result.code == 0, result.err
    data: dict[str, object] = json.loads(result.out)
    return data


def test_llama_2_13b_is_800_kib_per_token(capsys: pytest.CaptureFixture[str]) -> None:
    data = size_json(capsys, "meta-llama/Llama-2-13b-hf")
    assert data["per_token_bytes"] == 819_200
    assert data["kv_cache_dtype"] == "float16"
    assert data["layers"] == {"full": 40}


def test_llama_3_1_8b_is_128_kib_and_64_kib_with_fp8(capsys: pytest.CaptureFixture[str]) -> None:
    assert size_json(capsys, "meta-llama/Llama-3.1-8B-Instruct")["per_token_bytes"] == 131_072
    fp8 = size_json(capsys, "meta-llama/Llama-3.1-8B-Instruct", "--kv-cache-dtype", "fp8")
    assert fp8["per_token_bytes"] == 65_536
    assert fp8["kv_cache_dtype"] == "fp8"


def test_llama_3_1_70b_per_token_and_per_sequence_at_8k(capsys: pytest.CaptureFixture[str]) -> None:
    data = size_json(capsys, "meta-llama/Llama-3.1-70B-Instruct", "--context", "8k")
    assert data["model"] == "meta-llama/Meta-Llama-3.1-70B-Instruct"
    assert data["resolved_from"] == "catalog"
    assert data["per_token_bytes"] == 327_680
    assert data["context"] == 8_000
    assert data["per_sequence_bytes"] == 2_621_440_000
    assert data["per_sequence_at"] == {
        "8000": 2_621_440_000,
        "32000": 10_485_760_000,
        "128000": 41_943_040_000,
    }
    assert data["cancelled_per_token_bytes"] == 2_621_440
    assert data["ratio"] == 8.0
    assert data["layers"] == {"full": 80}


def test_batch_multiplies_and_binary_suffixes_are_read_as_vllm_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = size_json(
        capsys, "meta-llama/Llama-3.1-70B-Instruct", "--context", "128K", "--batch", "32"
    )
    assert data["context"] == 131_072
    assert data["batch"] == 32
    assert data["total_bytes"] == 32 * 131_072 * 327_680


def test_the_acceptance_command_works_offline_from_the_catalog(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run_cli(["size", "meta-llama/Llama-3.1-70B-Instruct", "--context", "128k"], capsys)
    assert result.code == 0, result.err
    # The seed's reference figures exactly, in bytes (2.62 / 10.49 / 41.94 GB, decimal as the
    # seed quotes them); the sizes beside them are binary, as every kvlint figure.
    figures = ("320 KiB", "327,680", "2,621,440,000", "10,485,760,000", "41,943,040,000")
    for text in (*figures, "2.44 GiB", "9.77 GiB", "39.1 GiB", "2.5 MiB", "8x"):
        assert text in result.out, text


def test_windowed_and_state_layers_are_fixed_beyond_their_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    gemma = size_json(capsys, "google/gemma-4-31B-it", "--context", "32k")
    assert gemma["per_token_bytes"] == 40 * 1024
    assert gemma["bounded_bytes"] == 50 * 1024 * 16 * 1024
    assert gemma["layers"] == {"full_kv_shared": 10, "sliding": 50}
    nxt = size_json(capsys, "Qwen/Qwen3-Next-80B-A3B-Thinking", "--context", "32k")
    assert nxt["layers"] == {"full": 12, "state": 36}
    assert nxt["per_token_bytes"] == 12 * 2 * 2 * 256 * 2
    assert isinstance(nxt["state_bytes"], int) and nxt["state_bytes"] > 0


def test_the_default_context_is_the_model_maximum(capsys: pytest.CaptureFixture[str]) -> None:
    data = size_json(capsys, "Qwen/Qwen3-8B")
    assert data["context"] == 40_960 and data["context_default"] is True


@requires_shared
@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_shared_config_prints_a_table_and_valid_json(
    path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = run_cli(["size", str(path)], capsys)
    assert text.code == 0, text.err
    assert "per token" in text.out and "cancelled formula" in text.out
    data = size_json(capsys, str(path))
    assert data["resolved_from"] == "path"
    for key in ("model", "kv_cache_dtype", "per_token_bytes", "per_sequence_bytes", "layers"):
        assert key in data
    assert isinstance(data["per_token_bytes"], int)
    assert isinstance(data["per_sequence_bytes"], int) and data["per_sequence_bytes"] > 0
    layers = data["layers"]
    assert isinstance(layers, dict) and sum(layers.values()) == data["num_layers"]


def test_a_malformed_config_is_one_line_naming_file_and_position(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama",\n  "num_hidden_layers": "lots"}', encoding="utf-8")
    result = run_cli(["size", str(bad)], capsys)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"kvlint: {bad}:2:")
    assert "num_hidden_layers" in lines[0]


def test_an_unknown_model_offline_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["size", "acme/not-a-model", "--offline"], capsys)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1
    assert "acme/not-a-model" in result.err and "kvlint models" in result.err


def test_a_bad_cache_dtype_and_bad_context_are_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run_cli(["size", "Qwen/Qwen3-8B", "--kv-cache-dtype", "fp3"], capsys)
    assert result.code == 2 and "--kv-cache-dtype" in result.err
    result = run_cli(["size", "Qwen/Qwen3-8B", "--context", "lots"], capsys)
    assert result.code == 2 and "--context" in result.err


# --- deployment files ------------------------------------------------------------------------

VLLM_CONFIG = """\
# vllm serve --config serve.yaml
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32k
kv-cache-dtype: fp8
max-num-seqs: 64
gpu-memory-utilization: 0.9
"""


def _needs_deploy_loader() -> None:
    pytest.importorskip("kvlint.deploy.load", reason="the deployment loader is not in this tree")


def test_a_deployment_file_is_sized_with_its_own_settings(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _needs_deploy_loader()
    plan = tmp_path / "serve.yaml"
    plan.write_text(VLLM_CONFIG, encoding="utf-8")
    result = run_cli(["size", str(plan), "--format", "json"], capsys)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    (dep,) = data["deployments"]
    assert dep["path"] == str(plan)
    assert dep["model"] == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert dep["kv_cache_dtype"] == "fp8"
    assert dep["per_token_bytes"] == 65_536
    assert dep["context"] == 32_000 and dep["context_from"] == "max_model_len"
    assert dep["per_sequence_bytes"] == 32_000 * 65_536
    settings = dep["settings"]
    assert settings["max_model_len"] == {"value": 32_000, "line": 3, "column": 16, "default": False}
    assert settings["kv_cache_dtype"]["line"] == 4
    assert settings["max_num_seqs"]["value"] == 64
    assert dep["engine"]["engine"] == "vllm"
    assert "GPU type" in dep["missing"]


def test_a_deployment_whose_model_is_unknown_is_reported_with_its_position(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _needs_deploy_loader()
    plan = tmp_path / "serve.yaml"
    plan.write_text("model: acme/private-model\nmax-model-len: 4096\n", encoding="utf-8")
    result = run_cli(["size", str(plan), "--offline"], capsys)
    assert result.code == 2
    assert f"{plan}:1:8: KV902" in result.err
    assert "Traceback" not in result.err


@requires_shared
def test_every_real_deployment_file_sizes_or_says_why_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _needs_deploy_loader()
    from testing.shared import DEPLOYMENTS_REAL

    files = sorted(p for p in DEPLOYMENTS_REAL.iterdir() if p.suffix in (".yaml", ".yml"))
    assert len(files) >= 30
    for path in files:
        result = run_cli(["size", str(path), "--format", "json", "--offline"], capsys)
        assert result.code in (0, 2), (path.name, result.err)
        assert "internal error" not in result.err and "Traceback" not in result.err, path.name
        if result.code == 0:
            data = json.loads(result.out)
            assert data["deployments"], path.name
        else:  # said why, with a position or the file
            assert result.err.strip(), path.name


# --- the bundled examples (in the repository: these hold on a bare clone) ---------------------

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "size"


def test_the_bundled_model_directory(capsys: pytest.CaptureFixture[str]) -> None:
    data = size_json(capsys, str(EXAMPLES / "llama-3.1-70b"), "--context", "8k")
    assert data["resolved_from"] == "path"
    assert data["per_token_bytes"] == 327_680
    assert data["per_sequence_bytes"] == 2_621_440_000


def test_the_bundled_serve_file_sizes_max_num_seqs_sequences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _needs_deploy_loader()
    result = run_cli(["size", str(EXAMPLES / "serve.yaml"), "--format", "json"], capsys)
    assert result.code == 0, result.err
    (dep,) = json.loads(result.out)["deployments"]
    assert dep["context"] == 128_000 and dep["batch"] == 32
    assert dep["total_bytes"] == 32 * 41_943_040_000  # the seeds' 32 x 128K = 1,342 GB
    assert dep["settings"]["tensor_parallel_size"]["line"] == 4


def test_a_llama_cpp_compose_service_with_its_own_k_and_v_types(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _needs_deploy_loader()
    compose = tmp_path / "compose.yml"
    compose.write_text(
        "services:\n"
        "  llm:\n"
        "    image: ghcr.io/ggml-org/llama.cpp:server-cuda\n"
        "    command: -m /models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 8192 -np 4"
        " -fa on -ctk q8_0 -ctv q4_0\n",
        encoding="utf-8",
    )
    result = run_cli(["size", str(compose), "--format", "json"], capsys)
    assert result.code == 0, result.err
    (dep,) = json.loads(result.out)["deployments"]
    assert dep["resolved_from"] == "gguf"
    assert "with Q4_K_M weights" in dep["detail"]
    assert dep["kv_cache_dtype"] == "k=q8_0,v=q4_0"
    # 32 layers x 8 KV heads x 128 values: K in q8_0 (34 bytes / 32 values), V in q4_0 (18 / 32)
    assert dep["per_token_bytes"] == 32 * (1024 // 32 * 34 + 1024 // 32 * 18)
    assert dep["batch"] == 4
