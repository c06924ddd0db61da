"""Tests for kvlint.rule: the doc-section parser and the Rule defaults."""

from __future__ import annotations

import pytest

from kvlint.finding import Severity
from kvlint.options import OptionsError
from kvlint.options import validate
from kvlint.rule import FixAvailability
from kvlint.rule import NoOptions
from kvlint.rule import Rule
from kvlint.rule import parse_doc

DOC = """## What it does
Checks that `max_num_seqs` fits. Then more.

## Why is this bad?
Because.

## Example
```yaml
bad: 1
```

Use instead:
```yaml
good: 1
```

## Options
None.
"""


class _Sample(Rule):
    """## What it does
    Checks a thing.

    ## Why is this bad?
    Because.

    ## Example
    ```yaml
    a: 1
    ```
    Use instead:
    ```yaml
    a: 2
    ```
    """

    code = "KV999"
    name = "sample-mistake"
    severity = Severity.WARNING


def test_parse_doc_sections_and_blocks() -> None:
    doc = parse_doc(DOC)
    assert list(doc.sections) == ["What it does", "Why is this bad?", "Example", "Options"]
    assert doc.example == "bad: 1\n"
    assert doc.use_instead == "good: 1\n"
    assert doc.summary == "Checks that `max_num_seqs` fits"
    assert doc.problems() == []


def test_parse_doc_reports_what_is_missing() -> None:
    doc = parse_doc("## What it does\nX.\n\n## Example\n```yaml\na: 1\n```\n## Extra\n")
    assert doc.problems() == [
        "section `## Why is this bad?` is missing",
        "unknown section `## Extra`",
        "`## Example` has no `Use instead:` followed by a ```yaml block",
    ]


def test_parse_doc_out_of_order() -> None:
    text = (
        "## Why is this bad?\nB.\n## What it does\nA.\n"
        "## Example\n```yaml\na\n```\nUse instead:\n```yaml\nb\n```\n"
    )
    assert parse_doc(text).problems() == [
        "sections are out of order (What it does, Why is this bad?, Example)"
    ]


def test_rule_defaults_and_docstring() -> None:
    rule = _Sample()
    assert isinstance(rule.options, NoOptions)
    assert _Sample.fix_availability is FixAvailability.NONE
    assert _Sample.applies_to("vllm") and _Sample.applies_to("llamacpp")
    doc = _Sample.doc()
    assert doc.example == "a: 1\n"
    assert doc.use_instead == "a: 2\n"
    assert doc.summary == "Checks a thing"


def test_no_options_forbids_keys() -> None:
    with pytest.raises(OptionsError) as info:
        validate(NoOptions, {"ratio": 0.5})
    assert (info.value.loc, info.value.kind) == (("ratio",), "extra_forbidden")


def test_base_check_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        list(Rule().check(None, None))  # type: ignore[arg-type]
