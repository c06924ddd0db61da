"""The repository's engine-log corpus (tests/fixtures/engine-logs): well formed, within the share
cap, clear of reserved and shared-corpus sources, documented, and replayable by the fidelity
benchmark.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from testing import engine_logs
from testing.shared import FIXTURES
from testing.shared import shared_file

CASES = engine_logs.load()


def test_every_case_is_well_formed_within_the_cap_and_in_sources_md() -> None:
    problems = engine_logs.check(CASES, sources_md=engine_logs.SOURCES_MD.read_text())
    assert problems == []


def test_no_case_comes_from_a_reserved_source() -> None:
    text = shared_file(FIXTURES / "engine-logs" / "RESERVED.md").read_text()
    reserved = engine_logs.reserved_sources(text)
    assert reserved, "RESERVED.md lists no sources: the parser no longer reads it"
    assert [c["id"] for c in CASES if engine_logs.is_reserved(c["source"], reserved)] == []


def test_no_case_repeats_a_shared_corpus_source() -> None:
    shared = engine_logs.load(shared_file(FIXTURES / "engine-logs" / "engine_logs.jsonl"))
    theirs = {engine_logs.source_key(c["source"]) for c in shared}
    assert [c["id"] for c in CASES if engine_logs.source_key(c["source"]) in theirs] == []


def test_the_readme_spread_is_the_corpus_s() -> None:
    readme = engine_logs.README_MD.read_text()
    start = readme.index("\n", readme.index("<!-- spread: generated from corpus.jsonl")) + 1
    end = readme.index("<!-- /spread -->")
    assert readme[start:end] == engine_logs.spread_markdown(CASES)


def _case(**changes: Any) -> dict[str, Any]:
    case = copy.deepcopy(CASES[0])
    case.update(changes)
    return case


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"gpu_count": "4"}, "gpu_count is '4'"),
        ({"enforce_eager": 1}, "enforce_eager is 1"),
        ({"tensor_parallel_size": True}, "tensor_parallel_size is True"),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size 0 is not positive"),
        ({"engine": "ollama"}, "engine 'ollama'"),
        ({"source": "https://github.com/a/b/blob/main/x.log"}, "pinned to a commit"),
        ({"source": "a discussion on a forum"}, "neither owner/repo#N nor a URL"),
        ({"logged": {"gpu_blocks": None}}, "logs none of"),
        ({"logged": {"gpu_blocks": "7351"}}, "logged.gpu_blocks is '7351'"),
        ({"logged": {"gpu_blocks": 1, "blocks": 2}}, "unknown logged figure 'blocks'"),
        ({"quotes": []}, "missing 'quotes'"),
        ({"id": "Not A Slug"}, "not a lower-case slug"),
        ({"gpu_memory_utilization": 90}, "outside (0, 1]"),
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"co_resident": []}, "co_resident must be a non-empty list"),
        ({"co_resident": [{"gib": "7"}]}, "is not {gib, what[, case, figure]}"),
        ({"co_resident": [{"gib": 7, "what": "x", "case": "a"}]}, "is not {gib, what"),
    ],
)
def test_check_names_each_kind_of_bad_case(changes: dict[str, Any], problem: str) -> None:
    assert engine_logs.check_case(_case()) == []
    found = engine_logs.check_case(_case(**changes))
    assert any(problem in p for p in found), found


def test_check_catches_duplicates_reserved_sources_the_cap_and_a_stale_sources_md() -> None:
    twins = [_case(id="a", source="o/r#1"), _case(id="a", source="o/r#1")]
    others = [_case(id=f"c{i}", source=f"o/r#{i + 2}") for i in range(8)]
    problems = engine_logs.check(
        twins + others,
        reserved={"o/r#1"},
        sources_md="| `o/r#1` | 1 | x |\n| `o/z#9` | 1 | x |",
    )
    assert "a: id used 2 times" in problems
    assert "a: source o/r#1 is reserved" in problems
    assert "source o/r#1 has 2 of 10 cases (over 10%)" in problems
    assert "SOURCES.md gives o/r#1 1 cases, the corpus 2" in problems
    assert "SOURCES.md lists o/z#9, which no case cites" in problems
    assert "SOURCES.md does not list o/r#2" in problems


def test_a_failure_that_is_not_a_memory_refusal_is_its_own_outcome() -> None:
    crashed = _case(logged={"weights_gib": 14.2, "non_memory_error": "EngineCore failed to start"})
    assert engine_logs.check_case(crashed) == []
    outcomes = engine_logs.spread([crashed, _case()])["outcome"]
    assert outcomes["failed (not memory)"] == 1
    assert "refusal" not in outcomes


def test_fidelity_scores_no_verdict_on_a_failure_that_is_not_a_memory_refusal() -> None:
    from benchmarks.fidelity import replay

    started = next(c for c in CASES if c["id"].endswith("-v0110-demoenvl4"))
    assert replay(started).start_verdict() == (False, False)
    crashed = copy.deepcopy(started)
    crashed["logged"]["non_memory_error"] = "EngineCore failed to start"
    assert replay(crashed).start_verdict() is None


def test_a_source_counts_as_its_thread_its_repository_or_its_page() -> None:
    blob = "https://github.com/o/r/blob/" + "0" * 40 + "/logs/a.log"
    assert engine_logs.source_key("o/r#12") == "o/r#12"
    assert engine_logs.source_key(blob) == "o/r"
    assert engine_logs.is_reserved(blob, {"o/r"})
    assert engine_logs.is_reserved("o/r#12", {"o/r"})
    assert not engine_logs.is_reserved("o/r#13", {"o/r#12"})
    assert engine_logs.is_reserved("https://example.com/post/", {"https://example.com/post"})


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_the_fidelity_benchmark_replays_every_case(case: dict[str, Any]) -> None:
    from benchmarks.fidelity import replay

    result = replay(case)
    assert (result.free is None) == (result.spec is None)
    for figure in (result.avail_error, result.tokens_error, result.pool_error):
        value = figure()
        assert value is None or math.isfinite(value)
    verdict = result.start_verdict()
    assert verdict is None or verdict[1] == bool(case["logged"].get("error"))


def test_a_co_resident_that_names_a_case_must_quote_its_logged_figure() -> None:
    first = _case(id="first", source="o/r#1", logged={"gpu_blocks": 10, "kv_pool_gib": 7.31})
    said = {"gib": 7.31, "what": "its pool", "case": "first", "figure": "kv_pool_gib"}
    second = _case(id="second", source="o/r#2", co_resident=[said])
    assert engine_logs.check([first, second], max_share=1.0) == []
    wrong = _case(id="second", source="o/r#2", co_resident=[{**said, "gib": 7.5}])
    problems = engine_logs.check([first, wrong], max_share=1.0)
    assert "second: co_resident gives 7.5 GiB, first logs kv_pool_gib = 7.31" in problems
    lost = _case(id="second", source="o/r#2", co_resident=[{**said, "case": "gone"}])
    assert "second: co_resident names unknown case 'gone'" in engine_logs.check(
        [first, lost], max_share=1.0
    )
