"""resolve_model: local paths, the catalog, a real Hugging Face cache layout on disk, offline
refusals, refused ids, and the download's error path (against a closed loopback port)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from kvlint.errors import KvlintError
from kvlint.model.resolve import hub_cache_dir
from kvlint.model.resolve import resolve_model
from testing.shared import REPO

TINY = {
    "model_type": "llama",
    "num_hidden_layers": 4,
    "hidden_size": 512,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
    "vocab_size": 1000,
}
# 4 layers x 2 (K, V) x 2 KV heads x 64 head_dim x 2 bytes
TINY_PER_TOKEN = 4 * 2 * 2 * 64 * 2


@pytest.fixture(autouse=True)
def _no_ambient_hub_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    """Each test sees only the cache it builds: no user cache, no offline flag from outside."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-empty"))


def write_model_dir(folder: pathlib.Path, *, total_size: int | None = None) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(TINY), encoding="utf-8")
    if total_size is not None:
        index = {"metadata": {"total_size": total_size}, "weight_map": {}}
        (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    return folder


def write_hub_cache(
    cache: pathlib.Path, repo_id: str, *, total_size: int | None = None
) -> pathlib.Path:
    """The layout huggingface_hub writes: models--org--name/{refs/main, snapshots/<rev>/...}."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    snapshot = write_model_dir(repo / "snapshots" / revision, total_size=total_size)
    return snapshot / "config.json"


def test_a_config_json_path(tmp_path: pathlib.Path) -> None:
    folder = write_model_dir(tmp_path / "tiny")
    resolved = resolve_model(str(folder / "config.json"))
    assert resolved.origin == "path"
    assert resolved.spec.num_layers == 4 and resolved.spec.weight_bytes is None


def test_a_model_directory_reads_the_weight_size_from_the_safetensors_index(
    tmp_path: pathlib.Path,
) -> None:
    folder = write_model_dir(tmp_path / "tiny", total_size=123_456_789)
    resolved = resolve_model(str(folder))
    assert resolved.origin == "path"
    assert resolved.spec.weight_bytes == 123_456_789
    assert str(folder) in resolved.detail


def test_a_relative_path_is_read_against_base_dir(tmp_path: pathlib.Path) -> None:
    write_model_dir(tmp_path / "models" / "tiny")
    resolved = resolve_model("models/tiny", base_dir=tmp_path)
    assert resolved.origin == "path" and resolved.spec.num_layers == 4


def test_a_directory_without_config_json_says_so(tmp_path: pathlib.Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(KvlintError, match=r"has no config\.json"):
        resolve_model(str(tmp_path / "empty"))


def test_a_missing_config_path_says_it_does_not_exist(tmp_path: pathlib.Path) -> None:
    with pytest.raises(KvlintError, match="does not exist"):
        resolve_model(str(tmp_path / "nowhere" / "config.json"))


def test_a_malformed_config_names_the_file_and_position(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama",\n "num_hidden_layers": }', encoding="utf-8")
    with pytest.raises(KvlintError) as info:
        resolve_model(str(bad))
    assert str(info.value).startswith(f"{bad}:2:")


def test_the_catalog_answers_offline_with_aliases() -> None:
    resolved = resolve_model("meta-llama/Llama-3.1-70B-Instruct", offline=True)
    assert resolved.origin == "catalog"
    assert resolved.spec.name == "meta-llama/Meta-Llama-3.1-70B-Instruct"
    assert "catalog" in resolved.detail


def test_a_local_path_that_is_not_here_but_names_a_catalog_model() -> None:
    resolved = resolve_model("/models/deepseek-ai/DeepSeek-R1", offline=True)
    assert resolved.origin == "catalog"
    assert resolved.spec.name == "deepseek-ai/DeepSeek-R1"
    assert "not on this machine" in resolved.detail


def test_the_hf_cache_through_hf_hub_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    cache = tmp_path / "hub-cache"
    config = write_hub_cache(cache, "acme/tiny-llama", total_size=42_000)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    resolved = resolve_model("acme/tiny-llama", offline=True)
    assert resolved.origin == "hf-cache"
    assert resolved.spec.name == "acme/tiny-llama"
    assert resolved.spec.weight_bytes == 42_000
    assert str(config) in resolved.detail


def test_the_hf_cache_through_hf_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    home = tmp_path / "hf-home"
    write_hub_cache(home / "hub", "acme/tiny-llama")
    monkeypatch.setenv("HF_HOME", str(home))
    assert hub_cache_dir() == home / "hub"
    resolved = resolve_model("acme/tiny-llama")  # found in the cache: no download attempted
    assert resolved.origin == "hf-cache"
    from kvlint.arith.kv import kv_size

    assert kv_size(resolved.spec).per_token_bytes == TINY_PER_TOKEN


def test_offline_refusal_says_how_to_make_the_model_known(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(KvlintError) as info:
        resolve_model("acme/not-cached", offline=True)
    message = str(info.value)
    assert "'acme/not-cached'" in message
    assert "--offline" in message
    assert "kvlint models" in message and "HF_HOME" in message and "config.json" in message
    assert str(tmp_path / "empty-cache") in message


def test_hf_hub_offline_is_honoured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(KvlintError, match="HF_HUB_OFFLINE is set"):
        resolve_model("acme/not-cached")


@pytest.mark.parametrize(
    "ref",
    ["../../etc/passwd", "acme/bad name", "acme/x;rm -rf", "acme--x/y", "acme/..", "$(whoami)"],
)
def test_illegal_model_ids_are_refused(ref: str) -> None:
    with pytest.raises(KvlintError) as info:
        resolve_model(ref, offline=True)
    message = str(info.value)
    assert "\n" not in message
    assert (
        ("not a model kvlint can look up" in message)
        or ("is not a model" in message)
        or ("does not exist" in message)
    )


def test_an_existing_file_that_is_not_a_model_is_refused(tmp_path: pathlib.Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello", encoding="utf-8")
    with pytest.raises(KvlintError, match="is not a model"):
        resolve_model(str(other))


def test_an_empty_reference_is_refused() -> None:
    with pytest.raises(KvlintError, match="empty model reference"):
        resolve_model("  ")


def test_a_failed_download_is_one_line_and_never_prints_the_token(tmp_path: pathlib.Path) -> None:
    """The download path against a closed loopback port: no network, a real huggingface_hub."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HF_", "HUGGINGFACE_"))
    }
    env.update(
        HF_ENDPOINT="http://127.0.0.1:9",
        HF_HUB_CACHE=str(tmp_path / "cache"),
        HF_TOKEN="hf_kvlintTestSecretToken0123456789",
        HF_HUB_DISABLE_TELEMETRY="1",
        KVLINT_HUB_TIMEOUT="1",
    )
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", "size", "acme/not-anywhere"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "hf_kvlintTestSecretToken" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvlint: model 'acme/not-anywhere'")
    assert "Traceback" not in result.stderr


def test_an_ambiguous_bare_name_lists_the_candidates() -> None:
    with pytest.raises(KvlintError) as info:
        resolve_model("Meta-Llama-3.1-405B-Instruct-FP8", offline=True)
    message = str(info.value)
    assert "ambiguous" in message
    assert "meta-llama/Meta-Llama-3.1-405B-Instruct-FP8" in message
    assert "neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8" in message
