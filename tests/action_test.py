"""The GitHub Action: action.yml is valid, and its run step writes annotations, the SARIF log,
the job summary and the step outputs, with the numbers `kvlint size` gives."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kvlint.units import format_bytes
from testing.cli import run_cli
from testing.shared import SARIF_SCHEMA
from testing.shared import shared_file

REPO = Path(__file__).resolve().parent.parent
ACTION = REPO / "action.yml"
SCRIPT = REPO / "scripts" / "action.sh"

# Llama 3.1 8B on one H100 under vLLM 0.11: 256 sequences of 32K do not fit (KV301, a warning).
K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-8b
spec:
  replicas: 1
  selector:
    matchLabels: {app: llama-8b}
  template:
    metadata:
      labels: {app: llama-8b}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - --model=meta-llama/Llama-3.1-8B-Instruct
            - --max-model-len=32768
            - --max-num-seqs=256
          resources:
            limits:
              nvidia.com/gpu: "1"
"""


def test_action_yml_is_valid_for_github() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions",
         str(ACTION)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


def test_every_input_reaches_the_script() -> None:
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    env: dict[str, str] = {}
    for step in action["runs"]["steps"]:
        if "uses" in step:  # setup-python and the pip cache: pinned to a major version
            assert re.fullmatch(r"actions/(setup-python|cache)@v\d+", step["uses"]), step
            continue
        assert step["run"].startswith('bash "$GITHUB_ACTION_PATH/scripts/action.sh" ')
        env.update({k: v for k, v in step.get("env", {}).items() if k.startswith("INPUT_")})
    expected = {
        f"INPUT_{name.upper().replace('-', '_')}": f"${{{{ inputs.{name} }}}}"
        for name in action["inputs"]
    }
    assert env == expected
    assert set(action["inputs"]) == {
        "paths", "version", "args", "format", "fail-on", "sarif-file", "summary"
    }  # fmt: skip
    script = SCRIPT.read_text(encoding="utf-8") + (REPO / "kvlint" / "action.py").read_text()
    for name in expected:
        assert name.removeprefix("INPUT_") in script, name


def test_kvlint_gets_its_own_python_and_never_runs_on_windows() -> None:
    steps = yaml.safe_load(ACTION.read_text(encoding="utf-8"))["runs"]["steps"]
    by_name = {step["name"]: step for step in steps}
    windows = steps[0]
    assert windows["if"] == "runner.os == 'Windows'"
    assert windows["run"].endswith('action.sh" check-runner')
    python = by_name["Set up Python for kvlint"]
    assert python["with"]["update-environment"] is False  # the job's own PATH stays as it was
    for name in ("Locate kvlint's pip cache", "Install kvlint"):
        assert by_name[name]["env"]["KVLINT_SETUP_PYTHON"] == (
            "${{ steps.python.outputs.python-path }}"
        )
    cache = by_name["Cache pip"]["with"]
    assert cache == {
        "path": "${{ steps.cache-key.outputs.dir }}",
        "key": "${{ steps.cache-key.outputs.key }}",
        "restore-keys": "${{ steps.cache-key.outputs.restore-key }}",
    }


def test_every_output_the_run_step_writes_is_declared(project: Path, tmp_path: Path) -> None:
    _, _, _, outputs = _run_step(project, tmp_path, sarif_file="kvlint.sarif", args="--no-config")
    written = {line.partition("=")[0] for line in outputs.read_text().splitlines()}
    declared = yaml.safe_load(ACTION.read_text(encoding="utf-8"))["outputs"]
    assert written == set(declared)
    for name, output in declared.items():
        assert output["value"] == f"${{{{ steps.check.outputs.{name} }}}}"


# A stand-in for the interpreter setup-python gives: it records each call, makes a venv whose
# python is itself and whose kvlint prints a version, and runs `-c` code with the real Python.
FAKE_PYTHON = """\
#!/usr/bin/env bash
echo "$0 $*" >>"$FAKE_LOG"
if [[ "$1 $2" == "-m venv" ]]; then
    mkdir -p "$3/bin"
    cp "$0" "$3/bin/python"
    printf '#!/bin/sh\\necho "kvlint 0.0.0"\\n' >"$3/bin/kvlint"
    chmod +x "$3/bin/kvlint"
elif [[ "$1" == "-c" ]]; then
    exec "$REAL_PYTHON" "$@"
fi
"""


