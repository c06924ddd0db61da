"""Tests for kvlint.selection: flake8's longest-prefix decision, names, per-file ignores."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.errors import KvlintError
from kvlint.registry import default_registry
from kvlint.selection import PerFileIgnore
from kvlint.selection import Selection
from kvlint.selection import build_selection
from kvlint.selection import normalise


def test_default_selects_everything() -> None:
    selection = Selection()
    assert selection.is_selected("KV301")
    assert selection.is_selected("ACME001")


def test_longest_prefix_wins() -> None:
    selection = Selection(select=("KV",), ignore=("KV3",))
    assert selection.is_selected("KV101")
    assert not selection.is_selected("KV301")
    narrower = Selection(select=("KV",), ignore=("KV3",), extend_select=("KV301",))
    assert narrower.is_selected("KV301")
    assert not narrower.is_selected("KV302")


def test_explicit_select_beats_implicit_and_tie_goes_to_ignore() -> None:
    assert not Selection(ignore=("KV9",)).is_selected("KV906")
    assert Selection(ignore=("KV9",), extend_select=("KV906",)).is_selected("KV906")
    assert not Selection(select=("KV906",), ignore=("KV906",)).is_selected("KV906")


def test_select_limits_to_matches() -> None:
    selection = Selection(select=("KV3",))
    assert selection.is_selected("KV305")
    assert not selection.is_selected("KV101")
    assert not selection.is_selected("ACME001")


def test_names_and_all_normalise_to_prefixes() -> None:
    registry = default_registry()
    assert normalise(["unused-suppression", "kv3", "ALL", " "], registry) == ("KV906", "KV3", "")


def test_unknown_selector_is_an_error() -> None:
    with pytest.raises(KvlintError) as info:
        normalise(["not-a-rule"], default_registry(), where="the command line")
    assert str(info.value) == (
        "unknown rule selector `not-a-rule` in the command line: not a rule code, code prefix "
        "(`KV3`), rule name or `ALL` (`kvlint rules` lists them)"
    )


@pytest.mark.parametrize(
    ("selector", "suggestion"),
    [
        (
            "KV999",
            "no rule has that code or code prefix; did you mean `KV901`, `KV902` or `KV903`?",
        ),
        ("KV39", "no rule has that code or code prefix; did you mean `KV301`, `KV302` or `KV303`?"),
        ("max-num-seq-over-kv-budget", "did you mean `max-num-seqs-over-kv-budget`?"),
    ],
)
def test_a_code_shaped_selector_must_name_a_rule(selector: str, suggestion: str) -> None:
    """`--select KV999` used to check nothing and exit 0; now it is an error."""
    with pytest.raises(KvlintError) as info:
        normalise([selector], default_registry(), where="--select")
    assert str(info.value).startswith(f"unknown rule selector `{selector}` in --select: ")
    assert str(info.value).endswith(suggestion)
    assert normalise(["KV3", "kv30", "KV301", "ALL"], default_registry()) == (
        "KV3", "KV30", "KV301", ""
    )  # fmt: skip


def test_every_wrong_selector_is_collected() -> None:
    errors: list[KvlintError] = []
    kept = normalise(["KV998", "KV301", "KV997"], default_registry(), errors=errors)
    assert kept == ("KV301",)
    assert [e.message.split("`")[1] for e in errors] == ["KV998", "KV997"]


def test_per_file_ignores(tmp_path: Path) -> None:
    selection = build_selection(
        default_registry(),
        select=None,
        ignore=[],
        extend_select=[],
        per_file_ignores={"legacy/*.yaml": ["missing-fact", "KV5"]},
        base_dir=tmp_path,
    )
    legacy = str(tmp_path / "legacy" / "old.yaml")
    assert not selection.is_enabled("KV907", legacy)
    assert not selection.is_enabled("KV501", legacy)
    assert selection.is_enabled("KV906", legacy)
    assert selection.is_enabled("KV907", str(tmp_path / "new.yaml"))
    assert not selection.is_enabled("KV907", "legacy/old.yaml")


def test_per_file_ignores_match_the_basename() -> None:
    selection = Selection(per_file_ignores=[PerFileIgnore("values*.yaml", ("KV9",))])
    assert not selection.is_enabled("KV905", "deploy/helm/values-prod.yaml")
    assert selection.is_enabled("KV905", "deploy/helm/chart.yaml")
