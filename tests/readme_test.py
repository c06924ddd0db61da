"""The README's promises: its set-up commands are what CI runs, its rules table is current."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from scripts.update_readme_rules import README
from scripts.update_readme_rules import updated

REPO = Path(__file__).resolve().parent.parent


def _setup_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)


def test_setup_is_two_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    test_command = _setup_commands()[1]
    ci_lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci_lines


def test_the_first_command_runs_kvlint_on_a_bundled_example() -> None:
    install, run = _setup_commands()[0].split(" && ")
    assert install == "python3 -m pip install ."
    argv = run.split()
    assert argv[0] == "kvlint"
    assert (REPO / argv[-1]).is_file()
    # The bundled example has findings, offline, from the built-in catalog: exit 1, not 2.
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", *argv[1:], "--offline", "--format", "concise"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"},
    )
    assert result.returncode == 1, result.stderr
    codes = set(re.findall(r": (KV\d{3}) ", result.stdout))
    assert {"KV101", "KV201", "KV301", "KV401"} <= codes
    assert "Traceback" not in result.stderr


def test_rules_table_is_generated_from_the_registry() -> None:
    text = README.read_text(encoding="utf-8")
    assert updated(text) == text, "run scripts/update_readme_rules.py"


def test_what_it_says_is_what_kvlint_says() -> None:
    """The README's sample output is the real output on the bundled example."""
    text = README.read_text(encoding="utf-8")
    command = "$ kvlint check examples/deploy.yaml --format concise\n"
    shown = text.split(command, 1)[1].split("```", 1)[0]
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", "check", "examples/deploy.yaml", "--format", "concise"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert result.stdout == shown


def test_the_plan_example_is_valid_and_holds(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## The plan format", 1)[1].split("\n## ", 1)[0]
    plan, mac = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    (tmp_path / "plan.yaml").write_text(plan, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", "check", "plan.yaml", "--fail-on", "info"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    # The Mac Studio example holds at its own figures: infos only (the model matched by name,
    # the sliding windows), no warning.
    (tmp_path / "mac.yaml").write_text(mac, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "kvlint", "check", "mac.yaml", "--format", "concise"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stdout
    assert "KV301" not in result.stdout
