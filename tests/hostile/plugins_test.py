"""Third-party rules isolated like files (issue 15, item 3): a rule that exits, raises
GeneratorExit or KeyboardInterrupt, loops forever, yields something that is not a Problem, or
prints; a plugin whose import hangs or prints, or whose doc() raises. Each is one KV909 finding
(or one plugin warning) naming the plugin, the other rules' findings survive, JSON stays JSON,
and the run exits 2: never exit 0, a traceback or a hang. The real CLI in a virtual environment
that has the plugins installed (testing/plugins.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testing.plugins import add_distribution
from testing.plugins import make_env
from testing.plugins import python
from testing.plugins import run_kvlint
from testing.shared import REPO

DOC = '''"""## What it does
    Checks something.

    ## Why is this bad?
    It is.

    ## Example
    ```yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    ```

    Use instead:
    ```yaml
    model: meta-llama/Llama-3.1-8B-Instruct
    ```
    """'''

RULES = {
    "HOST001": "import sys\n        sys.exit(0)",
    "HOST002": "raise GeneratorExit",
    "HOST003": "raise KeyboardInterrupt",
    "HOST004": "while True:\n            pass",
    "HOST005": 'yield "a string"',
    "HOST006": 'yield Problem(dep.span, "bad severity", severity="high")',
    "HOST007": 'print("noise from a rule")\n        yield Problem(dep.span, "printed and found")',
}
# The twin: a well-behaved plugin rule, whose finding must be there whatever the others do.
GOOD = 'yield Problem(dep.span, "a good plugin finding")'


def _rule(code: str, body: str) -> str:
    return f'''
class Rule{code}(Rule):
    {DOC}

    code = "{code}"
    name = "rule-{code.lower()}"
    severity = Severity.WARNING
    needs_model = False

    def check(self, dep, sizing):
        {body}
        yield from ()
'''


HEADER = """\
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.rule import Rule
print("noise at import")
"""


def _module(rules: dict[str, str]) -> str:
    body = "".join(_rule(code, text) for code, text in rules.items())
    names = ", ".join(f"Rule{code}" for code in rules)
    return f"{HEADER}{body}\n\ndef get_rules():\n    return [{names}]\n"


DOC_RAISES = f"""{HEADER}
class Broken(Rule):
    {DOC}
    code = "DOCX001"
    name = "doc-raises"
    severity = Severity.WARNING

    @classmethod
    def doc(cls):
        raise SystemExit(3)


def get_rules():
    return [Broken]
