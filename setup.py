"""Package layout that pyproject.toml alone cannot express.

The built-in rules live in the top-level ``rules/`` folder (the brief's layout) and the JSON
Schemas in ``schemas/``; both are installed under import names that cannot clash with other
distributions (a bare ``rules`` package exists on PyPI).
"""

from __future__ import annotations

from setuptools import find_packages
from setuptools import setup

_DIRS = {"kvlint_rules": "rules", "kvlint_schemas": "schemas"}

packages = find_packages(include=["kvlint", "kvlint.*"])
for name, folder in _DIRS.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

setup(packages=packages, package_dir=_DIRS)