def _fake_python(tmp_path: Path) -> tuple[Path, Path]:
    fake = tmp_path / "setup-python" / "python"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    return fake, tmp_path / "calls.log"


def _step(step: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    fake, log = _fake_python(tmp_path)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    clean.update(
        KVLINT_SETUP_PYTHON=str(fake),
        KVLINT_VENV=str(tmp_path / "venv"),
        KVLINT_PIP_CACHE=str(tmp_path / "pip-cache"),
        FAKE_LOG=str(log),
        REAL_PYTHON=sys.executable,
        **env,
    )
    return subprocess.run(
        ["bash", str(SCRIPT), step], cwd=tmp_path, env=clean, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    ("version", "spec"),
    [
        # A release comes from the package index under kvlint's distribution name: the index's
        # `kvlint` is another project, whose own 0.1.0 would install and then fail to run.
        ("0.2.0", "kvcache-lint==0.2.0"),
        ("v0.2.0rc1", "kvcache-lint==0.2.0rc1"),
        ("main", "git+https://github.com/kvcache-lint/kvlint@main"),
        ("", str(REPO)),
    ],
)
def test_the_install_step_installs_kvlint_under_its_own_name(
    tmp_path: Path, version: str, spec: str
) -> None:
    done = _step(
        "install", tmp_path, INPUT_VERSION=version, GITHUB_ACTION_REPOSITORY="kvcache-lint/kvlint"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kvlint 0.0.0\n"
    fake = tmp_path / "setup-python" / "python"
    venv = tmp_path / "venv"
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    assert calls == [
        f"{fake} -m venv {venv}",  # the interpreter setup-python installed, not the runner's
        f"{venv}/bin/python -m pip install --quiet --disable-pip-version-check {spec}",
    ]


def test_a_git_ref_needs_the_action_repository(tmp_path: Path) -> None:
    done = _step("install", tmp_path, INPUT_VERSION="my-branch")
    assert done.returncode == 2
    assert "::error title=kvlint action::version 'my-branch' is not a release" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_the_cache_key_names_the_os_the_python_and_what_is_installed(tmp_path: Path) -> None:
    keys = []
    for version in ("0.2.0", "0.2.0", "0.3.0"):
        outputs = tmp_path / f"out-{len(keys)}"
        done = _step(
            "cache-key", tmp_path, INPUT_VERSION=version, RUNNER_OS="Linux",
            GITHUB_OUTPUT=str(outputs),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
        assert set(values) == {"dir", "key", "restore-key"}
        assert values["dir"] == str(tmp_path / "pip-cache")
        python = f"{sys.version_info[0]}.{sys.version_info[1]}"
        assert values["restore-key"] == f"kvlint-pip-Linux-py{python}-"
        assert re.fullmatch(re.escape(values["restore-key"]) + r"[0-9a-f]{16}", values["key"])
        keys.append(values["key"])
    assert keys[0] == keys[1] != keys[2]


def test_windows_is_refused_with_one_clear_error(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uname = bin_dir / "uname"
    uname.write_text("#!/bin/sh\necho MINGW64_NT-10.0-20348\n", encoding="utf-8")
    uname.chmod(0o755)
    done = _step("check-runner", tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "::error title=kvlint action::the kvlint action runs on Linux and macOS runners"
    )


def _run_step(project: Path, tmp_path: Path, **inputs: str) -> tuple[int, str, Path, Path]:
    summary = tmp_path / "step_summary.md"
    outputs = tmp_path / "github_output"
    summary.write_text("earlier step\n", encoding="utf-8")  # appended to, never replaced
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        KVLINT_PYTHON=sys.executable,
        PYTHONPATH=str(REPO),  # the kvlint of this checkout, whatever is installed
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_OUTPUT=str(outputs),
        NO_COLOR="1",
    )
    env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
    done = subprocess.run(
        ["bash", str(SCRIPT), "run"], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.stderr == "", done.stderr
    return done.returncode, done.stdout, summary, outputs


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "llama.yaml").write_text(K8S, encoding="utf-8")
    return root


def _size(project: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    cwd = Path.cwd()
    os.chdir(project)
    try:
        done = run_cli(["size", "deploy/llama.yaml", "--format", "json", *extra], capsys)
    finally:
        os.chdir(cwd)
    assert done.code == 0, done.err
    deployment: dict[str, Any] = json.loads(done.out)["deployments"][0]
    return deployment


def test_run_step_writes_annotations_sarif_summary_and_outputs(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Default paths (the whole checkout): annotations name the file as GitHub wants it,
    # relative to the repository root without "./".
    code, stdout, summary_file, outputs = _run_step(
        project, tmp_path, sarif_file="kvlint.sarif", args="--no-config"
    )
    assert code == 1, stdout  # a warning, and fail-on defaults to warning

    # One workflow command per finding, at the value to change.
    (annotation,) = stdout.splitlines()
    prefix = "::warning file=deploy/llama.yaml,line=21,col=30,endColumn=33,title=KV301::"
    assert annotation.startswith(prefix + "`max_num_seqs` 256 "), annotation
    assert outputs.read_text(encoding="utf-8") == (
        "exit-code=1\nfindings=1\nerrors=0\nwarnings=1\nsarif-file=kvlint.sarif\n"
    )

    log = json.loads((project / "kvlint.sarif").read_text(encoding="utf-8"))
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "KV301"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "deploy/llama.yaml"}
    assert (location["region"]["startLine"], location["region"]["startColumn"]) == (21, 30)

    summary = summary_file.read_text(encoding="utf-8")
    assert summary.startswith("earlier step\n## kvlint\n\n1 warning in 1 file, 1 deployment.\n")

    # The table and the chart carry the numbers `kvlint size` gives for the same file.
    size = _size(project, capsys)
    engine = size["engine"]
    assert engine["max_model_len"] == 32_768
    row = (
        f"| `meta-llama/Llama-3.1-8B-Instruct` | vllm {engine['version']} | `H100-SXM-80GB` "
        f"| {engine['max_model_len']:,} | {engine['kv_cache_tokens']:,} "
        f"| {engine['max_concurrency']:.2f} | 256 |"
    )
    assert row in summary.splitlines()
    # The chart of a deployment with findings, folded: sequences admitted at each context
    # length (blue) against the requested max_num_seqs (red).
    chart = re.search(
        r"<details><summary>Sequences admitted by context length</summary>\n\n"
        r"```mermaid\n%%\{init: .*?\}%%\nxychart-beta\n(.*?)```\n\n(.*?)\n\n</details>",
        summary,
        re.DOTALL,
    )
    assert chart is not None, summary
    lines = chart.group(1).splitlines()
    assert lines[0] == (
        '    title "Sequences admitted by context length (blue); red: max_num_seqs 256"'
    )
    x_axis = re.fullmatch(r'    x-axis "context length \(tokens\)" \[(.*)\]', lines[1])
    admitted = re.fullmatch(r"    line \[(.*)\]", lines[3])
    requested = re.fullmatch(r"    line \[(.*)\]", lines[4])
    assert x_axis and admitted and requested, lines
    contexts = [int(n) for n in x_axis.group(1).split(", ")]
    assert contexts == [512, 1024, 2048, 4096, 8192, 16384, 32768]
    counts = [float(v) for v in admitted.group(1).split(", ")]
    assert counts[-1] == round(engine["max_concurrency"], 2)  # at max_model_len: the table's
    assert counts == sorted(counts, reverse=True)
    assert {int(v) for v in requested.group(1).split(", ")} == {256}
    top = int(re.fullmatch(r'    y-axis "sequences" 0 --> (\d+)', lines[2]).group(1))  # type: ignore[union-attr]
    assert max(counts) < top <= 2 * max(counts)  # scaled to the data
    assert re.fullmatch(
        r"`max_num_seqs` 256 fit up to [\d,]+ tokens each; at `max_model_len` 32,768 the pool "
        rf"admits {engine['max_concurrency']:.2f}\.",
        chart.group(2),
    ), chart.group(2)
    low, high = (engine[f"available_kv_bytes_{end}"] for end in ("low", "high"))
    # one GPU holds the model
    pool = format_bytes(engine["available_kv_bytes"])
    # both ends of the band in one unit, the high end's
    assert f"KV pool {pool}, 90% band {low / 2**30:.2f}-{high / 2**30:.2f} GiB." in summary


def test_globs_in_paths_are_expanded(project: Path, tmp_path: Path) -> None:
    (project / "deploy" / "nested").mkdir()
    (project / "deploy" / "nested" / "b.yaml").write_text(K8S, encoding="utf-8")
    (project / "deploy" / "notes.txt").write_text("not checked", encoding="utf-8")
    code, stdout, _, outputs = _run_step(
        project, tmp_path, paths="deploy/**/*.yaml", sarif_file="", summary="false"
    )
    assert code == 1
    files = {re.search(r"file=([^,]+)", line).group(1) for line in stdout.splitlines()}  # type: ignore[union-attr]
    assert files == {"deploy/llama.yaml", "deploy/nested/b.yaml"}
    assert "findings=2\n" in outputs.read_text()


def test_a_glob_that_matches_nothing_is_one_error(project: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(KVLINT_PYTHON=sys.executable, PYTHONPATH=str(REPO), INPUT_PATHS="charts/*.yaml")
    done = subprocess.run(
        ["bash", str(SCRIPT), "run"], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stdout == (
        "::error title=kvlint::action input `paths`: `charts/*.yaml` matches no file\n"
    )


def test_annotations_go_errors_first_and_say_when_capped(project: Path, tmp_path: Path) -> None:
    """GitHub shows 10 annotations of each level a step: 12 warnings and 1 error give the error
    first, 10 warning annotations, 2 plain lines and one line saying so."""
    for i in range(12):
        (project / "deploy" / f"w{i:02}.yaml").write_text(K8S, encoding="utf-8")
    bad = K8S.replace("--max-num-seqs=256", "--max-num-seqz=256")
    (project / "deploy" / "zz-error.yaml").write_text(bad, encoding="utf-8")
    (project / "deploy" / "llama.yaml").unlink()
    code, stdout, _, _ = _run_step(
        project, tmp_path, paths="deploy", sarif_file="", summary="false"
    )
    lines = stdout.splitlines()
    assert lines[0].startswith("::error file=deploy/zz-error.yaml,")
    assert [line.split(" ")[0] for line in lines[1:11]] == ["::warning"] * 10
    assert lines[11].startswith("deploy/w10.yaml:21:30: KV301 [warning] [~] ")
    assert lines[12].startswith("deploy/w11.yaml:21:30: KV301 [warning] [~] ")
    assert lines[13] == (
        "kvlint: 2 warnings not annotated (GitHub shows 10 annotations of each level a step): "
        "they are listed above, in the SARIF log and in the job summary"
    )
    assert len(lines) == 14
    assert code == 1


def test_the_sarif_file_is_valid_for_upload_sarif(project: Path, tmp_path: Path) -> None:
    schema = json.loads(shared_file(SARIF_SCHEMA).read_text(encoding="utf-8"))
    _run_step(project, tmp_path, paths="deploy", sarif_file="kvlint.sarif")
    log = json.loads((project / "kvlint.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["KV301"]


def test_clean_run_without_sarif_or_summary(project: Path, tmp_path: Path) -> None:
    path = project / "deploy" / "llama.yaml"
    path.write_text(K8S.replace("--max-num-seqs=256", "--max-num-seqs=8"), encoding="utf-8")
    code, stdout, summary_file, outputs = _run_step(
        project, tmp_path, paths="deploy/llama.yaml", sarif_file="", summary="false"
    )
    assert (code, stdout) == (0, "")
    assert summary_file.read_text(encoding="utf-8") == "earlier step\n"
    assert outputs.read_text(encoding="utf-8") == (
        "exit-code=0\nfindings=0\nerrors=0\nwarnings=0\nsarif-file=\n"
    )
    assert not (project / "kvlint.sarif").exists()


def test_fail_on_error_passes_a_warning_and_args_reach_check(project: Path, tmp_path: Path) -> None:
    code, stdout, _, _ = _run_step(project, tmp_path, fail_on="error", format="concise")
    assert code == 0
    assert re.search(r"deploy/llama\.yaml:21:30: KV301 .*`max_num_seqs` 256 needs", stdout)
    code, stdout, _, _ = _run_step(project, tmp_path, args="--ignore KV301", format="concise")
    assert (code, stdout) == (0, "")


# What pip prints when it cannot reach the index: then the install test is skipped, not failed.
_UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Network is unreachable|ConnectTimeoutError|ReadTimeoutError|ProxyError"
)


@pytest.mark.network
def test_install_step_then_run_step_as_on_a_runner(project: Path, tmp_path: Path) -> None:
    """Both steps as a runner runs them: a fresh virtual environment with kvlint installed
    from the action's own checkout (an empty `version`), then the run step with that kvlint."""
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.pop("PYTHONPATH", None)
    env.update(KVLINT_VENV=str(venv), RUNNER_TEMP=str(tmp_path), INPUT_VERSION="")
    done = subprocess.run(
        ["bash", str(SCRIPT), "install"], cwd=project, env=env, capture_output=True, text=True
    )
    if done.returncode != 0 and _UNREACHABLE.search(done.stdout + done.stderr):
        pytest.skip(f"the package registry cannot be reached:\n{done.stderr[-2000:]}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(r"kvlint \d+\.\d+\.\d+\S*\n", done.stdout), done.stdout

    env.update(INPUT_PATHS="deploy", INPUT_SARIF_FILE="", INPUT_SUMMARY="false")
    done = subprocess.run(
        ["bash", str(SCRIPT), "run"], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith(
        "::warning file=deploy/llama.yaml,line=21,col=30,endColumn=33,title=KV301::"
    ), done.stdout


def test_bad_input_is_one_annotation_and_exit_2(project: Path, tmp_path: Path) -> None:
    summary = tmp_path / "s.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(KVLINT_PYTHON=sys.executable, PYTHONPATH=str(REPO), INPUT_PATHS="nowhere.yaml",
               GITHUB_OUTPUT=str(tmp_path / "out"), GITHUB_STEP_SUMMARY=str(summary))  # fmt: skip
    done = subprocess.run(
        ["bash", str(SCRIPT), "run"], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stdout == "::error title=kvlint::nowhere.yaml: no such file or directory\n"
    assert done.stderr == "kvlint: nowhere.yaml: no such file or directory\n"
    assert (tmp_path / "out").read_text(encoding="utf-8") == "exit-code=2\nfindings=0\n"


def test_inputs_from_the_environment() -> None:
    from kvlint.action import Inputs

    inputs = Inputs.from_env(
        {
            "INPUT_PATHS": "deploy\n'charts/my values.yaml'  k8s",
            "INPUT_ARGS": "--select KV3 --gpu 'H100 SXM'",
            "INPUT_FORMAT": "concise",
            "INPUT_FAIL_ON": "error",
            "INPUT_SARIF_FILE": " ",
            "INPUT_SUMMARY": "False",
        }
    )
    assert inputs == Inputs(
        paths=("deploy", "charts/my values.yaml", "k8s"),
        args=("--select", "KV3", "--gpu", "H100 SXM"),
        format="concise",
        fail_on="error",
        sarif_file=None,
        summary=False,
    )
    defaults = Inputs.from_env({})
    assert defaults == Inputs((".",), (), "github", "warning", None, True)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"INPUT_FORMAT": "sarif"}, "action input `format`: unknown format `sarif` (use github, "),
        ({"INPUT_ARGS": "--gpu 'H100"}, "action input: No closing quotation"),
    ],
)
def test_bad_inputs_are_one_clear_error(env: dict[str, str], message: str) -> None:
    from kvlint.action import Inputs
    from kvlint.errors import KvlintError

    with pytest.raises(KvlintError) as caught:
        Inputs.from_env(env)
    assert str(caught.value).startswith(message)


def test_args_come_last_and_win() -> None:
    from kvlint.action import Inputs
    from kvlint.action import check_arguments
    from kvlint.errors import KvlintError

    inputs = Inputs(
        ("deploy",), ("--fail-on", "error", "--ignore", "KV301"), "github", "info", None, True
    )
    args = check_arguments(inputs)
    assert (args.paths, args.fail_on, args.ignore) == (["deploy"], "error", [["KV301"]])
    with pytest.raises(KvlintError, match="action input: "):
        check_arguments(Inputs(("deploy",), ("--fail-on", "never"), "github", "info", None, True))
