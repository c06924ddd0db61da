"""What holds on every deployment kvlint has goldens or real files for: ``check`` and ``size``
agree on whether the engine starts, and every refusal the accounting returns is a finding of
the rule that reports it (``Refusal.code``); every cache dtype an engine's table accepts sizes
or gets a finding, never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.config_tree import ConfigTree
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import HOMES
from kvlint.engines import facts
from kvlint.engines.sizer import size
from kvlint.finding import Span
from kvlint.linter import DeploymentResult
from kvlint.linter import lint_paths
from kvlint.model.catalog import lookup
from kvlint.registry import default_registry
from testing.cli import run_cli
from testing.shared import DEPLOYMENTS_REAL
from testing.shared import DEPLOYMENTS_REAL_MORE

GOLDEN = Path(__file__).resolve().parent / "golden"
FOLDERS = sorted(p for p in GOLDEN.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
REAL = [p for p in (DEPLOYMENTS_REAL, DEPLOYMENTS_REAL_MORE) if p.is_dir()]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def checked(folder: Path) -> list[DeploymentResult]:
    tree = ConfigTree(default_registry())
    return list(lint_paths([str(folder)], tree).deployments)


def test_there_are_goldens_to_check() -> None:
    assert len(FOLDERS) >= 30


@pytest.mark.parametrize("folder", FOLDERS + REAL, ids=lambda p: p.name)
def test_every_refusal_is_a_finding(folder: Path) -> None:
    refused = 0
    for result in checked(folder):
        engine = result.sizing.engine if result.sizing is not None else None
        if engine is None or engine.refusal is None:
            continue
        refused += 1
        codes = {f.code for f in result.findings}
        assert engine.refusal.code in codes, (
            f"{result.deployment.name} ({result.deployment.span.location()}): the engine "
            f"refuses ({engine.refusal.value}: {engine.error}) but check reports no "
            f"{engine.refusal.code}; it reports {sorted(codes)}"
        )
    # A folder whose deployments all start proves nothing here, and that is fine; the goldens
    # as a whole must hold refusals (below).
    assert refused >= 0


def test_the_goldens_hold_refusals_of_every_rule_that_reports_them() -> None:
    kinds = {
        result.sizing.engine.refusal.code
        for folder in FOLDERS
        for result in checked(folder)
        if result.sizing is not None
        and result.sizing.engine is not None
        and result.sizing.engine.refusal is not None
    }
    assert {"KV302", "KV303"} <= kinds


@pytest.mark.parametrize("folder", FOLDERS + REAL, ids=lambda p: p.name)
def test_check_and_size_agree_on_whether_the_engine_starts(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    by_file: dict[str, dict[int, bool | None]] = {}
    for result in checked(folder):
        engine = result.sizing.engine if result.sizing is not None else None
        if engine is None:
            continue
        place = result.deployment.span
        by_file.setdefault(place.path, {})[place.line] = engine.fits
    monkeypatch.chdir(folder.parent)
    for path, verdicts in by_file.items():
        shown = str(Path(path).resolve().relative_to(folder.parent.resolve()))
        outcome = run_cli(["size", shown, "--format", "json", "--offline"], capsys)
        sized = json.loads(outcome.out)["deployments"]
        said = {d["line"]: (d.get("engine") or {}).get("fits") for d in sized}
        for line, fits in verdicts.items():
            assert said.get(line) == fits, f"{shown}:{line}: check says fits={fits}, size {said}"


def _deployment(engine: str, **fields: object) -> Deployment:
    span = Span("property.yaml", 1, 1)
    values = {k: Sourced(v, span._replace(line=2, key=k)) for k, v in fields.items()}
    return Deployment(
        path="property.yaml",
        span=span,
        name="property",
        carrier="engine_yaml",
        engine=Sourced(engine, span),
        **values,  # type: ignore[arg-type]
    )


ACCEPTED = sorted(
    {
        (engine, dtype)
        for engine in HOMES
        for _, dtypes in facts(engine).cache_dtype_releases
        for dtype in dtypes
    }
)


@pytest.mark.parametrize(("engine", "dtype"), ACCEPTED, ids=lambda x: str(x))
@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-V3"])
def test_every_cache_dtype_an_engine_accepts_sizes_or_is_reported(
    engine: str, dtype: str, model: str
) -> None:
    """The flag tables accept these values, so the sizing must never crash on one: it sizes
    the cache, or leaves it unsized with the reason (KV202 says which checks did not run), or
    the engine refuses it (KV202 again)."""
    spec = lookup(model)
    assert spec is not None
    dep = _deployment(engine, kv_cache_dtype=dtype, gpu="H100-80GB", max_model_len=8192)
    sizing = size(dep, spec)
    settled = sizing.settled
    assert settled is not None and sizing.engine is not None
    if settled.cache_types is None:
        assert settled.cache_note is not None or sizing.engine.refusal is not None
    else:
        assert sizing.kv is not None and sizing.kv.per_token_bytes > 0
