"""A pull request's checkout never runs code: the Action's run step and ``python -m kvlint``
inside it ignore a ``*.dist-info`` declaring a rule, a ``kvlint/`` package, a ``kvlint_rules/``
package and a ``yaml.py`` that the checkout carries (issue 15, item 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.runner import ROOT
from tests.hostile.runner import run_kvlint

SCRIPT = ROOT / "scripts" / "action.sh"
DEPLOY = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 4096\n"


def _pwn(name: str) -> str:
    """Python that leaves a ``PWNED-<name>`` file in the working directory when it runs."""
    return f"open('PWNED-{name}', 'w').close()\n"


def hostile_checkout(root: Path, *, own_package: bool) -> Path:
    """A workspace as a pull request can make it: every way to get code onto ``sys.path``."""
    root.mkdir()
    (root / "deploy.yaml").write_text(DEPLOY)
    info = root / "pwn-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pwn\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[kvlint.rules]\npwn = pwnmod\n")
    (root / "pwnmod.py").write_text(_pwn("entry-point") + "def get_rules():\n    return []\n")
    (root / "yaml.py").write_text(_pwn("yaml"))
    (root / "kvlint_rules").mkdir()
    (root / "kvlint_rules" / "__init__.py").write_text(_pwn("kvlint-rules"))
    if own_package:  # only the Action can be protected from this one (python -I)
        (root / "kvlint").mkdir()
        (root / "kvlint" / "__init__.py").write_text(_pwn("kvlint-package"))
        (root / "kvlint" / "action.py").write_text(_pwn("kvlint-action"))
    return root


def pwned(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("PWNED-*"))


def test_the_action_run_step_runs_no_code_of_the_checkout(tmp_path: Path) -> None:
    workspace = hostile_checkout(tmp_path / "workspace", own_package=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        KVLINT_PYTHON=sys.executable,
        # What a careless workflow could set; the run step must not let it reach sys.path.
        PYTHONPATH=str(workspace),
        GITHUB_ACTIONS="true",
        INPUT_PATHS="deploy.yaml",
        INPUT_ARGS="--offline --no-config",
        INPUT_SARIF_FILE="",
        INPUT_SUMMARY="false",
        HF_HUB_OFFLINE="1",
    )
    done = subprocess.run(
        ["bash", str(SCRIPT), "run"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pwned(workspace) == [], done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    # kvlint itself ran: its annotation for the missing GPU is there, no plugin was loaded.
    assert done.stdout.startswith("::notice file=deploy.yaml,line=1,col=1,"), done.stdout
    assert "plugin" not in done.stdout + done.stderr


def test_python_m_kvlint_in_a_checkout_loads_no_rule_and_no_module_from_it(
    tmp_path: Path,
) -> None:
    workspace = hostile_checkout(tmp_path / "workspace", own_package=False)
    outcome = run_kvlint(
        ["check", "--offline", "--no-config", "--format", "concise", "."], workspace
    )
    assert pwned(workspace) == [], outcome.text
    assert outcome.code == 0, outcome.text
    assert outcome.lines() == [
        "deploy.yaml:1:1: KV907 [info] the files do not give the GPU type: the checks that need it "
        "did not run (name the GPU with `--gpu` or `gpu` in the kvlint config)"
    ]


def test_rules_lists_no_rule_of_the_working_directory(tmp_path: Path) -> None:
    workspace = hostile_checkout(tmp_path / "workspace", own_package=False)
    outcome = run_kvlint(["rules", "--format", "json"], workspace)
    assert pwned(workspace) == [], outcome.text
    assert outcome.code == 0, outcome.text
    assert '"pwn"' not in outcome.out


@pytest.mark.parametrize("entry", ["", "."])
def test_the_entry_point_reader_skips_the_working_directory(
    entry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kvlint.entry_points import entry_points
    from kvlint.entry_points import site_directories

    workspace = hostile_checkout(tmp_path / "workspace", own_package=False)
    monkeypatch.chdir(workspace)
    monkeypatch.setattr(sys, "path", [entry, str(workspace), *sys.path])
    assert str(workspace) not in site_directories()
    found = entry_points("kvlint.rules")
    assert found is not None
    assert [ep.package for ep in found if ep.name == "pwn"] == []
