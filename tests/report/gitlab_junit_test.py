"""--format gitlab (GitLab Code Quality) and --format junit, through the real CLI, validated
against schemas written in tests/report/schemas/ from the formats' documented fields."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
import xmlschema

from testing.cli import run_cli

SCHEMAS = Path(__file__).resolve().parent / "schemas"
GITLAB = json.loads((SCHEMAS / "gitlab-codequality.schema.json").read_text(encoding="utf-8"))
JUNIT = xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd"))

# KV301 (warning, unsafe fix) and KV501 (error) in one file; a clean deployment in another.
FOUND = """\
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 256
gpu-memory-utilisation: 0.9
"""
CLEAN = "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 8192\nmax-num-seqs: 4\n"


@pytest.fixture(autouse=True)
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "found.yaml").write_text(FOUND, encoding="utf-8")
    (tmp_path / "deploy" / "clean.yaml").write_text(CLEAN, encoding="utf-8")
    return tmp_path


ARGS = ["--gpu", "H100-SXM-80GB", "--offline"]


def test_gitlab_report_is_valid_code_quality(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(["check", "./deploy", *ARGS, "--format", "gitlab"], capsys)
    assert done.code == 1
    issues = json.loads(done.out)
    jsonschema.Draft202012Validator(GITLAB).validate(issues)
    assert [(i["check_name"], i["severity"]) for i in issues] == [
        ("KV301 max-num-seqs-over-kv-budget", "major"),
        ("KV501 unknown-engine-flag", "critical"),
    ]
    first = issues[0]
    assert first["location"] == {"path": "deploy/found.yaml", "lines": {"begin": 3}}
    assert first["description"].startswith("`max_num_seqs` 256 needs ")
    assert "(fix: Lower `max_num_seqs` to " in first["description"]
    assert len({i["fingerprint"] for i in issues}) == 2
    # Stable across runs: a merge request compares them with the target branch's.
    again = json.loads(run_cli(["check", "deploy", *ARGS, "--format", "gitlab"], capsys).out)
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]


def test_gitlab_fingerprints_are_unique_for_a_repeated_finding() -> None:
    from kvlint.finding import Finding
    from kvlint.finding import Severity
    from kvlint.finding import Span
    from kvlint.report.gitlab import issue

    finding = Finding("KV501", "unknown-engine-flag", Severity.ERROR, Span("a.yaml", 3, 1), "m")
    seen: dict[str, int] = {}
    prints = {
        issue(finding._replace(span=Span("a.yaml", n, 1)), seen)["fingerprint"] for n in (3, 9)
    }
    assert len(prints) == 2


def test_clean_gitlab_report_is_an_empty_array(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(["check", "deploy/clean.yaml", *ARGS, "--format", "gitlab"], capsys)
    assert (done.code, json.loads(done.out)) == (0, [])


def test_junit_report_is_valid_and_fails_as_the_run_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run_cli(["check", "deploy", *ARGS, "--format", "junit"], capsys)
    assert done.code == 1
    JUNIT.validate(done.out)
    root = ET.fromstring(done.out)
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "3", "2")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"deploy/clean.yaml", "deploy/found.yaml"}
    clean = suites["deploy/clean.yaml"]
    (passed,) = clean.iter("testcase")
    assert (passed.get("name"), list(passed)) == ("vllm config", [])
    cases = list(suites["deploy/found.yaml"].iter("testcase"))
    assert [c.get("name") for c in cases] == [
        "KV301 max-num-seqs-over-kv-budget at 3:15",
        "KV501 unknown-engine-flag at 4:1",
    ]
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "warning"
    assert (failure.text or "").startswith("deploy/found.yaml:3:15: KV301 [warning] ")
    # At --fail-on error the warning passes, as the exit code says.
    lenient = run_cli(["check", "deploy", *ARGS, "--format", "junit", "--fail-on", "error"], capsys)
    JUNIT.validate(lenient.out)
    root = ET.fromstring(lenient.out)
    assert root.get("failures") == "1"
    warning = next(c for c in root.iter("testcase") if c.get("name", "").startswith("KV301"))
    assert warning.find("failure") is None
    assert (warning.findtext("system-out") or "").startswith("deploy/found.yaml:3:15: KV301 ")


def test_junit_escapes_what_xml_cannot_hold() -> None:
    import io

    from kvlint.finding import Finding
    from kvlint.finding import Severity
    from kvlint.finding import Span
    from kvlint.linter import LintResult
    from kvlint.linter import summarise
    from kvlint.report.junit import JunitReporter

    message = "bad \x1b[31m <b>& \x7f\x9b1m"  # ESC, and DEL and the 8-bit CSI a plugin can write
    finding = Finding("KV501", "x\x9b", Severity.ERROR, Span("a<&>.yaml", 1, 1), message)
    stream = io.StringIO()
    reporter = JunitReporter(stream)
    reporter.finding(finding)
    reporter.finish(summarise(LintResult(("a<&>.yaml",), (), (finding,)), Severity.WARNING))
    JUNIT.validate(stream.getvalue())
    case = next(ET.fromstring(stream.getvalue()).iter("testcase"))
    assert case.get("classname") == "a<&>.yaml"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "bad \ufffd[31m <b>& \ufffd\ufffd1m"
    assert case.get("name") == "KV501 x\ufffd at 1:1"
