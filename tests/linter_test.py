"""Tests for kvlint.linter with small fakes of the loader and the model resolver: the pipeline's
own duties (file walk, stamping, isolation, routing, suppression, sorting, exit codes)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from kvlint.config import Settings
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.errors import KvlintError
from kvlint.errors import ModelNotResolved
from kvlint.finding import Finding
from kvlint.finding import InputProblem
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import Seams
from kvlint.linter import collect_files
from kvlint.linter import exit_code
from kvlint.linter import lint_paths
from kvlint.registry import Registry
from kvlint.registry import default_registry
from kvlint.rule import Rule
from kvlint.selection import PerFileIgnore
from kvlint.selection import Selection
from kvlint.sizing import Sizing
from testing.builders import deployment

TEXT = """\
model: acme/model-7b
max-num-seqs: 512  # kvlint: disable=KV399 measured
max-model-len: 8192  # kvlint: disable=KV398
"""


class TooMany(Rule):
    """A fake capacity rule: fires on every deployment with a model."""

    code = "KV399"
    name = "too-many"
    severity = Severity.ERROR

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        assert dep.max_num_seqs is not None
        yield Problem(dep.max_num_seqs.span, "`max_num_seqs` 512 is too many")
        yield Problem(dep.span, "graver form", severity=Severity.INFO)


class Crashes(Rule):
    code = "KV398"
    name = "crashes"
    severity = Severity.WARNING
    engines = frozenset({"vllm"})

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        raise ZeroDivisionError("division by zero")


class SglangOnly(Rule):
    code = "KV397"
    name = "sglang-only"
    severity = Severity.ERROR
    engines = frozenset({"sglang"})

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        yield Problem(dep.span, "never for vllm")


def registry() -> Registry:
    # The input-problem rules (KV5xx, KV9xx) are real; the model rules are the fakes above.
    builtins = {c: r for c, r in default_registry().rules.items() if c[:3] in ("KV5", "KV9")}
    rules = {**builtins, "KV397": SglangOnly, "KV398": Crashes, "KV399": TooMany}
    return Registry(dict(sorted(rules.items())), dict.fromkeys(rules, "kvlint"))


def vllm_config(display: str, model: str = "acme/model-7b") -> Deployment:
    """A vLLM config file that names ``model``, as the fake loader reads ``display``."""
    return deployment(
        Sourced("vllm", Span(display, 1, 1)),
        path=display,
        name="vllm config",
        carrier="engine_yaml",
        model=Sourced(model, Span(display, 1, 8, "model")),
        max_num_seqs=Sourced(512, Span(display, 2, 15, "max-num-seqs")),
    )


@pytest.fixture
def fakes() -> SimpleNamespace:
    """A loader, a resolver and a sizer standing in for the real ones (the linter's seams);
    ``calls`` records what the linter asked of them."""
    calls = SimpleNamespace(resolve=[], load=[])

    def load(path: Path, display: str, data: bytes | None) -> Any:
        calls.load.append(display)
        text = path.read_text()
        if "broken" in path.name:
            raise KvlintError("mapping values are not allowed here", Span(display, 2, 7))
        if "crash" in path.name:
            raise RuntimeError("loader bug")
        problems = [InputProblem("KV905", Span(display, 5, 1), "not a deployment")]
        deps = [vllm_config(display)]
        if "unknown" in path.name:
            deps = [vllm_config(display, model="acme/nope")]
        if "badmodel" in path.name:
            deps = [vllm_config(display, model="acme/broken")]
        if "buggy" in path.name:
            deps = [vllm_config(display, model="acme/" + "x" * 300)]
        if "annotated" in path.name:
            value = Sourced("KV399: reviewed; KV501", Span(display, 4, 30, "annotations"))
            deps[0].annotations["kvlint.dev/ignore"] = value
        return SimpleNamespace(path=display, text=text, deployments=deps, problems=problems)

    def resolve(ref: str, *, offline: bool, base_dir: Path, hub: Any) -> Any:
        calls.resolve.append(ref)
        if ref == "acme/nope":
            raise ModelNotResolved("`acme/nope` is not in the catalog (set HF_HOME)")
        if ref == "acme/broken":
            raise KvlintError("config.json:1:2: the model config is not valid JSON")
        if ref.startswith("acme/xxx"):
            raise RuntimeError("resolver bug")
        return SimpleNamespace(spec=SimpleNamespace(name=ref), origin="catalog", detail="")

    def size(dep: Deployment, spec: Any, *, account: Any) -> Sizing:
        return Sizing(spec=spec, kv=None, gpu=None, engine=None, missing=("GPU type",))

    calls.seams = Seams(load=load, resolve=resolve, size=size)
    return calls


def write(path: Path, text: str = TEXT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def lines(findings: tuple[Finding, ...]) -> list[str]:
    return [f"{f.span.location()}: {f.code} [{f.severity}] {f.message}" for f in findings]


def test_collect_files_walks_folders_in_order(tmp_path: Path) -> None:
    for name in ["b.yaml", "a/z.yml", "a/c.json", "notes.txt", ".hidden.yaml"]:
        write(tmp_path / name)
    # The JavaScript tools' JSON (tsconfig.json is JSON with comments: KV901 in a walk before).
    js = ["web/package.json", "web/package-lock.json", "web/tsconfig.base.json", "jsconfig.json"]
    for skipped in [".git/x.yaml", "node_modules/y.yaml", ".github/w.yaml", *js]:
        write(tmp_path / skipped)
    found = collect_files([str(tmp_path), str(tmp_path / "b.yaml")])
    assert [display for _, display in found] == [
        f"{tmp_path}/a/c.json",
        f"{tmp_path}/a/z.yml",
        f"{tmp_path}/b.yaml",
    ]
    with pytest.raises(KvlintError, match="no such file or directory"):
        collect_files([str(tmp_path / "missing.yaml")])


def test_pipeline_stamps_suppresses_isolates_and_sorts(
    tmp_path: Path, fakes: SimpleNamespace
) -> None:
    path = str(write(tmp_path / "vllm.yaml"))
    settings = Settings(Selection(), severities={"KV907": Severity.WARNING})
    result = lint_paths([path], settings, registry(), seams=fakes.seams)
    assert lines(result.findings) == [
        f"{path}:1:1: KV399 [info] graver form",
        f"{path}:1:1: KV907 [warning] the files do not give the GPU type: the checks that need it "
        "did not run (name the GPU with `--gpu` or `gpu` in the kvlint config)",
        # A rule that raises is one KV909 naming it and its package (kvlint.isolation).
        f"{path}:1:1: KV909 [error] rule KV398 `crashes` of 'kvlint' failed, so its findings on "
        "this deployment are missing: ZeroDivisionError: division by zero",
        # KV399 on line 2 is suppressed by its comment; the comment on line 3 names a rule that
        # produced only an internal error on line 1, so it suppresses nothing.
        f"{path}:3:22: KV906 [warning] `# kvlint: disable=KV398` suppresses nothing",
        f"{path}:5:1: KV905 [warning] not a deployment",
    ]
    assert [len(d.findings) for d in result.deployments] == [3]
    assert result.deployments[0].model_origin == "catalog"
    # A rule that did not run to its end leaves the check incomplete: exit 2, as for a file
    # kvlint could not read.
    assert exit_code(result.findings, Severity.WARNING) == 2


def test_unknown_model_is_kv902_and_skips_model_rules(
    tmp_path: Path, fakes: SimpleNamespace
) -> None:
    first = str(write(tmp_path / "unknown-a.yaml", "model: acme/nope\n"))
    second = str(write(tmp_path / "unknown-b.yaml", "model: acme/nope\n"))
    result = lint_paths(
        [first, second], Settings(Selection(ignore=("KV905",))), registry(), seams=fakes.seams
    )
    assert fakes.resolve == ["acme/nope"]  # once per reference in a run
    codes = [(f.span.path, f.code) for f in result.findings]
    assert codes == [(first, "KV907"), (first, "KV902"), (second, "KV907"), (second, "KV902")]
    kv902 = result.findings[1]
    # Not resolvable here: a warning naming the checks that did not run, not a failed run.
    assert (kv902.span.line, kv902.span.column, kv902.severity) == (1, 8, Severity.WARNING)
    assert kv902.message == (
        "`acme/nope` is not in the catalog (set HF_HOME); "
        "not checked without the model: KV398, KV399"  # KV397 is SGLang's alone
    )
    assert exit_code(result.findings, Severity.ERROR) == 0
    assert exit_code(result.findings, Severity.WARNING) == 1


def test_an_unreadable_model_file_is_an_error_and_exits_2(
    tmp_path: Path, fakes: SimpleNamespace
) -> None:
    path = str(write(tmp_path / "badmodel.yaml", "model: acme/broken\n"))
    result = lint_paths(
        [path], Settings(Selection(select=("KV902",))), registry(), seams=fakes.seams
    )
    (kv902,) = result.findings
    assert kv902.severity is Severity.ERROR
    assert kv902.message == "config.json:1:2: the model config is not valid JSON"
    assert exit_code(result.findings, Severity.ERROR) == 2


def test_the_checks_not_run_follow_the_selection(tmp_path: Path, fakes: SimpleNamespace) -> None:
    path = str(write(tmp_path / "unknown.yaml", "model: acme/nope\n"))
    result = lint_paths(
        [path], Settings(Selection(select=("KV902", "KV399"))), registry(), seams=fakes.seams
    )
    assert [f.message for f in result.findings] == [
        "`acme/nope` is not in the catalog (set HF_HOME); not checked without the model: KV399"
    ]
    result = lint_paths(
        [path], Settings(Selection(select=("KV902",))), registry(), seams=fakes.seams
    )
    messages = [f.message for f in result.findings]
    assert messages == ["`acme/nope` is not in the catalog (set HF_HOME)"]


def test_resolver_bug_is_a_kv902_not_a_crash(tmp_path: Path, fakes: SimpleNamespace) -> None:
    path = str(write(tmp_path / "buggy.yaml"))
    result = lint_paths(
        [path], Settings(Selection(select=("KV902",))), registry(), seams=fakes.seams
    )
    assert lines(result.findings) == [
        f"{path}:1:8: KV902 [error] internal error while resolving the model: "
        "RuntimeError: resolver bug"
    ]


def test_model_resolved_once_per_run(tmp_path: Path, fakes: SimpleNamespace) -> None:
    paths = [str(write(tmp_path / f"d{i}" / "vllm.yaml")) for i in range(3)]
    lint_paths(paths, Settings(Selection()), registry(), seams=fakes.seams)
    assert fakes.resolve == ["acme/model-7b"]  # a hub id: the same from every folder
    (tmp_path / "d0" / "acme" / "model-7b").mkdir(parents=True)  # now a local folder in d0
    fakes.resolve.clear()
    lint_paths(paths, Settings(Selection()), registry(), seams=fakes.seams)
    assert fakes.resolve == ["acme/model-7b", "acme/model-7b"]  # d0's own, and the hub id


def test_loader_errors_become_findings(tmp_path: Path, fakes: SimpleNamespace) -> None:
    broken = str(write(tmp_path / "broken.yaml"))
    crash = str(write(tmp_path / "crash.yaml"))
    result = lint_paths([broken, crash], Settings(Selection()), registry(), seams=fakes.seams)
    assert lines(result.findings) == [
        f"{broken}:2:7: KV901 [error] mapping values are not allowed here",
        f"{crash}:1:1: KV900 [error] internal error while reading the file: "
        "RuntimeError: loader bug",
    ]
    assert result.deployments == ()


def test_selection_and_per_file_ignores(tmp_path: Path, fakes: SimpleNamespace) -> None:
    path = str(write(tmp_path / "legacy" / "vllm.yaml"))
    selection = Selection(
        select=("KV9",),
        ignore=("KV906",),
        per_file_ignores=[PerFileIgnore("legacy/*", ("KV907",))],
        base_dir=tmp_path,
    )
    result = lint_paths([path], Settings(selection), registry(), seams=fakes.seams)
    assert [f.code for f in result.findings] == ["KV905"]


def test_disable_file_and_annotation(tmp_path: Path, fakes: SimpleNamespace) -> None:
    path = str(write(tmp_path / "vllm.yaml", TEXT + "# kvlint: disable-file=KV905,KV398\n"))
    result = lint_paths(
        [path], Settings(Selection(ignore=("KV907",))), registry(), seams=fakes.seams
    )
    # KV399's "graver form" at 1:1 stays; the line-3 comment's KV398 hit nothing on its line,
    # and the file-wide one neither: KV398's failure is KV909, which a KV398 directive leaves.
    assert [(f.code, f.span.line) for f in result.findings] == [
        ("KV399", 1),
        ("KV909", 1),
        ("KV906", 3),
        ("KV906", 4),
    ]
    annotated = str(write(tmp_path / "annotated.yaml", "model: acme/model-7b\n"))
    result = lint_paths(
        [annotated], Settings(Selection(ignore=("KV398", "KV905"))), registry(), seams=fakes.seams
    )
    assert [f.code for f in result.findings] == ["KV907", "KV906"]
    assert result.findings[1].span == Span(annotated, 4, 30, "annotations")
    assert result.findings[1].message == "`kvlint.dev/ignore: KV501` suppresses nothing"


_FRAGMENTS = [
    "model: meta-llama/Llama-3.1-8B-Instruct\n",
    "max-model-len: 32k\n",
    "max-num-seqs: 256\n",
    "kind: Deployment\n",
    "apiVersion: apps/v1\n",
    "spec:\n  template:\n    spec:\n      containers:\n        - args: [--max-num-seqs, x]\n",
    "services:\n  llm:\n    command: --model x -c 4096\n",
    "kvlint: plan/v1\nengine: vllm\n",
    "# kvlint: disable=KV301\n",
    "---\n",
    "- [a, {b: c}]\n",
    "gpu: H100\n",
    "\t\n",
    "{{ .Values.x }}\n",
    ": :\n",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.sampled_from(_FRAGMENTS), max_size=8),
    noise=st.text(max_size=40),
)
def test_real_pipeline_never_crashes(parts: list[str], noise: str) -> None:
    """Any mixture of deployment fragments and noise ends in findings, never an exception or
    an internal-error finding."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "deploy.yaml"
        path.write_text("".join(parts) + noise, encoding="utf-8", errors="surrogatepass")
        result = lint_paths([str(path)], Settings(Selection(), offline=True))
    assert not [f for f in result.findings if "internal error" in f.message]


def test_reading_ahead_stops_when_the_environment_keeps_the_hub_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are read ahead only to send their Hub lookups together: with HF_HUB_OFFLINE
    nothing is sent, so reading ahead stops at the first model (asking the environment sooner
    would import model resolution for a file of Services)."""
    from kvlint import linter
    from kvlint.registry import default_registry

    path = tmp_path / "a.yaml"
    path.write_text("model: acme/not-in-the-catalog\nmax-model-len: 4096\n")
    loads: list[Path] = []

    def load(file: Path, display: str, data: bytes | None) -> Any:
        loads.append(file)
        return linter.load_file(file, display, data)

    run = linter.Run(default_registry(), Settings(Selection())).with_seams(linter.Seams(load=load))
    other = tmp_path / "b.yaml"
    other.write_text("model: acme/another-one\nmax-model-len: 4096\n")
    targets = [(path, "a.yaml"), (other, "b.yaml")]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    linter.prefetch_models(run, targets)
    assert loads == [path] and list(run.preloaded) == [path]  # the first model says it
    run.preloaded.clear()
    loads.clear()
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(linter, "_in_parallel", lambda items, work: [None for _ in items])
    linter.prefetch_models(run, targets)  # both read ahead, their lookups sent together
    assert loads == [path, other] and list(run.preloaded) == [path, other]
