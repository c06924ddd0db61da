"""One reading of every YAML 1.1 / 1.2 edge value whichever composer reads the file (libyaml, or
ruamel.yaml for a file with a long line), and it is PyYAML's: vLLM reads its ``--config`` with
``yaml.safe_load``, so ``017`` is 15 and ``0o17`` a string there (issue 15, item 8). JSON files
read as JSON. Reader errors sit at their line and column."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from kvlint.source.text import SourceText
from kvlint.source.yaml import parse_documents

# A comment line this long sends the file to ruamel.yaml (kvlint.source.yaml._backend).
LONG = "#" + "x" * 1200 + "\n"

EDGES = ["017", "0o17", "0x1F", "-0x1f", "0b101", "1:30", "1_000", "1_0.5", "1e3", "1.0e+3", ".5",
         "+12", "yes", "NO", "On", "off", "~", "Null", "null", ".NaN", "-.inf", "0", "00", "08",
         "0.", "1:30.5", "y", "n", "True", "<<x", "12:99"]  # fmt: skip


def _read(text: str, *, json_file: bool = False) -> dict[str, Any]:
    documents, problems = parse_documents(SourceText.of("x.yaml", text), json=json_file)
    assert not problems, problems
    return {key.text: value.value for key, value in documents[0].root.items}


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, float) and math.isnan(theirs):
        return isinstance(ours, float) and math.isnan(ours)
    return type(ours) is type(theirs) and ours == theirs


@pytest.mark.parametrize("composer", ["libyaml", "ruamel"])
def test_each_edge_value_reads_as_pyyaml_reads_it(composer: str) -> None:
    text = "".join(f"k{i}: {value}\n" for i, value in enumerate(EDGES))
    text += LONG if composer == "ruamel" else ""
    ours = _read(text)
    theirs = yaml.safe_load(text)
    wrong = {EDGES[int(k[1:])]: (ours[k], v) for k, v in theirs.items() if not _same(ours[k], v)}
    assert wrong == {}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789+-._:xobeEaf ~yesnoNOtrue", min_size=1, max_size=8))
def test_any_plain_scalar_reads_the_same_through_both_composers(value: str) -> None:
    text = f"k: {value}\n"
    try:
        theirs = yaml.safe_load(text)
    except yaml.YAMLError:
        return  # not a plain scalar PyYAML reads
    if (
        not isinstance(theirs, dict)
        or "k" not in theirs
        or not isinstance(theirs["k"], (int, float, bool, str, type(None)))
    ):
        return  # a timestamp, a nested node: kvlint keeps those as text or nodes
    try:
        fast = _read(text)["k"]
        slow = _read(text + LONG)["k"]
    except AssertionError:
        return  # a reading problem (both composers refuse the same odd text)
    assert _same(fast, theirs["k"]) and _same(slow, theirs["k"]), (value, fast, slow, theirs)


def test_json_files_read_as_json() -> None:
    text = '{"a": 1e3, "b": 017, "c": 0x1F, "d": 10, "e": true, "f": null, "g": -0.5}'
    ours = _read(text.replace("017", "17").replace("0x1F", "31"), json_file=True)
    assert ours == json.loads(text.replace("017", "17").replace("0x1F", "31"))


def test_an_explicit_tag_is_kept_and_the_value_span_excludes_it() -> None:
    text = "a: !!str 017\nb: &seqs 512\nc: !!int 0o17\n"
    for body in (text, text + LONG):
        documents, _ = parse_documents(SourceText.of("x.yaml", body))
        items = {key.text: value for key, value in documents[0].root.items}
        assert items["a"].value == "017" and items["c"].value == 15
        assert [(v.span.line, v.span.column) for v in items.values()] == [(1, 10), (2, 10), (3, 10)]


def test_an_alias_is_placed_where_it_is_written() -> None:
    text = "a: &seqs 512\nb: [x, *seqs]\nc: *seqs\n"
    documents, _ = parse_documents(SourceText.of("x.yaml", text))
    items = dict((key.text, value) for key, value in documents[0].root.items)
    assert (items["c"].span.line, items["c"].span.column, items["c"].value) == (3, 4, 512)
    alias = items["b"].items[1]  # type: ignore[attr-defined]
    assert (alias.span.line, alias.span.column, alias.value) == (2, 8, 512)


@pytest.mark.parametrize("tail", ["", LONG])
def test_a_reader_error_is_at_its_character(tail: str) -> None:
    text = "model: x\nmax-model-len: 4096\nmax-num-seqs: 1\x07 2\n" + tail
    _, problems = parse_documents(SourceText.of("x.yaml", text))
    (problem,) = problems
    assert (problem.span.line, problem.span.column) == (3, 16)
    assert problem.message.startswith("invalid YAML: ") and "#x0007" in problem.message
