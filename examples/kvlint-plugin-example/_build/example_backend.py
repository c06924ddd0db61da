"""A minimal PEP 517 build backend (pure-Python wheel, no dependencies but tomli before 3.11).

It lets kvlint's tests install this example offline, in any environment, with
``pip install --no-index --no-deps --target DIR``. A real plugin uses any backend it likes
(setuptools, hatchling, flit); nothing in kvlint depends on this file.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _project() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project: dict[str, Any] = tomllib.load(handle)["project"]
    return project


def _metadata(project: dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3')}",
    ]
    lines += [f"Requires-Dist: {dep}" for dep in project.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _entry_points(project: dict[str, Any]) -> str:
    out = []
    for group, entries in project.get("entry-points", {}).items():
        out.append(f"[{group}]")
        out += [f"{name} = {value}" for name, value in entries.items()]
    return "\n".join(out) + "\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    project = _project()
    dist = project["name"].replace("-", "_")
    version = project["version"]
    info = f"{dist}-{version}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted((ROOT / dist).rglob("*.py")):
        files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    files[f"{info}/METADATA"] = _metadata(project).encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: example_backend\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    files[f"{info}/entry_points.txt"] = _entry_points(project).encode()
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as wheel:
        for arcname, data in files.items():
            wheel.writestr(arcname, data)
    return name


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    raise NotImplementedError("this example is installed from its folder; it has no sdist")
