"""The per-run accounting cache: the same settled values sized once, spans each deployment's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kvlint import sizing_cache
from kvlint.deploy.load import load_path
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.engines import settle
from kvlint.engines.sizer import size
from kvlint.gpus import lookup_gpu
from kvlint.model.resolve import resolve_model
from kvlint.sizing_cache import SizingCache
from kvlint.sizing_cache import settled_key

# Two copies of one deployment (staging, production), then one with another batch size; no
# block size or memory fraction given, so the engine defaults (cited at each span) are used.
MANIFEST = """\
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 64
---
# production: the same settings, another document
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 64
---
model: meta-llama/Llama-3.1-8B-Instruct
max-model-len: 32768
max-num-seqs: 512
"""


def deployments(tmp_path: Path) -> list[Deployment]:
    path = tmp_path / "serve.yaml"
    path.write_text(MANIFEST)
    deps = load_path(path).deployments
    assert len(deps) == 3
    # A named release: one reading each (a file naming none is sized on every line).
    return [
        dataclasses.replace(
            d, gpu=Sourced("H100-80GB", d.span), engine_version=Sourced("0.11.0", d.span)
        )
        for d in deps
    ]


def test_a_repeated_deployment_is_accounted_once_with_its_own_spans(tmp_path: Path) -> None:
    staging, production, bigger = deployments(tmp_path)
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    cache = SizingCache()

    first = size(staging, spec, account=cache.account)
    second = size(production, spec, account=cache.account)
    assert cache.hits == 1
    assert second == size(production, spec)  # as a fresh sizing
    assert second.engine is first.engine
    assert first.settled is not None and second.settled is not None
    # Each deployment's engine defaults are cited at its own document.
    assert second.settled.memory_fraction is not None and second.settled.memory_fraction.default
    assert second.settled.memory_fraction.span == production.span
    assert first.settled.memory_fraction is not None
    assert first.settled.memory_fraction.span == staging.span != production.span

    third = size(bigger, spec, account=cache.account)
    assert cache.hits == 1  # another batch size: sized afresh
    assert third == size(bigger, spec)


def test_another_model_is_another_key(tmp_path: Path) -> None:
    staging, _, _ = deployments(tmp_path)
    gpu = lookup_gpu("H100-80GB")
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    other = resolve_model("Qwen/Qwen2-7B-Instruct", offline=True).spec
    one, two = settle(staging, spec, gpu), settle(staging, other, gpu)
    assert one is not None and two is not None
    assert settled_key(one) != settled_key(two)


def test_values_of_another_type_are_another_key(tmp_path: Path) -> None:
    staging, _, _ = deployments(tmp_path)
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    settled = settle(staging, spec, None)
    assert settled is not None
    span = staging.span
    as_bool = dataclasses.replace(settled, enforce_eager=Sourced(True, span))
    as_int = dataclasses.replace(settled, enforce_eager=Sourced(1, span))
    assert settled_key(as_bool) != settled_key(as_int)
    elsewhere = dataclasses.replace(as_bool, span=span._replace(path="elsewhere.yaml", line=9))
    assert settled_key(elsewhere) == settled_key(as_bool)


def test_the_least_recently_used_accounting_is_dropped_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sizing_cache, "MAX_ENTRIES", 2)
    staging, _, bigger = deployments(tmp_path)
    other = dataclasses.replace(bigger, max_num_seqs=Sourced(8, bigger.span))
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    cache = SizingCache()
    for dep in (staging, bigger, staging):  # staging used last: bigger is the older one
        size(dep, spec, account=cache.account)
    assert cache.hits == 1
    size(other, spec, account=cache.account)  # a third: bigger is dropped, staging kept
    size(staging, spec, account=cache.account)
    assert cache.hits == 2
    size(bigger, spec, account=cache.account)
    assert cache.hits == 2  # accounted afresh


class _Unread:
    """A request that raises when anything of it is read."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the accounting read the request's {name}")


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tgi", "llamacpp", "ollama", "trtllm", "mlx"])
def test_no_accounting_reads_the_request_the_key_leaves_out(tmp_path: Path, engine: str) -> None:
    from kvlint.engines import account

    staging, _, _ = deployments(tmp_path)
    gpu = lookup_gpu("M3-Max-128GB" if engine == "mlx" else "H100-80GB")
    assert gpu is not None
    dep = dataclasses.replace(staging, engine=Sourced(engine, staging.span))
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    settled = settle(dep, spec, gpu)
    assert settled is not None and settled.engine == engine
    blind = dataclasses.replace(settled, request=_Unread())
    assert account(blind) == account(settled)
    assert settled_key(blind) == settled_key(settled)
