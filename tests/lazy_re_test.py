"""kvlint.lazy_re: a pattern stands in for its compiled self and compiles once, at first use."""

from __future__ import annotations

import re

import pytest

from kvlint.lazy_re import lazy


def test_it_is_compiled_at_its_first_use_and_then_only_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[str] = []
    original = re.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(pattern)
        return original(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    pattern = lazy(r"v(\d+)\.(\d+)", re.IGNORECASE)
    assert pattern.pattern == r"v(\d+)\.(\d+)" and compiled == []  # its text, not compiled
    found = pattern.search("image: vllm/vllm-openai:V0.11")
    assert found is not None and found.groups() == ("0", "11")
    assert pattern.fullmatch("v1.2") is not None and pattern.sub("x", "a v1.2 b") == "a x b"
    assert compiled == [r"v(\d+)\.(\d+)"]


@pytest.mark.parametrize(
    ("text", "flags"), [(r"(?<=[a-z0-9])([A-Z])", 0), (r"sglang|vllm", re.IGNORECASE)]
)
def test_it_answers_as_the_compiled_pattern_does(text: str, flags: int) -> None:
    deferred, compiled = lazy(text, flags), re.compile(text, flags)
    for subject in ("maxModelLen", "image: lmsysorg/SGLang:v0.4", "VLLM", ""):
        assert bool(deferred.search(subject)) == bool(compiled.search(subject))
        assert deferred.findall(subject) == compiled.findall(subject)
        assert deferred.split(subject) == compiled.split(subject)
    assert (deferred.flags, deferred.groups) == (compiled.flags, compiled.groups)
