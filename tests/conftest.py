"""Test-suite options: ``--update-goldens`` rewrites the golden ``.out`` files."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite tests/golden/**/*.out from the current output (review the diff)",
    )
