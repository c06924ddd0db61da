"""An example kvlint plugin: ``get_rules()`` is what the ``kvlint.rules`` entry point exposes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvlint.rule import Rule


def get_rules() -> list[type[Rule]]:
    from kvlint_plugin_example.memory_fraction_above_policy import MemoryFractionAbovePolicy

    return [MemoryFractionAbovePolicy]
