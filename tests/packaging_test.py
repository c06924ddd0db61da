"""What a user installs: the wheel is ``kvcache-lint`` carrying this ``kvlint``, and no text of
ours tells anyone to install the package index's ``kvlint`` (another project, same command)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from testing.shared import REPO

# Everything a user reads: the docs, the Action and hooks, and the messages kvlint prints.
USER_TEXT = (
    "README.md",
    "SECURITY.md",
    "action.yml",
    ".pre-commit-hooks.yaml",
    "docs/*.md",
    "benchmarks/*.md",
    "scripts/*",
    "examples/**/*",
    "kvlint/**/*.py",
    "rules/**/*.py",
)
# `pip install kvlint`, `pipx install 'kvlint[gguf]'`, `uv tool install kvlint==0.1`, or a
# dependency list naming it (one command: `&&`, `;` and `|` end it); `kvcache-lint`,
# `kvlint-plugin-example` and paths do not match.
INSTALLS_KVLINT = re.compile(
    r"""(?:\b(?:pip|pipx|uv)\b[^\n`&;|]*?\binstall\b[^\n`&;|]*?|dependencies\s*=\s*\[[^\]]*?)"""
    r"""(?<![\w./-])['"]?kvlint(?![\w/-])"""
)


def _user_files() -> list[Path]:
    found = {p for pattern in USER_TEXT for p in REPO.glob(pattern) if p.is_file()}
    return sorted(p for p in found if "__pycache__" not in p.parts)


def test_the_pattern_sees_an_install_of_the_other_kvlint() -> None:
    for line in (
        "pip install kvlint",
        "python3 -m pip install 'kvlint[gguf]'",
        "pipx install kvlint==0.1.0",
        'dependencies = ["kvlint>=0.1"]',
    ):
        assert INSTALLS_KVLINT.search(line), line
    for line in (
        "pip install kvcache-lint",
        "pip install 'kvcache-lint[gguf]'",
        "pip install . && kvlint check examples/deploy.yaml",
        "pip install -e examples/kvlint-plugin-example",
        'dependencies = ["kvcache-lint>=0.1"]',
        "installs kvlint (the `kvcache-lint` distribution)",
    ):
        assert not INSTALLS_KVLINT.search(line), line


def test_no_text_tells_a_user_to_install_the_index_kvlint() -> None:
    files = _user_files()
    assert REPO / "README.md" in files and REPO / "kvlint" / "model" / "gguf.py" in files
    wrong = [
        f"{path.relative_to(REPO)}:{text[: m.start()].count(chr(10)) + 1}: {m.group(0)}"
        for path in files
        for text in [path.read_text(encoding="utf-8", errors="replace")]
        for m in INSTALLS_KVLINT.finditer(text)
    ]
    assert not wrong, wrong


def _source_copy(tmp_path: Path) -> Path:
    """The files a build reads (pyproject.toml, setup.py, README.md and the three packages), so
    the build writes nothing into the checkout."""
    tree = tmp_path / "src"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, tree / name)
    for folder in ("kvlint", "rules", "schemas"):
        shutil.copytree(
            REPO / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    return tree


def test_the_wheel_is_kvcache_lint_and_carries_this_kvlint(tmp_path: Path) -> None:
    pytest.importorskip("setuptools", minversion="77")
    tree = _source_copy(tmp_path)
    built = subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta as b; print(b.build_wheel('w'))"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = tree / "w" / built.stdout.strip().splitlines()[-1]
    assert wheel.name.startswith("kvcache_lint-")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        init = archive.read("kvlint/__init__.py")
    assert metadata["Name"] == "kvcache-lint"
    assert metadata["Requires-Python"] == ">=3.10"
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("tomli") and 'python_version < "3.11"' in r for r in requires)
    # The command, the built-in rules' entry point, and the data the command reads.
    assert re.search(r"^kvlint = kvlint\.main:main$", entry_points, re.M)
    assert re.search(r"^\[kvlint\.rules\]\nkvlint = kvlint_rules$", entry_points, re.M)
    assert {
        "kvlint/py.typed",
        "kvlint/model/catalog/index.json",
        "kvlint_rules/__init__.py",
        "kvlint_schemas/config.schema.json",
    } <= names
    assert init == (REPO / "kvlint" / "__init__.py").read_bytes()
