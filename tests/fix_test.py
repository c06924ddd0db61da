"""Tests for ``kvlint check --fix`` / ``--unsafe-fixes`` / ``--diff`` and ``kvlint.fix``.

Each folder of ``tests/fixtures/fix`` is a realistic carrier (a vLLM config with a BOM and odd
quoting, a JSON config, a CRLF Kubernetes manifest with two documents and an env value, an
``sh -c`` script, compose, Helm values, a plan); ``<file>.fixed`` is the file after
``--fix --unsafe-fixes`` and ``<file>.safe`` after ``--fix`` alone, compared byte for byte.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from kvlint.deploy.load import load_bytes
from kvlint.finding import Applicability
from kvlint.finding import Edit
from kvlint.finding import Finding
from kvlint.finding import Fix
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.finding import fix_marker
from kvlint.fix import FileFix
from kvlint.fix import StaleFile
from kvlint.fix import apply_fixes
from kvlint.fix import unified_diff
from kvlint.fix import write_fixed
from testing.cli import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "fix"
# Facts a case's files do not give (the Kubernetes, Helm and plan files name their GPU).
CASES = {
    "vllm-config": ["--gpu", "L4-24GB"],
    "json": ["--gpu", "A100-SXM-80GB"],
    "k8s-args": [],
    "k8s-sh-c": [],
    "compose": ["--gpu", "L4-24GB"],
    "helm": [],
    "plan": [],
}
EXPECTED = (".fixed", ".safe")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # the config search stops here
    return tmp_path


def copy_case(case: str) -> list[Path]:
    """The case's input files, copied under the current folder; their paths."""
    inputs = []
    for source in sorted((FIXTURES / case).iterdir()):
        if source.suffix in EXPECTED:
            continue
        target = Path(case) / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        inputs.append(target)
    return inputs


def expected(path: Path, suffix: str) -> bytes:
    """The expected bytes after fixing; the input itself when the case has no such file."""
    fixture = FIXTURES / path.parent.name / path.name
    candidate = fixture.with_name(fixture.name + suffix)
    return (candidate if candidate.exists() else fixture).read_bytes()


