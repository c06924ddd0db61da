"""Plugins installed as a user installs them: into a virtual environment's site directory.

kvlint reads rule entry points only from an environment's site directories (never a PYTHONPATH
or working-directory folder: a checkout could declare one), so a test's plugins go into a fresh
environment made with ``venv --without-pip``; a ``.pth`` line makes this test run's own site
directory a site directory of it too, so kvlint and its dependencies import there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

from testing.shared import REPO


def python(venv: Path) -> str:
    return str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))


def make_env(venv: Path) -> Path:
    """A new virtual environment at ``venv`` that imports kvlint; its site directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_dir = Path(
        subprocess.run(
            [python(venv), "-c", "import site; print(site.getsitepackages()[0])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    ours = sysconfig.get_paths()["purelib"]
    (site_dir / "kvlint-test-base.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return site_dir


def add_distribution(
    site_dir: Path, name: str, entry_points: str, modules: Mapping[str, str]
) -> None:
    """A hand-made installed distribution ``name`` declaring ``entry_points`` (lines of the
    ``[kvlint.rules]`` section), with its ``modules`` (file name -> source)."""
    info = site_dir / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[kvlint.rules]\n{entry_points}\n")
    for file, source in modules.items():
        (site_dir / file).write_text(source)


def run_kvlint(
    venv: Path,
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m kvlint ARGS`` in the environment, with this checkout's kvlint."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    environ.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [python(venv), "-m", "kvlint", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        check=False,
        timeout=timeout,
    )