"""
HANGS = "while True:\n    pass\n"
DEPLOY = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 4096\n"
ENV = {"KVLINT_RULE_TIMEOUT": "1", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-plugins")
    venv = root / "env"
    site_dir = make_env(venv)
    add_distribution(
        site_dir,
        "kvlint-plugin-hostile",
        "hostile = hostile_rules",
        {"hostile_rules.py": _module(RULES)},
    )
    good = {"HOST100": GOOD}
    add_distribution(
        site_dir, "kvlint-plugin-good", "good = good_rules", {"good_rules.py": _module(good)}
    )
    add_distribution(site_dir, "kvlint-plugin-doc", "doc = doc_rules", {"doc_rules.py": DOC_RAISES})
    add_distribution(
        site_dir, "kvlint-plugin-hangs", "hangs = hangs_rules", {"hangs_rules.py": HANGS}
    )
    return venv


def check(env: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    done = run_kvlint(env, "check", "--no-config", *args, "deploy.yaml", cwd=tmp_path, env=ENV)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


def test_every_misbehaving_rule_is_one_kv908_naming_its_plugin(env: Path, tmp_path: Path) -> None:
    done = check(env, tmp_path, "--format", "json")
    assert done.stdout.startswith("{"), (done.returncode, done.stderr)
    report = json.loads(done.stdout)  # nothing a plugin printed is in it
    assert done.returncode == 2, done.stderr
    failures = {f["message"] for f in report["findings"] if f["code"] == "KV909"}
    prefix = "rule {} `rule-{}` of 'kvlint-plugin-hostile' failed, so its findings on this "
    prefix += "deployment are missing: "
    reasons = {
        "HOST001": "SystemExit: sys.exit(0)",
        "HOST002": "GeneratorExit",
        "HOST003": "KeyboardInterrupt (raised by the plugin itself)",
        "HOST004": "did not finish within 1 s (KVLINT_RULE_TIMEOUT)",
        "HOST005": "it yielded a str, not a kvlint.finding.Problem",
        "HOST006": "it yielded a Problem whose severity 'high' is not a kvlint.finding.Severity",
    }
    assert failures == {prefix.format(c, c.lower()) + why for c, why in reasons.items()}
    messages = {(f["code"], f["message"]) for f in report["findings"]}
    assert ("HOST007", "printed and found") in messages
    assert ("HOST100", "a good plugin finding") in messages
    assert any(code == "KV907" for code, _ in messages)  # the built-in rules ran too
    assert "noise from a rule" in done.stderr and "noise at import" in done.stderr
    # The plugins that could not load are named once each, the run went on.
    errors = {e["package"]: e["message"] for e in report["plugin_errors"]}
    assert errors == {
        "kvlint-plugin-doc": "Broken: SystemExit: sys.exit(3)",
        "kvlint-plugin-hangs": "did not finish within 1 s (KVLINT_RULE_TIMEOUT)",
    }


def test_a_plugins_keyboard_interrupt_in_a_background_run(env: Path, tmp_path: Path) -> None:
    """A run started in the background (`kvlint check . &` in a script, nohup, some CI steps)
    inherits SIGINT ignored, so no Ctrl-C can reach it: a plugin's KeyboardInterrupt ended it
    with exit 130 and no report (the merge train, run from a background job, saw it)."""
    import os
    import signal

    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    done = subprocess.run(
        [python(env), "-m", "kvlint", "check", "--no-config", "--select", "HOST003", "deploy.yaml"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **ENV},
        cwd=tmp_path,
        check=False,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout.splitlines() == [
        "deploy.yaml:1:1: KV909 [error] rule HOST003 `rule-host003` of 'kvlint-plugin-hostile' "
        "failed, so its findings on this deployment are missing: KeyboardInterrupt (raised by "
        "the plugin itself)"
    ]


def test_a_rule_calling_sys_exit_0_never_makes_the_run_pass(env: Path, tmp_path: Path) -> None:
    done = check(env, tmp_path, "--format", "concise", "--select", "HOST001")
    assert done.returncode == 2
    assert done.stdout.splitlines() == [
        "deploy.yaml:1:1: KV909 [error] rule HOST001 `rule-host001` of 'kvlint-plugin-hostile' "
        "failed, so its findings on this deployment are missing: SystemExit: sys.exit(0)"
    ]


def test_the_twin_a_good_plugin_alone(env: Path, tmp_path: Path) -> None:
    done = check(env, tmp_path, "--format", "concise", "--select", "HOST100")
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["deploy.yaml:1:1: HOST100 [warning] a good plugin finding"]


def test_rules_lists_every_rule_that_loaded(env: Path) -> None:
    done = run_kvlint(env, "rules", "--format", "json", env=ENV)
    assert done.returncode == 0, done.stderr
    codes = {rule["code"] for rule in json.loads(done.stdout)}
    assert {"KV301", "HOST001", "HOST100"} <= codes and "DOCX001" not in codes
    assert "kvlint: warning: plugin 'kvlint-plugin-doc' (doc = doc_rules): Broken: SystemExit" in (
        done.stderr
    )


SWALLOWS = {
    "HOLD001": "import time\n        while True:\n            try:\n"
    "                time.sleep(10)\n            except BaseException:\n                pass"
}


def test_a_rule_that_swallows_its_deadline_stops_the_run(tmp_path: Path) -> None:
    """Raised into again every second; after five times the run stops with exit 2 rather than
    hang (a CI job would otherwise wait for its own timeout, hours later)."""
    venv = tmp_path / "env"
    site_dir = make_env(venv)
    add_distribution(
        site_dir,
        "kvlint-plugin-holds",
        "holds = holds_rules",
        {"holds_rules.py": _module(SWALLOWS)},
    )
    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    done = run_kvlint(
        venv, "check", "--no-config", "deploy.yaml", cwd=tmp_path, env=ENV, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "kvlint: rule HOLD001 of 'kvlint-plugin-holds' ignored its deadline 5 times; the run is "
        "stopped"
    )
