"""The example third-party plugin, installed with pip into a temporary folder: its rule loads and
runs; a plugin that fails to import is isolated and named; a clashing code is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from testing.shared import REPO

EXAMPLE = REPO / "examples" / "kvlint-plugin-example"


def _dist_info(target: Path, name: str, entry_point: str) -> None:
    """A hand-made installed distribution: just enough metadata for importlib.metadata."""
    info = target / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[kvlint.rules]\n{entry_point}\n")


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
    """A virtual environment whose site directory holds the example, installed by pip (from a
    copy: a build writes nothing into the repository), plus a plugin that cannot be imported
    and one whose rule reuses a built-in code. kvlint reads rules only from an environment's
    site directories (never a PYTHONPATH or working-directory folder); the environment finds
    kvlint and its dependencies through this test run's own site directory."""
    root = tmp_path_factory.mktemp("plugins")
    source = root / "src"
    shutil.copytree(EXAMPLE, source)
    venv = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = _python(venv)
    site_dir = Path(
        subprocess.run(
            [python, "-c", "import site; print(site.getsitepackages()[0])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    ours = sysconfig.get_paths()["purelib"]
    (site_dir / "kvlint-test-base.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "-q"]
    subprocess.run(
        [*pip, "--no-index", "--no-deps", "--target", str(site_dir), str(source)],
        check=True,
        capture_output=True,
    )
    _dist_info(site_dir, "kvlint-plugin-broken", "broken = kvlint_plugin_not_there")
    _dist_info(site_dir, "kvlint-plugin-clash", "clash = kvlint_plugin_clash")
    (site_dir / "kvlint_plugin_clash.py").write_text(CLASH)
    return venv


def _python(venv: Path) -> str:
    return str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))


def kvlint(env: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO)}
    environ.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [_python(env), "-m", "kvlint", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        check=False,
    )


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
