"""Tests for ``kvlint check`` through the real CLI: exit codes, formats, config, selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.cli import run_cli

CLEAN = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
# KV501 error + KV907 info
TYPO = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\ngpu-memory-utilisation: 0.9\n"
NO_GPU = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\n"  # KV907 info only
UNKNOWN_MODEL = "model: acme/not-a-real-model-7b\n"
KV501 = (
    "vllm.yaml:3:1: KV501 [error] unknown flag `gpu-memory-utilisation` for vllm; did you mean "
    "`--gpu-memory-utilization`?"
)
KV907 = (
    "vllm.yaml:1:1: KV907 [info] the files do not give the GPU type: the checks that need it did "
    "not run (name the GPU with `--gpu` or `gpu` in the kvlint config)"
)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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


def test_clean_file_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["check", write("deploy.yaml", CLEAN)], capsys)
    assert (result.code, result.out, result.err) == (0, "", "")


def test_findings_exit_1_in_sorted_concise_lines(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["check", write("vllm.yaml", TYPO)], capsys)
    assert result.code == 1
    assert result.out == f"{KV907}\n{KV501}\n"
    assert result.err == ""


def test_info_never_fails_unless_fail_on_info(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", NO_GPU)
    assert run_cli(["check", "vllm.yaml"], capsys).code == 0
    assert run_cli(["check", "vllm.yaml", "--fail-on", "info"], capsys).code == 1


def test_fail_on_error(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", TYPO)
    assert run_cli(["check", "vllm.yaml", "--fail-on", "error"], capsys).code == 1
    result = run_cli(["check", "vllm.yaml", "--fail-on", "error", "--ignore", "KV501"], capsys)
    assert (result.code, result.out) == (0, f"{KV907}\n")


def test_unreadable_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    write("broken.yaml", "model: [x\n")
    assert run_cli(["check", "broken.yaml"], capsys).code == 2
    write("bad-model/config.json", "{not json")
    write("served.yaml", "model: bad-model\n")
    result = run_cli(["check", "served.yaml"], capsys)
    assert result.code == 2
    assert "KV902 [error] bad-model/config.json:1:2: the model config is not valid JSON" in (
        result.out
    )


def test_an_unknown_model_is_a_warning_not_a_failed_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("model.yaml", UNKNOWN_MODEL)
    result = run_cli(["check", "--offline", "model.yaml"], capsys)
    assert result.code == 1  # a warning at the default --fail-on warning
    assert [line.split(" ")[1] for line in result.out.splitlines()] == ["KV907", "KV902"]
    assert "not checked without the model: KV101, " in result.out
    assert run_cli(["check", "--offline", "model.yaml", "--fail-on", "error"], capsys).code == 0


def test_missing_path_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["check", "nope.yaml"], capsys)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "kvlint: nope.yaml: no such file or directory\n",
    )


def test_select_by_name_and_extend_select(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", TYPO)
    result = run_cli(["check", "vllm.yaml", "--select", "unknown-engine-flag"], capsys)
    assert result.out == f"{KV501}\n"
    result = run_cli(["check", "vllm.yaml", "--select", "KV9", "--extend-select", "KV5"], capsys)
    assert result.out == f"{KV907}\n{KV501}\n"
    result = run_cli(["check", "vllm.yaml", "--select", "max num seqs"], capsys)
    assert result.code == 2
    assert result.err.startswith("kvlint: unknown rule selector `max num seqs` in --select: ")


def test_gpu_flag_fills_the_missing_fact(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", NO_GPU)
    result = run_cli(["check", "vllm.yaml", "--gpu", "H100-80GB", "--fail-on", "info"], capsys)
    assert (result.code, result.out) == (0, "")


def test_config_file_is_found_and_flags_override_it(capsys: pytest.CaptureFixture[str]) -> None:
    write("deploy/vllm.yaml", TYPO)
    write(".kvlint.yaml", "ignore: [KV501]\nfail-on: info\n")
    result = run_cli(["check", "deploy/vllm.yaml"], capsys)
    assert result.code == 1  # fail-on info from the file
    assert result.out == KV907.replace("vllm.yaml", "deploy/vllm.yaml") + "\n"
    assert run_cli(["check", "deploy/vllm.yaml", "--fail-on", "warning"], capsys).code == 0
    result = run_cli(["check", "deploy/vllm.yaml", "--no-config"], capsys)
    assert result.out.count("\n") == 2


def test_bad_config_exits_2_with_position(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", NO_GPU)
    write(".kvlint.yaml", "select: [KV]\nfail_on: error\nignroe: [KV5]\n")
    result = run_cli(["check", "vllm.yaml"], capsys)
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith(
        f"kvlint: {Path.cwd().resolve() / '.kvlint.yaml'}:3:1: unknown key `ignroe`"
    )
    write("other.yaml", "gpu: [L4\n")
    result = run_cli(["check", "vllm.yaml", "--config", "other.yaml"], capsys)
    assert result.code == 2
    assert result.err.startswith("kvlint: other.yaml:2:1: invalid YAML")
    result = run_cli(["check", "vllm.yaml", "--config", "missing.yaml"], capsys)
    assert result.err == "kvlint: missing.yaml: config file not found\n"


def test_json_format_and_output_file(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", TYPO)
    result = run_cli(["check", "vllm.yaml", "--format", "json", "--output-file", "r.json"], capsys)
    # The file gets the JSON asked for; the terminal still gets its default report.
    assert (result.code, result.out) == (1, f"{KV907}\n{KV501}\n")
    document = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert [f["code"] for f in document["findings"]] == ["KV907", "KV501"]
    assert document["summary"]["exit_code"] == 1
    assert document["deployments"][0]["engine"] == "vllm"


def test_github_format_under_github_actions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write("vllm.yaml", TYPO)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    out = run_cli(["check", "vllm.yaml"], capsys).out
    assert out.startswith("::")
    assert run_cli(["check", "vllm.yaml", "--format", "concise"], capsys).out.startswith("vllm")


def test_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    write("a/vllm.yaml", TYPO)
    write("b/vllm.yaml", TYPO)
    result = run_cli(["check", ".", "--statistics"], capsys)
    assert result.out == (
        "2  KV501  error         unknown-engine-flag\n2  KV907  info          missing-fact\n"
    )


def test_folders_run_every_file_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    write("b/vllm.yaml", TYPO)
    write("a/deploy.yaml", CLEAN)
    write("a/notes.txt", "not yaml")
    write("node_modules/x/vllm.yaml", TYPO)
    result = run_cli(["check", ".", "--format", "json"], capsys)
    document = json.loads(result.out)
    assert document["summary"]["files"] == 2
    assert [d["path"] for d in document["deployments"]] == ["a/deploy.yaml", "b/vllm.yaml"]


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe\x00garbage",
        b"a: &a [*a]\n",
        b"[" * 5000,
        b"- " * 3000 + b"x\n",
        b"kind: Deployment\nspec: 7\n",
        b"services: [1, 2]\n",
        b"model: 5\nmax-model-len: {a: b}\n",
        b"--- !!python/object:os.system\nargs: [ls]\n",
    ],
    ids=[
        "binary",
        "recursive-alias",
        "deep-flow",
        "deep-block",
        "k8s-shape",
        "compose-shape",
        "wrong-types",
        "python-tag",
    ],
)
def test_no_traceback_on_hostile_input(content: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    Path("hostile.yaml").write_bytes(content)
    result = run_cli(["check", "hostile.yaml"], capsys)
    assert result.code in (0, 1, 2)
    assert "Traceback" not in result.err
    assert "internal error" not in result.out + result.err


def test_quiet_hides_info_findings_but_not_their_exit_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("vllm.yaml", TYPO)
    result = run_cli(["check", "vllm.yaml", "--quiet"], capsys)
    assert (result.code, result.out) == (1, f"{KV501}\n")
    write("vllm.yaml", NO_GPU)
    assert run_cli(["check", "vllm.yaml", "-q"], capsys).out == ""
    quiet_fail = run_cli(["check", "vllm.yaml", "-q", "--fail-on", "info"], capsys)
    assert (quiet_fail.code, quiet_fail.out) == (1, "")  # hidden, still counted
    summary = json.loads(run_cli(["check", "vllm.yaml", "-q", "--format", "json"], capsys).out)
    assert (summary["findings"], summary["summary"]["by_severity"]["info"]) == ([], 0)


def test_exit_zero_passes_findings_but_not_unreadable_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("vllm.yaml", TYPO)
    result = run_cli(["check", "vllm.yaml", "--exit-zero"], capsys)
    assert (result.code, result.out) == (0, f"{KV907}\n{KV501}\n")
    write("broken.yaml", "a: [1\n")
    assert run_cli(["check", "broken.yaml", "--exit-zero"], capsys).code == 2
    assert run_cli(["check", "missing.yaml", "--exit-zero"], capsys).code == 2


def test_show_fixes_says_what_each_fix_changed(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", NO_GPU + "max-num-seqs: 4096\n")
    argv = ["check", "vllm.yaml", "--gpu", "H100-SXM-80GB", "--fix", "--unsafe-fixes"]
    plain = run_cli(argv, capsys)
    assert plain.err.startswith("kvlint: fixed 1 finding in 1 file\n")
    assert "->" not in plain.err
    write("vllm.yaml", NO_GPU + "max-num-seqs: 4096\n")
    shown = run_cli([*argv, "--show-fixes"], capsys)
    first, fix = shown.err.splitlines()
    assert first == "kvlint: fixed 1 finding in 1 file"
    assert fix.startswith("  vllm.yaml:3:15: KV301 [~] Lower `max_num_seqs` to ")
    assert fix.endswith(f": `4096` -> `{Path('vllm.yaml').read_text().split()[-1]}`")


def test_select_of_a_code_no_rule_has_is_exit_2_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("vllm.yaml", TYPO)
    result = run_cli(["check", "vllm.yaml", "--select", "KV999"], capsys)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "kvlint: unknown rule selector `KV999` in --select: no rule has that code or code "
        "prefix; did you mean `KV901`, `KV902` or `KV903`?\n"
    )


def test_every_config_error_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", TYPO)
    write(
        ".kvlint.yaml",
        "select: [KV3, KV998]\nignore: [KV997]\nseverity: {KV996: info}\nfail-on: never\n"
        "rules: {KV305: {ratio: lots}}\n",
    )
    result = run_cli(["check", "vllm.yaml"], capsys)
    assert result.code == 2
    lines = result.err.splitlines()
    assert [Path(line.split(": ", 2)[1]).name for line in lines] == [
        ".kvlint.yaml:4:1",  # fail-on: never (the file's own keys first)
    ]
    # The file's keys are validated first; once they hold, every rule reference is.
    write(
        ".kvlint.yaml",
        "select: [KV3, KV998]\nignore: [KV997]\nseverity: {KV996: info}\n"
        "rules: {KV305: {ratio: lots}}\n",
    )
    lines = run_cli(["check", "vllm.yaml"], capsys).err.splitlines()
    assert [Path(line.split(": ", 2)[1]).name for line in lines] == [
        ".kvlint.yaml:1:15",
        ".kvlint.yaml:2:10",
        ".kvlint.yaml:3:12",
        ".kvlint.yaml:4:17",
    ]
    assert all(line.startswith("kvlint: ") for line in lines)


def test_the_config_maps_a_container_path_to_the_model_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("vllm.yaml", "model: /mnt/models\nmax-model-len: 8192\nmax-num-seqs: 4096\n")
    unmapped = run_cli(["check", "--no-config", "--offline", "vllm.yaml"], capsys)
    assert "KV902" in unmapped.out and "KV301 [" not in unmapped.out
    write(
        ".kvlint.yaml",
        'gpu: L4\noffline: true\nmodels:\n  "/mnt/models": Qwen/Qwen2.5-7B-Instruct\n',
    )
    mapped = run_cli(["check", "vllm.yaml"], capsys)
    assert "KV902" not in mapped.out  # checked as Qwen2.5-7B-Instruct: the capacity rules ran
    assert "KV301 [" in mapped.out or "KV302 [" in mapped.out, mapped.out
