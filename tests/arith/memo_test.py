"""kvlint.arith.memo: results remembered per model (by identity) and arguments (by value)."""

from __future__ import annotations

from kvlint.arith import memo
from kvlint.arith.memo import by_model
from kvlint.model.spec import ModelSpec
from testing.builders import dense


def test_a_result_is_computed_once_per_model_and_arguments() -> None:
    calls: list[tuple[str, int, int]] = []

    @by_model
    def layers_times(spec: ModelSpec, factor: int, *, extra: int = 0) -> int:
        calls.append((spec.name, factor, extra))
        return spec.num_layers * factor + extra

    spec = dense(layers=4)
    assert layers_times(spec, 2) == 8 and layers_times(spec, 2) == 8
    assert layers_times(spec, 3) == 12 and layers_times(spec, 2, extra=1) == 9
    # An equal model that is another object is computed anew: identity, not value, is the key.
    twin = dense(layers=4)
    assert twin == spec and layers_times(twin, 2) == 8
    name = spec.name
    assert calls == [(name, 2, 0), (name, 3, 0), (name, 2, 1), (name, 2, 0)]


def test_a_full_memory_starts_again_and_still_answers(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(memo, "KEPT", 2)
    calls: list[int] = []

    @by_model
    def plus(spec: ModelSpec, n: int) -> int:
        calls.append(n)
        return spec.num_layers + n

    spec = dense(layers=4)
    assert [plus(spec, n) for n in (1, 2, 3, 1, 3)] == [5, 6, 7, 5, 7]
    assert calls == [1, 2, 3, 1]  # emptied when 1 and 2 filled it; 3 stayed after 1
