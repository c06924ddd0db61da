"""Config per file (kvlint.config_tree) and what a folder walk skips (kvlint.files), through the
real CLI: each file gets its nearest config, as ruff's hierarchical configuration does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.cli import run_cli

# vLLM config of Llama 3.1 8B with a misspelt flag: KV501 (error) and, no GPU named, KV907.
TYPO = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\ngpu-memory-utilisation: 0.9\n"


@pytest.fixture(autouse=True)
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # the config search stops here
    return tmp_path


def write(name: str, text: str) -> str:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return name


def codes(out: str) -> list[tuple[str, str]]:
    """(path, code) of each concise line."""
    return [(line.split(":")[0], line.split(": ")[1].split()[0]) for line in out.splitlines()]


def two_teams() -> None:
    write("teamA/.kvlint.yaml", "ignore: [KV501]\n")
    write("teamA/vllm.yaml", TYPO)
    write("teamB/.kvlint.yaml", "ignore: [KV907]\ngpu: H100-SXM-80GB\n")
    write("teamB/vllm.yaml", TYPO)


@pytest.mark.parametrize("order", [["teamA", "teamB"], ["teamB", "teamA"]])
def test_each_folder_gets_its_own_config_in_either_order(
    order: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    two_teams()
    result = run_cli(["check", *order], capsys)
    found = sorted(codes(result.out))
    # Team A ignores the flag typo, team B the missing GPU (and names one).
    assert found == [("teamA/vllm.yaml", "KV907"), ("teamB/vllm.yaml", "KV501")]
    assert result.code == 1


def test_pre_commit_batches_get_the_same_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit passes files in batches of its choosing: one at a time, or both at once."""
    two_teams()
    together = run_cli(["check", "teamB/vllm.yaml", "teamA/vllm.yaml"], capsys).out
    apart = "".join(
        run_cli(["check", f], capsys).out for f in ("teamB/vllm.yaml", "teamA/vllm.yaml")
    )
    assert sorted(together.splitlines()) == sorted(apart.splitlines())
    assert len(together.splitlines()) == 2


def test_a_nested_config_wins_over_the_repository_one(capsys: pytest.CaptureFixture[str]) -> None:
    write("pyproject.toml", "[tool.kvlint]\nignore = ['KV907']\n")
    write("deploy/vllm.yaml", TYPO)
    write("deploy/legacy/.kvlint.yaml", "select: [KV9]\n")
    write("deploy/legacy/vllm.yaml", TYPO)
    result = run_cli(["check", "."], capsys)
    assert codes(result.out) == [
        ("deploy/legacy/vllm.yaml", "KV907"),  # its own config: KV9 only, nothing ignored
        ("deploy/vllm.yaml", "KV501"),  # pyproject.toml: KV907 ignored
    ]


def test_config_flag_gives_every_file_one_config(capsys: pytest.CaptureFixture[str]) -> None:
    two_teams()
    write("strict.yaml", "select: [KV907]\n")
    result = run_cli(["check", "teamA", "teamB", "--config", "strict.yaml"], capsys)
    assert sorted(codes(result.out)) == [
        ("teamA/vllm.yaml", "KV907"),
        ("teamB/vllm.yaml", "KV907"),
    ]
    no_config = run_cli(["check", "teamA", "teamB", "--no-config"], capsys)
    assert len(codes(no_config.out)) == 4


def test_each_file_fails_at_its_own_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    write("lenient/.kvlint.yaml", "fail-on: error\nignore: [KV501]\n")
    write("lenient/vllm.yaml", TYPO)  # KV907 info only: passes
    write("strict/.kvlint.yaml", "fail-on: info\nignore: [KV501]\n")
    write("strict/vllm.yaml", TYPO)  # KV907 info: fails
    assert run_cli(["check", "lenient"], capsys).code == 0
    assert run_cli(["check", "lenient", "strict"], capsys).code == 1
    assert run_cli(["check", "strict", "--fail-on", "error"], capsys).code == 0


def test_the_errors_of_every_config_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    write("a/.kvlint.yaml", "select: [KV998]\n")
    write("a/vllm.yaml", TYPO)
    write("b/.kvlint.yaml", "ignroe: [KV301]\n")
    write("b/vllm.yaml", TYPO)
    result = run_cli(["check", "a", "b"], capsys)
    assert (result.code, result.out) == (2, "")
    lines = result.err.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("unknown rule selector `KV998` in `select` of the kvlint config: "
                             "no rule has that code or code prefix; did you mean `KV908`, "
                             "`KV901` or `KV902`?")  # fmt: skip
    assert "b/.kvlint.yaml:1:1: unknown key `ignroe` in the kvlint config" in lines[1]


