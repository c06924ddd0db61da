"""Run the real linter over files written to a temporary folder, offline and without any config
that happens to sit above it: what the rule cases and the doc examples need."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kvlint.config import load_config
from kvlint.config import resolve
from kvlint.finding import Finding
from kvlint.linter import lint_paths
from kvlint.registry import default_registry

_FILE_MARKER = re.compile(r"^# file: *(\S+)\n")


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No network, no machine-specific Hugging Face cache, paths shown relative to tmp_path."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / ".hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)


def split_example(block: str, default: str = "deploy.yaml") -> tuple[str, str]:
    """A doc block's file name (from a first line ``# file: NAME``) and its text."""
    match = _FILE_MARKER.match(block)
    if match is None:
        return default, block
    return match.group(1), block


def lint_files(
    tmp_path: Path,
    files: Mapping[str, str],
    *,
    config: Mapping[str, Any] | None = None,
    check: list[str] | None = None,
) -> tuple[Finding, ...]:
    """Write ``files`` under ``tmp_path`` (the current folder) and lint ``check`` (default: the
    first file) with every rule selected, or with ``config`` as the kvlint config."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config_path = None
    if config is not None:
        from ruamel.yaml import YAML

        config_path = tmp_path / ".kvlint-case.yaml"
        with open(config_path, "w", encoding="utf-8") as handle:
            YAML(typ="safe").dump(dict(config), handle)
    settings = resolve(load_config(config_path), default_registry(), offline=True)
    targets = check if check is not None else [next(iter(files))]
    return lint_paths([os.path.normpath(t) for t in targets], settings).findings
