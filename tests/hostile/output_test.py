"""Output cannot be hijacked (issue 15, item 7): a file name or a value holding an ESC, a newline
or Markdown reaches no report as it is: the github format's properties, ``--diff`` headers, the
``kvlint size`` headers (rich markup) and the Action's job summary escape them. The real CLI
as a child (the Action's run step for the summary)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import ROOT
from tests.hostile.runner import child_env
from tests.hostile.runner import run_kvlint

VLLM = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 32768\nmax-num-seqs: 512\n"
ESC_NAME = "a\x1b]0;owned\x07\x1b[2Jb.yaml"
NEWLINE_NAME = "x\n+++ injected.yaml\n@@ -1 +1 @@"


def test_github_format_escapes_a_file_name(tmp_path: Path) -> None:
    (tmp_path / ESC_NAME).write_text(VLLM)
    outcome = run_kvlint(
        ["check", "--offline", "--no-config", "--gpu", "H100", "--format", "github", ESC_NAME],
        tmp_path,
    )
    assert_well_behaved(outcome, concise=False)
    assert "\x1b" not in outcome.out and "\x07" not in outcome.out
    (line,) = outcome.out.splitlines()
    assert line.startswith(
        "::warning file=a\\x1b]0;owned\\x07\\x1b[2Jb.yaml,line=3,col=15,".replace(";", ";")
    ), line
    assert outcome.code == 1


def test_junit_and_gitlab_stay_xml_and_json_with_such_a_name(tmp_path: Path) -> None:
    import json
    import xml.etree.ElementTree as ET

    (tmp_path / ESC_NAME).write_text(VLLM)
    base = ["check", "--offline", "--no-config", "--gpu", "H100", ESC_NAME]
    junit = run_kvlint([*base, "--format", "junit"], tmp_path)
    assert "\x1b" not in junit.out
    ET.fromstring(junit.out)  # well-formed XML
    gitlab = run_kvlint([*base, "--format", "gitlab"], tmp_path)
    assert "\x1b" not in gitlab.out
    assert json.loads(gitlab.out)


def test_the_twin_a_plain_name_is_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(VLLM)
    outcome = run_kvlint(
        ["check", "--offline", "--no-config", "--gpu", "H100", "--format", "github", "deploy.yaml"],
        tmp_path,
    )
    assert outcome.out.startswith("::warning file=deploy.yaml,line=3,col=15,")


def test_diff_headers_quote_a_name_that_holds_a_newline(tmp_path: Path) -> None:
    (tmp_path / NEWLINE_NAME).write_text(VLLM)
    args = ["check", "--offline", "--no-config", "--gpu", "H100", "--diff", "--unsafe-fixes"]
    outcome = run_kvlint([*args, NEWLINE_NAME], tmp_path)
    assert_well_behaved(outcome, concise=False)
    lines = outcome.out.splitlines()
    assert lines[:2] == [
        '--- "x\\n+++ injected.yaml\\n@@ -1 +1 @@"',
        '+++ "x\\n+++ injected.yaml\\n@@ -1 +1 @@"',
    ]
    assert [s for s in lines if s.startswith("+++")] == [lines[1]]  # one header, no injected one
    assert [s for s in lines if s.startswith("@@")] == ["@@ -1,3 +1,3 @@"]


def test_size_headers_print_markup_in_names_as_text(tmp_path: Path) -> None:
    name = "[bold red]evil[blink]x[reverse].yaml"  # rich markup (a file name holds no `/`)
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: "[blink]name[/blink]\\u001b[2J"}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
"""
    (tmp_path / name).write_text(text)
    outcome = run_kvlint(["size", "--offline", name], tmp_path, env={"COLUMNS": "200"})
    assert_well_behaved(outcome, concise=False)
    assert outcome.code == 0, outcome
    header = outcome.out.splitlines()[0]
    assert name in header, header  # the brackets printed, not read as markup
    assert "[blink]name[/blink]\\x1b[2J" in header
    assert "\x1b" not in outcome.out


def test_the_job_summary_shows_names_and_values_as_text(tmp_path: Path) -> None:
    markdown = (
        "[All checks passed](https://evil.example) ![x](https://evil.example/x.png) "
        "<img src=x onerror=alert(1)> @everyone `code` | pipe"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "deploy.yaml").write_text(
        f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {markdown!r}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs",
                 "[click](https://evil.example)"]