def check(case: str, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    argv = ["check", case, "--offline", "--no-config", "--format", "concise", "--color", "never"]
    result = run_cli([*argv, *CASES[case], *extra], capsys)
    return result.code, result.out, result.err


@pytest.mark.parametrize("case", sorted(CASES))
def test_unsafe_fixes_match_the_expected_files(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    files = copy_case(case)
    code, out, err = check(case, "--fix", "--unsafe-fixes", capsys=capsys)
    for path in files:
        assert path.read_bytes() == expected(path, ".fixed"), path
    assert re.search(r"^kvlint: fixed \d+ findings? in 1 file$", err, re.MULTILINE), err
    # The report is the re-check: no finding left that an applied fix would have answered.
    assert "[*]" not in out and "[~]" not in out
    assert code in (0, 1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_second_fix_changes_nothing(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    files = copy_case(case)
    check(case, "--fix", "--unsafe-fixes", capsys=capsys)
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in files}
    _, _, err = check(case, "--fix", "--unsafe-fixes", capsys=capsys)
    assert "fixed" not in err
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in files} == before


@pytest.mark.parametrize("case", sorted(CASES))
def test_diff_writes_nothing_and_applies_with_patch(
    case: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    files = copy_case(case)
    code, out, _ = check(case, "--diff", "--unsafe-fixes", capsys=capsys)
    assert code == 1
    for path in files:
        assert path.read_bytes() == (FIXTURES / case / path.name).read_bytes()
    assert out.startswith(f"--- {case}/")
    patch = tmp_path / "fixes.patch"
    patch.write_bytes(out.encode("utf-8"))
    subprocess.run(
        ["patch", "-p0", "--quiet", "--input", str(patch)], cwd=tmp_path, check=True, timeout=60
    )
    for path in files:
        assert path.read_bytes() == expected(path, ".fixed"), path


def test_fix_alone_applies_only_safe_fixes(capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = copy_case("plan")
    code, out, err = check("plan", "--fix", capsys=capsys)
    assert path.read_bytes() == expected(path, ".safe")
    assert "fixed 1 finding in 1 file" in err
    # What remains is reported, marked as needing --unsafe-fixes (the pool's figures move with
    # the fitted memory constants: masked).
    pool = re.compile(r"the pool holds [\d.]+ GiB \([\d.]+ GiB per GPU x 8, [\d,]+ tokens\)")
    assert [pool.sub("the pool holds POOL", line) for line in out.splitlines()] == [
        "plan/capacity.yaml:10:17: KV301 [warning] [~] `max_num_seqs` 64 needs 640 GiB of KV "
        "cache if every request used all 32,768 tokens of `max_model_len` (10 GiB each); the pool "
        "holds POOL, enough for 42",
        "plan/capacity.yaml:13:16: KV301 [warning] [~] `concurrency` 64 needs 640 GiB of KV cache "
        "at `context` 32,768 (10 GiB each); the pool holds POOL, enough for 42",
        "plan/capacity.yaml:17:19: KV201 [error] [~] the plan assumes `kv_cache_dtype` `int4`, a "
        "weight quantisation, but `kv_cache_dtype` is `auto`: the cache stays bfloat16, 320 KiB "
        "per token, not 80 KiB (4x)",
    ]
    assert code == 1


def test_report_marks_every_fixable_finding(capsys: pytest.CaptureFixture[str]) -> None:
    copy_case("plan")
    _, out, _ = check("plan", capsys=capsys)
    marks = [line.split(" ")[3] for line in out.splitlines()]
    assert marks == ["[~]", "[~]", "[*]", "[~]"]  # KV301 x2 unsafe, KV101 safe, KV201 unsafe
    _, out, _ = check("plan", "--unsafe-fixes", capsys=capsys)
    assert [line.split(" ")[3] for line in out.splitlines()] == ["[*]"] * 4


def test_each_round_takes_one_fix_per_deployment(capsys: pytest.CaptureFixture[str]) -> None:
    """The cache dtype goes to fp8 first (KV201); re-checked, 64 sequences then fit, so KV301
    no longer lowers them, and the stated bytes follow the new dtype (KV102)."""
    (path,) = copy_case("plan")
    code, out, err = check("plan", "--fix", "--unsafe-fixes", capsys=capsys)
    assert (code, out) == (0, "")
    assert "fixed 3 findings in 1 file" in err
    text = path.read_text(encoding="utf-8")
    assert "max-num-seqs: 64\n" in text and "kv-cache-dtype: fp8   #" in text
    assert 'kv_per_token: "160 KiB"' in text


def test_nothing_is_written_without_fix(capsys: pytest.CaptureFixture[str]) -> None:
    files = copy_case("k8s-args")
    stamps = [path.stat().st_mtime_ns for path in files]
    check("k8s-args", "--unsafe-fixes", capsys=capsys)
    assert [path.stat().st_mtime_ns for path in files] == stamps
    assert [path.read_bytes() for path in files] == [expected(p, "") for p in files]


def test_diff_with_nothing_to_fix_is_empty(capsys: pytest.CaptureFixture[str]) -> None:
    copy_case("k8s-sh-c")
    code, out, err = check("k8s-sh-c", "--diff", capsys=capsys)  # its fixes are all unsafe
    assert (code, out, err) == (0, "", "")


def test_permissions_and_symlinks_are_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """A symlink whose target is inside the checked tree: the target is rewritten (with its
    mode), the link stays a link. (A target outside it: tests/hostile/fix_scope_test.py.)"""
    (path,) = copy_case("helm")
    real = path.parent / ".real-values.yaml"  # hidden: found only through the link
    path.rename(real)
    path.symlink_to(real.name)
    real.chmod(0o640)
    check("helm", "--fix", "--unsafe-fixes", capsys=capsys)
    assert path.is_symlink()
    assert real.read_bytes() == expected(path, ".fixed")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in Path("helm").iterdir()) == [".real-values.yaml", path.name]


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "vllm.yaml"
    path.write_bytes(b"max-num-seqs: 64\n")
    fixed = FileFix(path, "vllm.yaml", b"max-num-seqs: 64\n", "max-num-seqs: 8\n")
    path.write_bytes(b"max-num-seqs: 32\n")  # someone saved the file meanwhile
    with pytest.raises(StaleFile):
        write_fixed(fixed)
    assert path.read_bytes() == b"max-num-seqs: 32\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_stale_file_is_reported_and_left_alone(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (path,) = copy_case("helm")
    import kvlint.fix

    real_write = kvlint.fix.write_fixed

    def edit_then_write(fixed: FileFix) -> None:
        path.write_bytes(path.read_bytes() + b"# edited meanwhile\n")
        real_write(fixed)

    monkeypatch.setattr(kvlint.fix, "write_fixed", edit_then_write)
    _, _, err = check("helm", "--fix", "--unsafe-fixes", capsys=capsys)
    assert "helm/values.yaml: changed on disk while kvlint read it; not written" in err
    assert path.read_bytes().endswith(b"# edited meanwhile\n")
    assert b"maxModelLen: 131072" in path.read_bytes()


# ---------------------------------------------------------------------------------------------
# apply_fixes on its own: conflicts, quoting, refusals.


def finding(code: str, span: Span, *edits: Edit, safe: bool = False) -> Finding:
    applicability = Applicability.SAFE if safe else Applicability.UNSAFE
    fix = Fix(f"fix {code}", edits, applicability)
    return Finding(code, "name", Severity.WARNING, span, "message", fix)


def value_span(text: str, value: str, path: str = "c.yaml") -> Span:
    """The span of the first ``value`` in ``text`` (which must be on one line)."""
    normalised = text.lstrip("\ufeff").replace("\r\n", "\n")
    offset = normalised.index(value)
    line = normalised.count("\n", 0, offset) + 1
    column = offset - (normalised.rfind("\n", 0, offset) + 1) + 1
    return Span(path, line, column, "$", end_column=column + len(value))


def test_conflicting_edits_on_one_value_first_in_code_order_wins() -> None:
    text = "model: m\nmax-num-seqs: 64\n"
    span = value_span(text, "64")
    later = finding("KV305", span, Edit(span, "16"))
    first = finding("KV301", span, Edit(span, "38"))
    result = apply_fixes(text, [later, first], display="c.yaml", unsafe_fixes=True, json_file=False)
    assert result.text == "model: m\nmax-num-seqs: 38\n"
    assert [a.code for a in result.applied] == ["KV301"]


def test_one_fix_per_owner_in_code_order() -> None:
    text = "a: 1\nb: 2\nc: 3\n"
    a, b, c = (value_span(text, v) for v in "123")
    findings = [
        finding("KV301", a, Edit(a, "5")),
        finding("KV201", b, Edit(b, "6")),
        finding("KV101", c, Edit(c, "7")),
    ]
    owners = {"KV301": 0, "KV201": 0, "KV101": 1}
    result = apply_fixes(
        text,
        findings,
        display="c.yaml",
        unsafe_fixes=True,
        json_file=False,
        owner=lambda f: owners[f.code],
    )
    assert result.text == "a: 1\nb: 6\nc: 7\n"
    assert [a.code for a in result.applied] == ["KV101", "KV201"]


def test_a_fix_goes_in_whole_or_not_at_all() -> None:
    text = "a: 1\nb: 2\n"
    a, b = value_span(text, "1"), value_span(text, "2")
    taken = finding("KV301", a, Edit(a, "5"))
    both = finding("KV302", b, Edit(b, "6"), Edit(a, "7"))  # overlaps the first: waits
    result = apply_fixes(text, [both, taken], display="c.yaml", unsafe_fixes=True, json_file=False)
    assert result.text == "a: 5\nb: 2\n"


@pytest.mark.parametrize(
    ("line", "replacement", "fixed"),
    [
        ("k: '64'  # c", "8", "k: '8'  # c"),
        ('k: "64"', "8", 'k: "8"'),
        ("k: 2.5 MiB", "320 KiB", "k: 320 KiB"),
        ("k: 64", "a: b", 'k: "a: b"'),
        ("k: [--max-num-seqs, '64']", "8", "k: [--max-num-seqs, '8']"),
        ("k: 'it''s'", "it's", "k: 'it''s'"),
    ],
)
def test_quoting_style_is_kept(line: str, replacement: str, fixed: str) -> None:
    value = line.split(": ", 1)[1].split("  #")[0]
    if value.startswith("["):
        value = "'64'"
    span = value_span(line, value)
    result = apply_fixes(
        line + "\n",
        [finding("KV301", span, Edit(span, replacement))],
        display="c.yaml",
        unsafe_fixes=True,
        json_file=False,
    )
    assert result.text == fixed + "\n"


def test_json_strings_stay_json() -> None:
    text = '{"kv-cache-dtype": "fp8", "max-num-seqs": 64}\n'
    dtype, seqs = value_span(text, '"fp8"'), value_span(text, "64")
    findings = [
        finding("KV202", dtype, Edit(dtype, "auto")),
        finding("KV301", seqs, Edit(seqs, "8")),
    ]
    result = apply_fixes(text, findings, display="c.yaml", unsafe_fixes=True, json_file=True)
    assert result.text == '{"kv-cache-dtype": "auto", "max-num-seqs": 8}\n'


@pytest.mark.parametrize(
    ("text", "value", "replacement", "reason"),
    [
        ('args: ["sh", "-c", "vllm serve m --max-num-seqs \\"64\\""]', '"64\\"', "8", "escapes"),
        ("args: ['vllm serve m --max-num-seqs 64']", "64", "a b", "inside a command line"),
        ("k: |\n  64\nj: 1\n", "|\n  64\n", "8", "block scalar"),
        ("k: |\n  vllm serve --max-num-seqs 64\n", "|\n  vllm", "8", "spans lines"),
    ],
)
def test_edits_kvlint_will_not_make(text: str, value: str, replacement: str, reason: str) -> None:
    normalised = text
    offset = normalised.index(value)
    end = offset + len(value)
    line = normalised.count("\n", 0, offset) + 1
    column = offset - (normalised.rfind("\n", 0, offset) + 1) + 1
    end_line = normalised.count("\n", 0, end) + 1
    end_column = end - (normalised.rfind("\n", 0, end) + 1) + 1
    span = Span("c.yaml", line, column, "$", end_column, end_line if end_line != line else None)
    result = apply_fixes(
        text,
        [finding("KV301", span, Edit(span, replacement))],
        display="c.yaml",
        unsafe_fixes=True,
        json_file=False,
    )
    assert result.text == text
    assert len(result.skipped) == 1 and reason in result.skipped[0].reason


def test_fix_marker() -> None:
    span = Span("c.yaml", 1, 1, end_column=2)
    safe = Fix("t", (Edit(span, "1"),), Applicability.SAFE)
    unsafe = Fix("t", (Edit(span, "1"),), Applicability.UNSAFE)
    advice = Fix("t", (), Applicability.SAFE)
    assert [fix_marker(f) for f in (safe, unsafe, advice, None)] == ["[*]", "[~]", "", ""]
    assert fix_marker(unsafe, unsafe_fixes=True) == "[*]"


def test_diff_marks_a_missing_final_newline(tmp_path: Path) -> None:
    fixed = FileFix(tmp_path / "c.yaml", "c.yaml", b"a: 1\nb: 2", "a: 1\nb: 3")
    assert unified_diff(fixed) == (
        "--- c.yaml\n+++ c.yaml\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n\\ No newline at end of file\n"
        "+b: 3\n\\ No newline at end of file\n"
    )


# ---------------------------------------------------------------------------------------------
# Property: fixing changes the fixed values and not one other character of the file.

FIELDS = {
    "max-model-len": ("max_model_len", st.integers(1, 2_000_000).map(str)),
    "max-num-seqs": ("max_num_seqs", st.integers(1, 4096).map(str)),
    "gpu-memory-utilization": ("memory_fraction", st.sampled_from(["0.8", "0.85", "0.95"])),
    "kv-cache-dtype": ("kv_cache_dtype", st.sampled_from(["auto", "fp8", "fp8_e4m3", "bfloat16"])),
}
NOISE = st.sampled_from(["", "# a comment", "   # indented comment", "# kvlint: note"])


@st.composite
def config_files(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """A vLLM config YAML in random shapes, and the replacement for each value to fix."""
    keys = draw(st.permutations(list(FIELDS)))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [draw(NOISE) for _ in range(draw(st.integers(0, 2)))]
    lines.append("model: meta-llama/Llama-3.1-8B-Instruct")
    replacements: dict[str, str] = {}
    for key in keys:
        _, values = FIELDS[key]
        value = draw(values)
        quote = draw(st.sampled_from(["", "'", '"']))
        gap = draw(st.sampled_from(["", " ", "    "]))
        comment = draw(st.sampled_from(["", "  # why", " #x"]))
        lines.append(f"{key}:{gap} {quote}{value}{quote}{comment}")
        lines.extend(draw(NOISE) for _ in range(draw(st.integers(0, 1))))
        replacements[key] = draw(values)
    if draw(st.booleans()):  # another document after this one
        lines += ["---", "# left alone", "apiVersion: v1", "kind: ConfigMap", "data: {a: '64'}"]
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return bom + newline.join(lines) + newline, replacements


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config_files())
def test_fixing_changes_only_the_fixed_values(case: tuple[str, dict[str, str]]) -> None:
    text, replacements = case
    loaded = load_bytes(text.encode("utf-8"), display="c.yaml")
    (dep,) = loaded.deployments
    findings = []
    for key, replacement in replacements.items():
        attribute, _ = FIELDS[key]
        span = getattr(dep, attribute).span
        findings.append(finding("KV301", span, Edit(span, replacement)))
    result = apply_fixes(text, findings, display="c.yaml", unsafe_fixes=True, json_file=False)
    before = text.splitlines(keepends=True)
    after = result.text.splitlines(keepends=True)
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        key = old.partition(":")[0]
        if key not in replacements or old.startswith(("-", "#", " ")):
            assert new == old
            continue
        # Around the value, every character is the same: key, spacing, quotes, comment, ending.
        value = str(getattr(dep, FIELDS[key][0]).raw).strip("'\"")
        head, _, tail = old.partition(value)
        assert new == head + replacements[key] + tail
    again = load_bytes(result.text.encode("utf-8"), display="c.yaml").deployments[0]
    for key, replacement in replacements.items():
        assert str(getattr(again, FIELDS[key][0]).value) == str(
            type(getattr(dep, FIELDS[key][0]).value)(replacement)
        )


def test_crlf_and_bom_survive_a_real_fix(capsys: pytest.CaptureFixture[str]) -> None:
    files = copy_case("k8s-args")
    check("k8s-args", "--fix", "--unsafe-fixes", capsys=capsys)
    data = files[0].read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") == 34
    (serving,) = copy_case("vllm-config")
    check("vllm-config", "--fix", "--unsafe-fixes", capsys=capsys)
    assert serving.read_bytes().startswith(b"\xef\xbb\xbf# vllm serve")
    assert os.path.getsize(serving) == len(expected(serving, ".fixed"))


# ---------------------------------------------------------------------------------------------
# The `kvlint-fix` pre-commit hook, run by pre-commit itself (as a local hook with the manifest's
# entry, so no package registry is needed): it fixes the file, and pre-commit fails the hook
# because a file changed; on the fixed file it passes.

REPO = Path(__file__).resolve().parent.parent


def test_kvlint_fix_hook_through_pre_commit(tmp_path: Path) -> None:
    import json
    import sys

    from ruamel.yaml import YAML

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    manifest = YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())
    hooks = {h["id"]: h for h in manifest}
    hook = hooks["kvlint-fix"]
    assert hook["entry"] == "kvlint check --fix --show-fixes"
    assert hook["types_or"] == ["yaml", "json"]
    kvlint = Path(sys.executable).with_name("kvlint")
    entry = hook["entry"].replace("kvlint", str(kvlint), 1) + " --offline --gpu A100-SXM-80GB"
    local = {"id": hook["id"], "name": hook["name"], "entry": entry, "language": "system"}
    local["types_or"] = hook["types_or"]
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (tmp_path / ".pre-commit-config.yaml").write_text(json.dumps(config))  # JSON is YAML
    shutil.copyfile(FIXTURES / "json" / "a100.json", tmp_path / "a100.json")
    plan = tmp_path / "capacity.yaml"
    shutil.copyfile(FIXTURES / "plan" / "capacity.yaml", plan)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT"))}
    env |= {"PRE_COMMIT_HOME": str(tmp_path / ".cache"), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    env["HF_HOME"] = str(tmp_path / ".hf-home")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    command = [sys.executable, "-m", "pre_commit", "run", "kvlint-fix", "--color", "never"]
    command += ["--files", "capacity.yaml", "a100.json"]

    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    out = first.stdout + first.stderr
    assert first.returncode == 1, out
    assert "files were modified by this hook" in out
    # --show-fixes: which finding each fix answered, and the text it changed.
    assert "kvlint: fixed 1 finding in 1 file\n  capacity.yaml:16:17: KV101 [*] " in out, out
    assert plan.read_bytes() == expected(Path("plan") / "capacity.yaml", ".safe")
    assert (tmp_path / "a100.json").read_bytes() == expected(Path("json/a100.json"), "")

    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    out = second.stdout + second.stderr
    assert "files were modified by this hook" not in out
    assert plan.read_bytes() == expected(Path("plan") / "capacity.yaml", ".safe")


@st.composite
def manifests(draw: st.DrawFn) -> tuple[str, str, str]:
    """A Kubernetes container whose `--max-num-seqs` is written one of the ways people write
    it (an args item, `--flag=value`, a word of an `sh -c` script, an env value), and the
    value to write instead."""
    value = str(draw(st.integers(1, 4096)))
    quote = draw(st.sampled_from(["", "'", '"']))
    shape = draw(st.sampled_from(["items", "equals", "block", "folded", "inline", "env"]))
    head = [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: {name: llm}  # flow",
        "spec:",
        "  containers:",
        "    - name: vllm",
        "      image: vllm/vllm-openai:v0.11.0",
    ]
    word = f"{quote}{value}{quote}"
    if shape == "items":
        body = ["      args:", "        - meta-llama/Llama-3.1-8B-Instruct"]
        body += ["        - --max-num-seqs", f"        - {word}  # note"]
    elif shape == "equals":
        body = ["      args: [meta-llama/Llama-3.1-8B-Instruct, " + f"--max-num-seqs={value}]"]
    elif shape == "block":
        body = ['      command: ["/bin/sh", "-c"]', "      args:", "        - |"]
        body += ["          # serve", "          vllm serve meta-llama/Llama-3.1-8B-Instruct \\"]
        body += [f"            --max-num-seqs {word} --port 8000"]
    elif shape == "folded":  # folded lines join with spaces: one command
        body = ['      command: ["/bin/sh", "-c"]', "      args:", "        - >-"]
        body += ["          vllm serve meta-llama/Llama-3.1-8B-Instruct"]
        body += [f"          --max-num-seqs {word}", "          --port 8000"]
    elif shape == "inline":
        script = f"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs {value}"
        body = ["      command: [sh, -c]", f"      args: ['{script}']"]
    else:
        body = ["      args: [meta-llama/Llama-3.1-8B-Instruct, --max-num-seqs, $(SEQS)]"]
        env_quote = quote or '"'  # Kubernetes env values are strings
        body += ["      env:", "        - name: SEQS", f"          value: {env_quote}{value}"]
        body[-1] += env_quote
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(["# a pod", *head, *body, "---", "kind: Other"]) + newline
    return text, value, str(draw(st.integers(1, 4096)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests())
def test_fixing_a_command_line_changes_only_that_word(case: tuple[str, str, str]) -> None:
    text, value, replacement = case
    (dep,) = load_bytes(text.encode("utf-8"), display="c.yaml").deployments
    assert dep.max_num_seqs is not None and dep.max_num_seqs.value == int(value)
    span = dep.max_num_seqs.span
    fixes = [finding("KV301", span, Edit(span, replacement))]
    result = apply_fixes(text, fixes, display="c.yaml", unsafe_fixes=True, json_file=False)
    assert not result.skipped
    before = text.splitlines(keepends=True)
    after = result.text.splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(before) == len(after) and changed == (
        [span.line - 1] if value != replacement else []
    )
    if changed:
        line = before[span.line - 1]
        start, end = span.column - 1, (span.end_column or 0) - 1
        assert line[start:end].strip("'\"") == value
        assert (
            after[span.line - 1]
            == line[:start] + line[start:end].replace(value, replacement) + line[end:]
        )
    (again,) = load_bytes(result.text.encode("utf-8"), display="c.yaml").deployments
    assert again.max_num_seqs is not None and again.max_num_seqs.value == int(replacement)


@st.composite
def over_budget_configs(draw: st.DrawFn) -> str:
    """A vLLM config for Llama 3.1 8B on an L4 that asks for more than fits, in random shapes."""
    entries = {
        "max-model-len": str(draw(st.sampled_from([8192, 32768, 131072]))),
        "max-num-seqs": str(draw(st.integers(64, 1024))),
        "gpu-memory-utilization": draw(st.sampled_from(["0.9", "0.85"])),
        "enable-prefix-caching": "true",
    }
    lines = ["model: meta-llama/Llama-3.1-8B-Instruct"]
    for key in draw(st.permutations(list(entries))):
        quote = draw(st.sampled_from(["", "'", '"']))
        comment = draw(st.sampled_from(["", "  # why", "   # sized by hand"]))
        lines.append(f"{key}: {quote}{entries[key]}{quote}{comment}")
        lines.extend(draw(NOISE) for _ in range(draw(st.integers(0, 1))))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + newline


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(over_budget_configs())
def test_real_fixes_change_only_values(text: str) -> None:
    """Through the real linter and rules: a changed line keeps its key, quotes and comment."""
    from kvlint.config import load_config
    from kvlint.config import resolve
    from kvlint.fix import fix_paths
    from kvlint.registry import default_registry

    path = Path("vllm.yaml")  # in the test's own temporary folder (see `isolated`)
    path.write_bytes(text.encode("utf-8"))
    settings = resolve(load_config(None), default_registry(), gpu="L4-24GB", offline=True)
    (fixed,) = fix_paths([str(path)], settings, unsafe_fixes=True).files
    assert fixed.applied  # 64+ sequences never fit an L4
    before = text.splitlines(keepends=True)
    after = fixed.text.splitlines(keepends=True)
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        if old == new:
            continue
        key, _, rest = old.partition(": ")
        assert key in ("max-model-len", "max-num-seqs"), old
        value, hash_, comment = rest.partition("  #") if "  #" in rest else rest.partition(" #")
        new_key, _, new_rest = new.partition(": ")
        quote = value.strip()[0] if value.strip()[0] in "'\"" else ""
        assert new_key == key and new_rest.startswith(quote)
        assert new_rest.rstrip("\r\n").endswith(hash_ + comment.rstrip("\r\n"))
        assert new.endswith("\r\n") == old.endswith("\r\n")
