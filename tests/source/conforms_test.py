"""The plan fast path (kvlint.source.conforms) answers as jsonschema does on kvlint's schemas."""

from __future__ import annotations

from typing import Any

import kvlint_schemas  # type: ignore[import-not-found]
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from kvlint.source.conforms import conforms
from testing.shared import REPO

PLAN = kvlint_schemas.load("plan")
VALIDATOR = Draft202012Validator(PLAN)

# Values near each of the schema's edges: the patterns' strings, bounds, bools next to ints.
EDGE = st.sampled_from(
    [
        "plan/v1",
        "plan/v2",
        "vllm",
        "sglang",
        "tgi",
        "llamacpp",
        "ollama",
        "VLLM",
        "",
        " ",
        "128k",
        "128K",
        "1.5m",
        "1.5",
        "12kk",
        "k",
        "320 KiB",
        "2.62 GB",
        " 1e3 MB ",
        "1e3",
        "0.33MB",
        "5 XB",
        "64\n",
        0,
        1,
        2,
        -1,
        0.0,
        0.5,
        1.0,
        2.5,
        -0.5,
        True,
        False,
        None,
        float("nan"),
        float("inf"),
    ]
)
SCALAR = st.one_of(
    EDGE,
    st.text(max_size=8),
    st.integers(-3, 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
KEYS = st.sampled_from(
    [
        "kvlint",
        "name",
        "engine",
        "engine_version",
        "model",
        "gpu",
        "gpus",
        "settings",
        "claims",
        "workload",
        "concurrency",
        "context",
        "kv_per_token",
        "kv_per_sequence",
        "kv_pool_tokens",
        "kv_cache_dtype",
        "gpus_needed",
        "prompt_tokens",
        "output_tokens",
        "p95_tokens",
        "p99.9_tokens",
        "p100_tokens",
        "xp95_tokens",
        "max-num-seqs",
        "other",
    ]
)
VALUE: st.SearchStrategy[Any] = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(KEYS, st.text(max_size=4)), inner, max_size=4),
    ),
    max_leaves=12,
)
REQUIRED = {"kvlint": "plan/v1", "engine": "vllm", "model": "org/model"}


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly near-valid plans: the required keys (sometimes one missing or wrong) and some of
    the others, each section's keys drawn from the schema's own."""
    plan = {k: v for k, v in REQUIRED.items() if draw(st.integers(0, 9)) > 0}
    for key in draw(st.lists(KEYS, max_size=6)):
        plan[key] = draw(st.one_of(VALUE, st.dictionaries(KEYS, VALUE, max_size=4)))
    return plan


def agrees(instance: Any) -> None:
    fast = conforms(instance, PLAN)
    assert fast is not None, instance  # the project's schema is decided here whole
    assert fast == VALIDATOR.is_valid(instance), instance


@settings(max_examples=1500, deadline=None)
@given(plans())
def test_plans_near_the_schema(instance: dict[str, Any]) -> None:
    agrees(instance)


@settings(max_examples=500, deadline=None)
@given(VALUE)
def test_any_json_value(instance: Any) -> None:
    agrees(instance)


def test_every_plan_in_the_repository() -> None:
    from kvlint.source.text import SourceText
    from kvlint.source.yaml import parse_documents

    seen = 0
    for path in [*REPO.glob("examples/**/*.y*ml"), *REPO.glob("tests/**/*.y*ml")]:
        text = path.read_text(encoding="utf-8", errors="replace")
        if "plan/v1" not in text:
            continue
        documents, _ = parse_documents(SourceText.of(str(path), text))
        for document in documents:
            agrees(document.root.plain())
            seen += 1
    assert seen >= 3


def test_what_it_leaves_to_jsonschema() -> None:
    assert conforms({"a": 1}, {"type": "object", "maxProperties": 0}) is None  # a keyword
    assert conforms(1, {"$ref": "other.json"}) is None  # a reference elsewhere
    assert conforms({1: "x"}, {"type": "object"}) is None  # a key JSON cannot have
    assert conforms([1], {"const": [1]}) is None  # an array's equality
