"""``--fix`` writes only inside the checked tree, and reports never write through a link the
repository holds nor over a checked file (issue 15, item 2): the real CLI as a child."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import ROOT
from tests.hostile.runner import Outcome
from tests.hostile.runner import run_kvlint

# A plan whose stated KV figure is the cancelled formula: KV101 with a safe fix.
PLAN = """\
kvlint: plan/v1
name: llama-70b
engine: vllm
model: meta-llama/Llama-3.1-70B-Instruct
gpu: H100-80GB
gpus: 4
settings:
  tensor-parallel-size: 4
  max-model-len: 8192
claims:
  kv_per_token: 2.5 MiB
"""
FIX = ("check", "--offline", "--no-config", "--format", "concise", "--fix")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository ``repo/`` (with ``.git``) beside a folder ``outside/`` it must not touch."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "deploy").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.yaml").write_text(PLAN)
    return root


def fix(repo: Path, *args: str) -> Outcome:
    outcome = run_kvlint([*FIX, *args], repo)
    assert_well_behaved(outcome, concise=False)
    return outcome


def refusals(outcome: Outcome) -> list[str]:
    return [line for line in outcome.err.splitlines() if "fix not applied" in line]


def test_a_fixable_file_is_fixed(repo: Path) -> None:
    """The twin of the refusals below: a plain file in the tree is rewritten."""
    (repo / "deploy" / "plan.yaml").write_text(PLAN)
    outcome = fix(repo, "deploy")
    assert "kv_per_token: 320 KiB" in (repo / "deploy" / "plan.yaml").read_text(), outcome
    assert refusals(outcome) == []


@pytest.mark.parametrize("given", ["deploy", "deploy/link.yaml", "."])
def test_a_symlink_out_of_the_repository_is_checked_never_written(repo: Path, given: str) -> None:
    victim = repo.parent / "outside" / "victim.yaml"
    (repo / "deploy" / "link.yaml").symlink_to(victim)
    outcome = fix(repo, given)
    assert victim.read_text() == PLAN
    shown = "deploy/link.yaml"
    assert refusals(outcome) == [
        f"kvlint: {shown}:11:17: KV101 fix not applied: `{shown}` is a symlink to `{victim}`, "
        "outside the checked paths: not written"
    ]
    # The check still ran on it: the finding is reported, so the run fails.
    assert f"{shown}:11:17: KV101 " in outcome.out
    assert outcome.code == 1


def test_a_symlink_out_of_the_checked_folder_is_not_written(repo: Path) -> None:
    """Inside the repository but outside the folder given: not the checked tree either."""
    (repo / "other").mkdir()
    target = repo / "other" / "plan.yaml"
    target.write_text(PLAN)
    (repo / "deploy" / "link.yaml").symlink_to(Path("..") / "other" / "plan.yaml")
    outcome = fix(repo, "deploy")
    assert target.read_text() == PLAN
    assert len(refusals(outcome)) == 1 and "outside the checked paths" in refusals(outcome)[0]


def test_a_linked_folder_out_of_the_repository_is_not_written(repo: Path) -> None:
    (repo / "linked").symlink_to(repo.parent / "outside")
    outcome = fix(repo, "linked")
    assert (repo.parent / "outside" / "victim.yaml").read_text() == PLAN
    victim = repo.parent / "outside" / "victim.yaml"
    assert refusals(outcome) == [
        f"kvlint: linked/victim.yaml:11:17: KV101 fix not applied: `linked/victim.yaml` "
        f"resolves to `{victim}`, outside the repository: not written"
    ]


def test_a_read_only_file_is_not_rewritten(repo: Path) -> None:
    plan = repo / "deploy" / "plan.yaml"
    plan.write_text(PLAN)
    plan.chmod(0o444)
    outcome = fix(repo, "deploy")
    assert plan.read_text() == PLAN
    assert refusals(outcome) == [
        "kvlint: deploy/plan.yaml:11:17: KV101 fix not applied: `deploy/plan.yaml` is "
        "read-only: not rewritten"
    ]


def test_a_hard_link_is_not_split(repo: Path) -> None:
    victim = repo.parent / "outside" / "victim.yaml"
    os.link(victim, repo / "deploy" / "plan.yaml")
    outcome = fix(repo, "deploy")
    assert victim.read_text() == PLAN
    assert os.stat(victim).st_nlink == 2
    assert refusals(outcome) == [
        "kvlint: deploy/plan.yaml:11:17: KV101 fix not applied: `deploy/plan.yaml` has 2 hard "
        "links: rewriting it would split them, so it is not written"
    ]


def test_diff_leaves_out_what_fix_would_not_write(repo: Path) -> None:
    victim = repo.parent / "outside" / "victim.yaml"
    (repo / "deploy" / "link.yaml").symlink_to(victim)
    outcome = run_kvlint(["check", "--offline", "--no-config", "--diff", "deploy"], repo)
    assert outcome.out == ""
    assert len(refusals(outcome)) == 1
    assert outcome.code == 0


def test_output_file_never_writes_through_a_link_in_the_repository(repo: Path) -> None:
    victim = repo.parent / "outside" / "victim.yaml"
    (repo / "deploy" / "plan.yaml").write_text(PLAN)
    (repo / "report.json").symlink_to(victim)
    args = ["check", "--offline", "--no-config", "--output-file", "report.json", "deploy"]
    outcome = run_kvlint(args, repo)
    assert_well_behaved(outcome, concise=False)
    assert victim.read_text() == PLAN
    assert outcome.code == 2
    assert outcome.err.splitlines() == [
        "kvlint: report.json: a symlink in the checked tree (`"
        f"{repo / 'report.json'}`): not written through"
    ]


def test_output_file_never_overwrites_a_checked_file(repo: Path) -> None:
    plan = repo / "deploy" / "plan.yaml"
    plan.write_text(PLAN)
    outcome = run_kvlint(
        ["check", "--offline", "--no-config", "--output-file", "deploy/plan.yaml", "deploy"], repo
    )
    assert plan.read_text() == PLAN
    assert outcome.code == 2
    assert outcome.err.splitlines() == [
        "kvlint: deploy/plan.yaml: is one of the checked files: not overwritten"
    ]


@pytest.mark.parametrize("output", ["sarif", "summary"])
def test_the_action_never_writes_through_a_link_in_the_workspace(repo: Path, output: str) -> None:
    victim = repo.parent / "outside" / "victim.yaml"
    (repo / "deploy" / "plan.yaml").write_text(PLAN)
    (repo / "kvlint.out").symlink_to(victim)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        KVLINT_PYTHON=sys.executable,
        GITHUB_ACTIONS="true",
        INPUT_PATHS="deploy",
        INPUT_ARGS="--offline --no-config",
        INPUT_SARIF_FILE="kvlint.out" if output == "sarif" else "",
        INPUT_SUMMARY="true",
        HF_HUB_OFFLINE="1",
    )
    if output == "summary":
        env["GITHUB_STEP_SUMMARY"] = str(repo / "kvlint.out")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "action.sh"), "run"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert victim.read_text() == PLAN
    assert done.returncode == 2, done.stdout + done.stderr
    given = "kvlint.out" if output == "sarif" else env["GITHUB_STEP_SUMMARY"]
    assert done.stderr.splitlines() == [
        f"kvlint: {given}: a symlink in the checked tree (`{repo / 'kvlint.out'}`): not "
        "written through"
    ]
