"""No super-linear path on small inputs (issue 15, item 4): each path an attack made slow (the GPU
name search on a node label, the trailing-TAB, placeholder, size and unresolved-value patterns on
long lines, the shell-token aligner and the variable substitution on long scripts) is run at ten
times the worst size the attack used and at a tenth of that, and the growth is compared with a
linear path's: ten times the input may take at most ``MAX_GROWTH`` times as long (a linear path
gives 10 to 25: a tenth of the size fits the CPU's caches, the whole does not; a quadratic one
100, a cubic one 1,000). A ratio, never an absolute time, measured twice before it fails (the
machine is shared); the alarm is only a hang guard, so the old code fails instead of running for
hours."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlint.source.text import SourceText

MAX_GROWTH = 50.0
GUARD_S = 60  # per measurement; a hang guard, not a timed assertion
REPEAT = 3  # the best of three: the machine is shared


@pytest.fixture(autouse=True)
def hang_guard() -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"a measurement ran past the {GUARD_S} s hang guard: super-linear")

    previous = signal.signal(signal.SIGALRM, expired)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _best(run: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEAT):
        signal.alarm(GUARD_S)
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
        signal.alarm(0)
    return min(times)


def assert_linear(
    make: Callable[[int], object],
    run: Callable[[object], object],
    size: int,
    *,
    growth: float = MAX_GROWTH,
) -> None:
    """``run(make(size))`` takes at most ``growth`` times ``run(make(size // 10))``."""
    small, big = make(size // 10), make(size)
    for _ in range(2):  # a second measurement before failing: another process may have run
        base = _best(lambda: run(small))
        grown = _best(lambda: run(big))
        if grown <= growth * max(base, 1e-4):
            return
    assert grown <= growth * max(base, 1e-4), (
        f"{size:,}: {grown:.3f} s, {grown / max(base, 1e-9):.0f}x the time of a tenth of it "
        f"({base:.4f} s); a linear path gives ~10x"
    )


# The attack's worst sizes; the tests run at ten times each.
GPU_LABEL = 4_400  # bytes of node label: 283 s
LONG_LINE = 80_000  # bytes on one line: 7 to 34 s
SCRIPT = 2_400_000  # bytes of sh -c script: 21 s


def test_the_gpu_name_search(tmp_path: object) -> None:
    from kvlint.gpus import lookup_gpu

    # Words with digits (every GPU name has one), none a GPU: every run of words is a candidate.
    assert_linear(lambda n: "1 " * (n // 2), lookup_gpu, 10 * GPU_LABEL)
    # A known name in every word and a size word none of them has: every candidate is refused
    # for the size, each one after looking at all the words.
    assert_linear(lambda n: "h100 " * (n // 5) + "7gb", lookup_gpu, 10 * GPU_LABEL)


def test_the_gpu_name_search_still_finds_names_in_text() -> None:
    from kvlint.gpus import lookup_gpu

    found = lookup_gpu("AWS g5.48xlarge (8x NVIDIA A10G 24GB)")
    assert found is not None and found.key.startswith("A10G")
    found = lookup_gpu("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb")
    assert found is not None and found.key.startswith("H100")
    assert lookup_gpu("single node with 8 h100 80gb " + "x " * 1000) is not None
    assert lookup_gpu("h100 7gb") is None  # a size the H100 does not have


def _parse(text: str) -> object:
    from kvlint.source.yaml import parse_documents

    return parse_documents(SourceText.of("x.yaml", text))


def test_the_trailing_tab_pattern() -> None:
    assert_linear(lambda n: "a: x" + " \t" * (n // 2) + "y\n", _parse, 10 * LONG_LINE)


def test_the_placeholder_pattern() -> None:
    # A broken line is searched for a placeholder to name in the message.
    assert_linear(lambda n: 'a: b: "' + "{{" * (n // 2) + '"\n', _parse, 10 * LONG_LINE)
    assert_linear(lambda n: "a: b: " + "{{a\n" * (n // 4), _parse, 10 * LONG_LINE)


def test_the_placeholder_finder_reads_as_the_pattern() -> None:
    import re

    from kvlint.source.text import find_placeholder

    pattern = re.compile(r"\{\{[^}\n]*\}\}")
    cases = ["", "{{", "{{ x }}", "a {{ .Values.x }} b {{ y }}", "{{a}b}}", "{{a\n}}", "{{{{x}}",
             "}}{{ {{x}} }}", "{x}} {{y}", "{{ a } }}"]  # fmt: skip
    for text in cases:
        match = pattern.search(text)
        assert find_placeholder(text) == (match.span() if match else None), text


def test_the_size_pattern() -> None:
    from kvlint.units import parse_size

    def run(text: object) -> None:
        with pytest.raises(ValueError):
            parse_size(str(text))

    assert_linear(lambda n: "1" + " " * n + "x!", run, 10 * LONG_LINE)


def test_the_unresolved_value_pattern() -> None:
    from kvlint.deploy.load import load_text

    def vllm_config(n: int) -> str:
        return "model: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: '" + "{" * n + "'\n"

    assert_linear(vllm_config, lambda text: load_text(str(text), display="x.yaml"), 10 * LONG_LINE)


def test_a_run_time_value_is_still_told() -> None:
    from kvlint.deploy.flags import is_run_time_value

    assert is_run_time_value("$(MAX_LEN)") and is_run_time_value("{{ .Values.len }}")
    assert not is_run_time_value("{{ 8192") and not is_run_time_value("8192")


def _script_scalar(body: str) -> object:
    """The double-quoted scalar ``"body"`` of the line ``args: ["body"]``, composed by the YAML
    reader when short; built directly when long (the reader's 16 MiB cap is no part of the
    aligner, and composing 24 MB would measure the composer)."""
    from kvlint.source.nodes import Scalar
    from kvlint.source.yaml import parse_documents

    text = f'args: ["{body}"]\n'
    source = SourceText.of("x.yaml", text)
    if len(body) < 10_000:
        documents, problems = parse_documents(source)
        assert not problems, problems
        return documents[0].root.get("args").items[0]  # type: ignore[attr-defined]
    value = body.replace("\\u00e9", "\u00e9")
    start = text.index('"')
    return Scalar(source, "$.args[0]", start, start + len(body) + 2, value, value, '"', "")


def test_the_shell_token_aligner() -> None:
    from kvlint.deploy.argv import Aligner

    def run(scalar: object) -> None:
        aligner = Aligner(scalar)  # type: ignore[arg-type]
        aligner.offset(len(scalar.text) - 1)  # type: ignore[attr-defined]

    # Escapes whose characters never appear in the file as written: each was searched for to
    # the end of the script.
    assert_linear(
        lambda n: _script_scalar("vllm serve m " + "\\u00e9" * (n // 6)), run, 10 * SCRIPT
    )


def test_the_aligner_still_points_at_each_token() -> None:
    from kvlint.deploy.argv import words

    scalar = _script_scalar("vllm serve \\u00e9 --max-model-len 4096")
    token = next(t for t in words(scalar) if t.text == "4096")  # type: ignore[arg-type]
    assert (token.span.line, token.span.column) == (1, 43)


def test_the_variable_substitution() -> None:
    from kvlint.deploy.argv import Token
    from kvlint.deploy.argv import substitute

    value = Token("8192", None, fallback=None)
    env = {"A": value}
    assert_linear(lambda n: Token("$(A)" * (n // 4), None), lambda t: substitute(t, env), SCRIPT)  # type: ignore[arg-type]
    assert substitute(Token("x$(A)y$(B)", None), env).text == "x8192y$(B)"
    assert substitute(Token("$A-${A}", None), env, shell=True).text == "8192-8192"


def _nested(root: Path, depth: int) -> Path:
    """A repository of ``depth`` nested folders, a deployment at the bottom (a pull request can
    add one: git keeps paths up to the system's 4,096 bytes, about 2,000 levels of `d/`)."""
    (root / ".git").mkdir(parents=True)
    here = root
    for _ in range(depth):  # not os.makedirs: it recurses once per level before Python 3.12
        here = here / "d"
        here.mkdir()
    (here / "x.yaml").write_text("model: meta-llama/Llama-3.1-8B-Instruct\n")
    return root


def remove_tree(top: Path) -> None:
    """Remove a tree of any depth. Not shutil.rmtree, which recurses once per level before
    Python 3.12: left to pytest's clean-up of old temporary folders, a tree of 1,000 levels
    would end a later test session in a RecursionError."""
    stack = [str(top)]
    while stack:
        try:
            entries = list(os.scandir(stack[-1]))
        except FileNotFoundError:
            stack.pop()
            continue
        folders = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        if folders:
            stack.extend(folders)
            continue
        for entry in entries:
            os.unlink(entry.path)
        os.rmdir(stack.pop())


@pytest.fixture
def deep_trees(tmp_path: Path) -> Iterator[Path]:
    """A folder for nested trees, removed by ``remove_tree`` whatever the test did."""
    try:
        yield tmp_path / "deep"
    finally:
        remove_tree(tmp_path / "deep")


def test_the_walk_of_nested_folders(deep_trees: Path) -> None:
    """os.walk recursed per level (a RecursionError at 1,000 folders before Python 3.12), and
    finding each folder's config and .gitignore files looked at every parent of every folder:
    2,000 levels ran for more than ten minutes."""
    from kvlint.config_tree import ConfigTree
    from kvlint.files import collect_files
    from kvlint.registry import default_registry

    def run(root: object) -> None:
        tree = ConfigTree(default_registry())  # each file's nearest config, as check finds it
        assert len(collect_files([str(root)], tree.settings_for)) == 1

    # Ten times the depth is ten times as many folders, each named by a path ten times as long:
    # linear in the bytes of the paths is quadratic in the depth (growth x 10 allowed, a
    # hundred times the time of a tenth; the cubic walk took a thousand times).
    roots = iter(range(10))
    make = lambda n: _nested(deep_trees / str(next(roots)), n)  # noqa: E731
    assert_linear(make, run, 1_000, growth=10 * MAX_GROWTH)