def test_the_config_file_itself_is_not_linted(capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit hands `.kvlint.yaml` to the hook like any YAML file: no KV905 on it."""
    write(".kvlint.yaml", "$schema: https://example.invalid/config.schema.json\nignore: [KV907]\n")
    result = run_cli(["check", ".kvlint.yaml", "--format", "json"], capsys)
    report = json.loads(result.out)
    assert (result.code, report["findings"], report["summary"]["files"]) == (0, [], 0)


def test_exclude_and_extend_exclude_in_a_walk(capsys: pytest.CaptureFixture[str]) -> None:
    write(".kvlint.yaml", "extend-exclude: [legacy/, '*.generated.yaml']\n")
    write("deploy/vllm.yaml", TYPO)
    write("deploy/legacy/vllm.yaml", TYPO)
    write("deploy/x.generated.yaml", TYPO)
    write(".hidden/vllm.yaml", TYPO)  # the default exclusions still apply
    write("node_modules/pkg/vllm.yaml", TYPO)
    files = json.loads(run_cli(["check", ".", "--format", "json"], capsys).out)["summary"]
    assert files["files"] == 1
    # A file named on the command line is checked whatever the patterns say, unless
    # --force-exclude (the pre-commit hook's way to honour them).
    named = run_cli(["check", "deploy/legacy/vllm.yaml"], capsys)
    assert named.code == 1
    forced = run_cli(["check", "deploy/legacy/vllm.yaml", "--force-exclude"], capsys)
    assert (forced.code, forced.out) == (0, "")


def test_exclude_replaces_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    write(".kvlint.yaml", "exclude: [skip/]\n")
    write("skip/vllm.yaml", TYPO)
    write(".ci/vllm.yaml", TYPO)  # hidden, but `exclude` no longer names hidden folders
    result = run_cli(["check", "."], capsys)
    assert {path for path, _ in codes(result.out)} == {".ci/vllm.yaml"}


def test_gitignore_is_respected_in_a_walk(capsys: pytest.CaptureFixture[str]) -> None:
    write(".gitignore", "rendered/\n*.tmp.yaml\n")
    write("deploy/.gitignore", "!keep.tmp.yaml\n")
    write("rendered/vllm.yaml", TYPO)
    write("deploy/scratch.tmp.yaml", TYPO)
    write("deploy/keep.tmp.yaml", TYPO)  # re-included by the deeper .gitignore
    write("deploy/vllm.yaml", TYPO)
    result = run_cli(["check", "."], capsys)
    assert sorted({path for path, _ in codes(result.out)}) == [
        "deploy/keep.tmp.yaml",
        "deploy/vllm.yaml",
    ]
    write(".kvlint.yaml", "respect-gitignore: false\n")
    paths = {path for path, _ in codes(run_cli(["check", "."], capsys).out)}
    assert "rendered/vllm.yaml" in paths and "deploy/scratch.tmp.yaml" in paths


def test_one_file_needs_no_pattern_library(tmp_path: Path) -> None:
    """A file named on the command line is never matched against patterns: pathspec stays
    unimported (the one-file start-up path)."""
    import subprocess
    import sys

    write("vllm.yaml", TYPO)
    code = (
        "import sys; from kvlint.main import main; main(['check', 'vllm.yaml', '--offline']); "
        "print('pathspec' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.stdout.splitlines()[-1] == "False", done.stdout + done.stderr


@pytest.mark.parametrize(
    "name",
    [
        ".hidden",
        "a.yaml",
        "node_modules",
        "node_modules.yaml",
        "__pycache__",
        ".kvlint.yaml",
        "package.json",
        "package-lock.json",
        "package.json.yaml",
        "tsconfig.json",
        "tsconfig.base.json",
        "jsconfig.json",
        "xtsconfig.json",
        "tsconfig.yaml",
    ],
)
@pytest.mark.parametrize("is_dir", [True, False])
def test_the_default_exclusions_read_as_gitwildmatch_reads_them(name: str, is_dir: bool) -> None:
    """The defaults are matched by name without pathspec; pathspec must agree."""
    import pathspec

    from kvlint.config import DEFAULT_EXCLUDE
    from kvlint.files import Exclusions

    fast = Exclusions(None)._matches(DEFAULT_EXCLUDE, Path.cwd() / "a" / name, None, is_dir)
    spec = pathspec.GitIgnoreSpec.from_lines(DEFAULT_EXCLUDE)
    assert fast == spec.match_file(f"a/{name}" + ("/" if is_dir else ""))
