"""The per-run sizing cache: same model and settings sized once, results as a fresh sizing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kvlint.deploy.load import load_path
from kvlint.deployment import Deployment
from kvlint.deployment import Sourced
from kvlint.model.resolve import resolve_model
from kvlint.sizing import size
from kvlint.sizing_cache import SizingCache
from kvlint.sizing_cache import sizing_key

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
    return [dataclasses.replace(d, gpu=Sourced("H100-80GB", d.span)) for d in deps]


def test_a_repeated_deployment_is_sized_once_with_its_own_spans(tmp_path: Path) -> None:
    staging, production, bigger = deployments(tmp_path)
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    cache = SizingCache()

    first = cache.size(staging, spec)
    second = cache.size(production, spec)
    assert cache.hits == 1
    assert second == size(production, spec)  # as a fresh sizing, defaults at production's span
    assert second.kv is first.kv and second.engine is first.engine
    assert second.defaults, "the case must exercise the engine defaults"
    assert {v.span for v in second.defaults.values()} == {production.span}
    assert {v.span for v in first.defaults.values()} == {staging.span}
    assert production.span != staging.span

    third = cache.size(bigger, spec)
    assert cache.hits == 1  # another batch size: sized afresh
    assert third == size(bigger, spec)


def test_another_model_object_is_another_key(tmp_path: Path) -> None:
    staging, _, _ = deployments(tmp_path)
    spec = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline=True).spec
    other = resolve_model("Qwen/Qwen2-7B-Instruct", offline=True).spec
    cache = SizingCache()
    cache.size(staging, spec)
    assert cache.size(staging, other) == size(staging, other)
    assert cache.hits == 0


def test_values_of_another_type_are_another_key(tmp_path: Path) -> None:
    staging, _, _ = deployments(tmp_path)
    span = staging.span
    as_bool = dataclasses.replace(staging, settings={"enforce-eager": Sourced(True, span)})
    as_int = dataclasses.replace(staging, settings={"enforce-eager": Sourced(1, span)})
    assert sizing_key(as_bool, None) != sizing_key(as_int, None)
    renamed = dataclasses.replace(as_bool, name="another", path="elsewhere.yaml")
    assert sizing_key(renamed, None) == sizing_key(as_bool, None)


def test_an_unhashable_value_is_not_cached(tmp_path: Path) -> None:
    staging, _, _ = deployments(tmp_path)
    odd = dataclasses.replace(staging, settings={"x": Sourced({1, 2}, staging.span)})
    assert sizing_key(odd, None) is None
    cache = SizingCache()
    cache.size(odd, None)
    cache.size(odd, None)
    assert cache.hits == 0