"""
    )
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        KVLINT_PYTHON=sys.executable,
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
        INPUT_PATHS="deploy.yaml",
        INPUT_ARGS="--offline --no-config",
        INPUT_SARIF_FILE="",
        HF_HUB_OFFLINE="1",
    )
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "action.sh"), "run"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    text = summary.read_text()
    # Outside code spans, no link, image, HTML or mention survives.
    prose = re.sub(r"(`+)(?:(?!\1).)+?\1", "", text)
    assert "](" not in prose.replace("\\](", "") and "<img" not in prose.replace("\\<img", "")
    assert "@everyone" not in prose  # (in a code span GitHub pings nobody)
    heading = next(line for line in text.splitlines() if line.startswith("### "))
    assert heading.startswith("### `deploy.yaml`: ``") and "<img" in heading  # in a code span
    assert "All checks passed" not in prose


def test_json_reports_escape_del_and_the_c1_controls(tmp_path: Path) -> None:
    """JSON escapes only the C0 controls itself: a deployment named with an 8-bit CSI (U+009B)
    and DEL reached --format json and gitlab as they are (found by plugin_property_test)."""
    import json

    (tmp_path / "pod.yaml").write_text(
        'apiVersion: v1\nkind: Pod\nmetadata: {name: "x\\x9b[2J\\x7fy"}\nspec:\n  containers:\n'
        '    - name: "c\\x9b"\n      image: vllm/vllm-openai:v0.11.0\n'
        '      args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-num-seqs", "0"]\n'
    )
    for fmt in ("json", "sarif", "gitlab"):
        outcome = run_kvlint(
            ["check", "--offline", "--no-config", "--format", fmt, "pod.yaml"], tmp_path
        )
        assert_well_behaved(outcome, concise=False)
        assert not re.search("[\x7f-\x9f]", outcome.out), fmt
        document = json.loads(outcome.out)
        if fmt == "json":
            names = [d["name"] for d in document["deployments"]]
            assert names == ["Pod/x\x9b[2J\x7fy container c\x9b"], names


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """A pull request can add `\\xff\\xfe.yaml`: the SARIF and GitLab reports (the Action writes
    SARIF on every run) ended in an internal error on its lone surrogates, and the JSON report
    was no UTF-8. Every format shows the name as `\\xff\\xfe.yaml`, and --fix still fixes the
    file by its own name."""
    import json

    (tmp_path / os.fsdecode(b"\xff\xfe.yaml")).write_text(VLLM)
    base = ["check", "--offline", "--no-config", "--gpu", "H100", "."]
    for fmt in ("concise", "full", "json", "github", "sarif", "junit", "gitlab"):
        outcome = run_kvlint([*base, "--format", fmt], tmp_path)
        assert_well_behaved(outcome, concise=fmt == "concise")
        assert outcome.code == 1, (fmt, outcome.err)
        assert "\ufffd" not in outcome.out, fmt
        shown = outcome.out
        if fmt in ("json", "sarif", "gitlab"):
            shown = " ".join(_strings(json.loads(outcome.out)))
        wanted = "%5Cxff%5Cxfe.yaml" if fmt == "sarif" else "\\xff\\xfe.yaml"  # a URI there
        assert wanted in shown, (fmt, shown[:300])
    # Named on the command line: kvlint size's header, explain --file and --stdin-filename (SARIF
    # ended in an internal error; size and explain printed the bytes, no UTF-8).
    size = run_kvlint(["size", "--offline", os.fsdecode(b"\xff\xfe.yaml")], tmp_path)
    assert size.code == 0 and "\ufffd" not in size.out and "\\xff\\xfe.yaml" in size.out, size
    name = os.fsdecode(b"\xff\xfe.yaml")
    explain = run_kvlint(
        ["explain", "KV301", "--offline", "--gpu", "H100", "--file", name], tmp_path
    )
    assert explain.code == 0 and "\ufffd" not in explain.out, explain
    assert "1 finding of KV301 in \\xff\\xfe.yaml" in explain.out, explain.out[-300:]
    stdin = subprocess.run(
        [sys.executable, "-m", "kvlint", "check", "--offline", "--no-config", "--format", "sarif",
         "-", "--stdin-filename", os.fsdecode(b"\xff\xfe.yaml")],
        input=VLLM.encode(), capture_output=True, env=child_env(), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert stdin.returncode == 0, stdin.stderr
    assert "%5Cxff%5Cxfe.yaml" in json.dumps(json.loads(stdin.stdout.decode("utf-8")))
    fixed = run_kvlint([*base, "--fix", "--unsafe-fixes"], tmp_path)
    assert fixed.code == 0, fixed.err
    assert (tmp_path / os.fsdecode(b"\xff\xfe.yaml")).read_text() == VLLM.replace("512", "14")


def _strings(document: object) -> list[str]:
    """Every string in a JSON document."""
    if isinstance(document, str):
        return [document]
    if isinstance(document, dict):
        document = [*document.keys(), *document.values()]
    if isinstance(document, list):
        return [text for item in document for text in _strings(item)]
    return []
