"""Docs are tests: every registered rule's doc has its sections, its Example triggers the rule
through the real linter, and its Use instead does not (pylint's good/bad, ruff's template)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.registry import default_registry
from kvlint.rule import Rule
from tests.rules.harness import isolate
from tests.rules.harness import lint_files
from tests.rules.harness import split_example

RULES = list(default_registry())


def _id(rule: type[Rule]) -> str:
    return rule.code


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_doc_sections(rule: type[Rule]) -> None:
    doc = rule.doc()
    assert doc.problems() == []
    assert doc.summary, "the first sentence of `What it does` is the summary"
    assert not doc.summary.endswith("."), "summaries carry no trailing period"


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_example_triggers_and_use_instead_does_not(
    rule: type[Rule], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate(monkeypatch, tmp_path)
    doc = rule.doc()
    assert doc.example is not None and doc.use_instead is not None
    name, text = split_example(doc.example)
    bad = lint_files(tmp_path / "example", {name: text}, check=[f"example/{name}"])
    assert rule.code in [f.code for f in bad], (
        f"the Example of {rule.code} does not trigger it; it gives "
        f"{[(f.code, f.message) for f in bad]}"
    )
    name, text = split_example(doc.use_instead)
    good = lint_files(tmp_path / "instead", {name: text}, check=[f"instead/{name}"])
    assert rule.code not in [f.code for f in good], (
        f"the `Use instead` of {rule.code} triggers it: "
        f"{[f.message for f in good if f.code == rule.code]}"
    )


def test_docs_rules_md_is_current() -> None:
    from kvlint.explain import rules_markdown

    path = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert path.read_text(encoding="utf-8") == rules_markdown(default_registry()), (
        "docs/rules.md is stale: run `kvlint rules --format markdown > docs/rules.md`"
    )
