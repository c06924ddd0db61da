"""Every engine home is laid out alike: its HOME answers for its own engine only, and its
tables are not loaded before a deployment of that engine is settled."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvlint.engines import HOMES
from kvlint.engines import home
from testing.builders import QWEN25_7B
from testing.builders import catalog_gpu
from testing.builders import model
from testing.builders import settled


@pytest.mark.parametrize("name", sorted(HOMES))
def test_a_home_names_its_own_engine(name: str) -> None:
    engine = home(name)
    assert engine.FACTS.name == name
    assert engine.interpreter().name == name


@pytest.mark.parametrize("name", sorted(HOMES))
def test_a_home_accounts_only_for_its_own_engine(name: str) -> None:
    other = next(n for n in sorted(HOMES) if n != name)
    spec = model(QWEN25_7B, "Qwen/Qwen2.5-7B-Instruct")
    foreign = settled(other, spec=spec, gpu=catalog_gpu("H100"))
    with pytest.raises(ValueError, match=f"{other} settled, accounted by {name}"):
        home(name).account(foreign)
    assert home(other).account(foreign).engine == other


def test_a_home_loads_its_tables_only_when_asked() -> None:
    code = (
        "import sys; from kvlint.engines import home, HOMES\n"
        "for name in HOMES: home(name).FACTS\n"
        "loaded = [m for m in sys.modules if m.rsplit('.', 1)[-1] in "
        "('spelling', 'effective', 'accounting') and m.startswith('kvlint.engines.')]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
