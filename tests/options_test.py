"""Tests for kvlint.options: the exact-type fast path agrees with pydantic, which has the errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kvlint_rules.stated_kv_mismatch import Options as StatedOptions

from kvlint.config import Config
from kvlint.config import _kebab
from kvlint.options import OptionsError
from kvlint.options import _exact
from kvlint.options import pydantic_model
from kvlint.options import validate


def test_plain_values_are_taken_as_they_are() -> None:
    data = {"select": ["KV3"], "per-file-ignores": {"a/*": ["KV907"]}, "gpu": "L4"}
    config = validate(Config, data, alias=_kebab)
    assert config == Config(select=["KV3"], per_file_ignores={"a/*": ["KV907"]}, gpu="L4")
    # Both spellings of a key, as pydantic's populate_by_name.
    assert validate(Config, {"fail_on": "error"}, alias=_kebab).fail_on == "error"


def test_pydantic_decides_what_is_not_an_exact_match() -> None:
    with pytest.raises(OptionsError) as info:
        validate(Config, {"fail-on": "sometimes"}, alias=_kebab)
    assert info.value.loc == ("fail-on",)
    assert info.value.message == "Input should be 'error', 'warning' or 'info'"
    with pytest.raises(OptionsError) as info:
        validate(Config, {"gpu": 4090}, alias=_kebab)  # pydantic does not make a str of an int
    assert (info.value.loc, info.value.kind) == (("gpu",), "string_type")
    with pytest.raises(OptionsError) as info:
        validate(Config, {"ignroe": []}, alias=_kebab)
    assert (info.value.loc, info.value.kind) == (("ignroe",), "extra_forbidden")


def test_bounds_are_pydantics() -> None:
    assert validate(StatedOptions, {"tolerance": 0.1}) == StatedOptions(tolerance=0.1)
    with pytest.raises(OptionsError) as info:
        validate(StatedOptions, {"pool_tolerance": 1.5})
    assert info.value.message == "Input should be less than 1"
    assert validate(StatedOptions, {}) == StatedOptions()


def test_an_int_for_a_float_is_converted_by_pydantic() -> None:
    @dataclasses.dataclass(frozen=True)
    class Opts:
        share: float = 0.5

    assert _exact(Opts, {"share": 1}, None) is None  # not exact: pydantic converts it
    value = validate(Opts, {"share": 1})
    assert value == Opts(1.0) and type(value.share) is float


def test_a_plugins_pydantic_model_is_validated_as_it_is() -> None:
    class Policy(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        limit: float = 0.9

    assert validate(Policy, {"limit": 0.8}) == Policy(limit=0.8)
    with pytest.raises(OptionsError):
        validate(Policy, {"limt": 0.8})


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2),
    st.sampled_from(["error", "warning", "info", "KV3", "vllm", "0.11.0", ""]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["KV301", "a/*", "vllm", "ratio"]), inner, max_size=3),
    ),
    max_leaves=8,
)
_keys = st.sampled_from(
    [_kebab(f.name) for f in dataclasses.fields(Config)]
    + [f.name for f in dataclasses.fields(Config)]
    + ["unknown"]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=4))
def test_fast_path_agrees_with_pydantic(data: dict[str, Any]) -> None:
    model = pydantic_model(Config, _kebab)
    fast = _exact(Config, data, _kebab)
    try:
        validated = model.model_validate(data)
    except pydantic.ValidationError:
        # Whatever pydantic refuses, the fast path must not have taken.
        assert fast is None
        return
    if fast is not None:
        expected = {f.name: getattr(validated, f.name) for f in dataclasses.fields(Config)}
        assert dataclasses.asdict(fast) == expected
