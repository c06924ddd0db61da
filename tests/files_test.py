"""kvlint.files.collect_files: each file once, however many names reach it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvlint.files import collect_files


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "deploy" / "b").mkdir(parents=True)
    (tmp_path / "deploy" / "a.yaml").write_text("a: 1\n")
    (tmp_path / "deploy" / "b" / "c.yaml").write_text("c: 1\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "same.yaml").symlink_to(tmp_path / "deploy" / "a.yaml")
    (tmp_path / "linked").symlink_to(tmp_path / "deploy")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_named_again_is_checked_once(repo: Path) -> None:
    found = collect_files(["deploy", "./deploy/a.yaml", "linked/b/c.yaml", "other"])
    assert [display for _, display in found] == ["deploy/a.yaml", "deploy/b/c.yaml"]


def test_a_link_to_a_file_outside_the_walk_is_its_own_file(repo: Path) -> None:
    found = collect_files(["other", "deploy/b"])
    assert [display for _, display in found] == ["other/same.yaml", "deploy/b/c.yaml"]


def test_names_through_a_folder_and_a_link_to_it_are_one_file(repo: Path) -> None:
    absolute = os.path.join(repo, "linked", "a.yaml")
    found = collect_files([absolute, "deploy/a.yaml"])
    assert [display for _, display in found] == [absolute]
