"""The example third-party plugin, installed with pip into a temporary folder: its rule loads and
runs; a plugin that fails to import is isolated and named; a clashing code is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.plugins import add_distribution
from testing.plugins import make_env
from testing.plugins import run_kvlint
from testing.shared import REPO

EXAMPLE = REPO / "examples" / "kvlint-plugin-example"


CLASH = """
from kvlint.finding import Severity
from kvlint_rules.unknown_engine_flag import UnknownEngineFlag


class Clash(UnknownEngineFlag):
    code = "KV501"
    name = "clashing-rule"
    severity = Severity.ERROR


def get_rules():
    return [Clash]
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment holding the example, installed by pip (from a copy: a build
    writes nothing into the repository), a plugin that cannot be imported and one whose rule
    reuses a built-in code (testing/plugins.py: rules come only from site directories)."""
    root = tmp_path_factory.mktemp("plugins")
    source = root / "src"
    shutil.copytree(EXAMPLE, source)
    venv = root / "env"
    site_dir = make_env(venv)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "-q"]
    # Below 3.11 the example's backend reads its pyproject.toml with tomli, a build requirement
    # there that no index offers offline: it is built in this environment (tomli is a test
    # dependency) instead of an isolated one.
    isolation = ["--no-build-isolation"] if sys.version_info < (3, 11) else []
    subprocess.run(
        [*pip, "--no-index", "--no-deps", *isolation, "--target", str(site_dir), str(source)],
        check=True,
        capture_output=True,
    )
    add_distribution(site_dir, "kvlint-plugin-broken", "broken = kvlint_plugin_not_there", {})
    add_distribution(
        site_dir,
        "kvlint-plugin-clash",
        "clash = kvlint_plugin_clash",
        {"kvlint_plugin_clash.py": CLASH},
    )
    return venv


def kvlint(env: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_kvlint(env, *args, cwd=cwd)


def test_plugin_rule_is_listed_and_failures_are_isolated(env: Path) -> None:
    result = kvlint(env, "rules", "--format", "json")
    assert result.returncode == 0
    rules = {rule["code"]: rule for rule in json.loads(result.stdout)}
    assert rules["ACME001"]["package"] == "kvlint-plugin-example"
    assert rules["ACME001"]["name"] == "memory-fraction-above-policy"
    assert rules["KV501"]["name"] == "unknown-engine-flag"  # the built-in kept its code
    assert result.stderr.splitlines() == [
        "kvlint: warning: plugin 'kvlint-plugin-broken' (broken = kvlint_plugin_not_there): "
        "ModuleNotFoundError: No module named 'kvlint_plugin_not_there'",
        "kvlint: warning: plugin 'kvlint-plugin-clash' (clash = kvlint_plugin_clash): "
        "Clash: code KV501: the `KV` prefix is reserved for kvlint's built-in rules",
    ]


def test_plugin_rule_explain(env: Path) -> None:
    result = kvlint(env, "explain", "ACME001")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == (
        "ACME001 memory-fraction-above-policy (severity: warning; engines: sglang, vllm; "
        "fixable: no)"
    )


def test_plugin_rule_runs_with_its_options(env: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "vllm.yaml").write_text(
        "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\n"
        "gpu-memory-utilization: 0.97\n",
        encoding="utf-8",
    )
    args = ("check", "vllm.yaml", "--offline", "--format", "json", "--select", "ACME001")
    result = kvlint(env, *args, cwd=tmp_path)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert [(f["code"], f["line"], f["column"], f["message"]) for f in document["findings"]] == [
        ("ACME001", 3, 25, "memory fraction 0.97 is above Acme's limit of 0.9")
    ]
    assert [e["package"] for e in document["plugin_errors"]] == [
        "kvlint-plugin-broken",
        "kvlint-plugin-clash",
    ]
    (tmp_path / ".kvlint.yaml").write_text("rules:\n  ACME001: {limit: 0.98}\n", encoding="utf-8")
    assert kvlint(env, *args, cwd=tmp_path).returncode == 0
    (tmp_path / ".kvlint.yaml").write_text("rules:\n  ACME001: {limit: 2}\n", encoding="utf-8")
    result = kvlint(env, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"kvlint: {(tmp_path / '.kvlint.yaml').resolve()}:2:13: `rules.ACME001.limit`: "
        "Input should be less than or equal to 1"
    )
