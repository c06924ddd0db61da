"""The pre-commit hook, for real: `pre-commit try-repo` of this repository in a fresh git repo.

pre-commit builds the hook's environment the way a user's machine does, installing kvlint and
its dependencies from the package registry; the test is skipped (with the reason) only when
that registry cannot be reached. It tries the committed HEAD (``--ref``): try-repo on a dirty
work tree would copy uncommitted changes of tracked files into a shadow repository, which in a
shared work tree means someone else's half-written file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent

# A vLLM config for Llama 3.1 8B on one H100 (named in the kvlint config): 256 sequences of
# 32K cannot fit in the ~60 GB pool (KV301, a warning: the hook fails at the default fail-on).
OVER_BUDGET = """\
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 256
"""
WITHIN_BUDGET = OVER_BUDGET.replace("max-num-seqs: 256", "max-num-seqs: 4")
CONFIG = "gpu: H100-SXM-80GB\n"

# What pip prints when it cannot reach the index: then the test is skipped, not failed.
_UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Network is unreachable|ConnectTimeoutError|ReadTimeoutError|ProxyError"
)


def test_manifest_declares_the_kvlint_hook() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    by_id = {hook["id"]: hook for hook in hooks}
    kvlint = by_id["kvlint"]
    assert kvlint["entry"] == "kvlint check"
    assert kvlint["language"] == "python"
    assert kvlint["types_or"] == ["yaml", "json"]
    # pre-commit's own manifest validation, as `pre-commit try-repo` and autoupdate do it.
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _try_repo(project: Path, ref: str, *files: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT"))}
    env["NO_COLOR"] = "1"
    command = [
        sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "kvlint",
        "--ref", ref, "--color", "never", "--files", *files,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    output = done.stdout + done.stderr
    if done.returncode != 0 and _UNREACHABLE.search(output):
        pytest.skip(f"the package registry cannot be reached:\n{output[-2000:]}")
    return done


@pytest.mark.network
def test_pre_commit_try_repo_fails_on_kv301_and_passes_a_clean_file(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout: try-repo needs one")
    ref = _git(REPO, "rev-parse", "HEAD")
    if not _git(REPO, "ls-tree", "--name-only", ref, ".pre-commit-hooks.yaml"):
        pytest.skip(".pre-commit-hooks.yaml is not committed yet")

    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "deploy").mkdir()
    (project / "deploy" / "over.yaml").write_text(OVER_BUDGET, encoding="utf-8")
    (project / "deploy" / "within.yaml").write_text(WITHIN_BUDGET, encoding="utf-8")
    (project / ".kvlint.yaml").write_text(CONFIG, encoding="utf-8")
    _git(project, "add", ".")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")

    failed = _try_repo(project, ref, "deploy/over.yaml")
    out = failed.stdout + failed.stderr
    assert failed.returncode == 1, out
    assert re.search(r"^kvlint\.+Failed$", out, re.MULTILINE), out
    assert re.search(r"^deploy/over\.yaml:3:15: KV301 .*`max_num_seqs` 256 ", out, re.MULTILINE), (
        out
    )

    passed = _try_repo(project, ref, "deploy/within.yaml")
    out = passed.stdout + passed.stderr
    assert passed.returncode == 0, out
    assert re.search(r"^kvlint\.+Passed$", out, re.MULTILINE), out
    assert "KV301" not in out
