"""Tests for kvlint.entry_points: the same entry points importlib.metadata finds, read cheaply."""

from __future__ import annotations

import importlib.metadata
import re
import site
import sys
import zipfile
from pathlib import Path

import pytest

from kvlint.entry_points import EntryPoint
from kvlint.entry_points import entry_points
from kvlint.entry_points import site_directories


def _dist(folder: Path, dirname: str, name: str, entry_points_txt: str) -> None:
    info = folder / dirname
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1\n\nbody\n")
    (info / "entry_points.txt").write_text(entry_points_txt)


def _metadata(group: str) -> list[tuple[str, str, str]]:
    """importlib.metadata over the site directories, the first distribution of a name winning."""
    found: dict[str, list[tuple[str, str, str]]] = {}
    for dist in importlib.metadata.distributions(path=site_directories()):
        key = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
        eps = dist.entry_points.select(group=group)
        found.setdefault(key, [(ep.name, ep.value, dist.metadata["Name"]) for ep in eps])
    return sorted(item for items in found.values() for item in items)


def _site(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """``folders`` as the environment's site directories, and the whole of ``sys.path``."""
    monkeypatch.setattr(sys, "path", [str(f) for f in folders])
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(f) for f in folders])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)


def _ours(group: str) -> list[tuple[str, str, str]]:
    found = entry_points(group)
    assert found is not None
    return sorted((ep.name, ep.value, ep.package) for ep in found)


@pytest.mark.parametrize("group", ["kvlint.rules", "console_scripts", "pytest11"])
def test_the_installed_environment_reads_as_importlib_metadata_reads_it(group: str) -> None:
    assert _ours(group) == _metadata(group)


def test_distributions_on_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(
        first,
        "acme_rules-1.0.dist-info",
        "acme-rules",
        "# comment\n[console_scripts]\nacme = acme:main\n\n"
        "[kvlint.rules]\n acme = acme_rules:get_rules \n"
        "# another comment\nextra = acme_rules.sub:Thing.attr [fast]\n",
    )
    # The same distribution later on the path (another version): the first one wins.
    _dist(second, "Acme.Rules-0.9.dist-info", "Acme.Rules", "[kvlint.rules]\nold = acme_old\n")
    _dist(second, "beta.egg-info", "beta", "[kvlint.rules]\nbeta = beta_rules\n")
    (second / "not-a-dist").mkdir()
    _site(monkeypatch, first, second, tmp_path / "missing")
    assert _ours("kvlint.rules") == [
        ("acme", "acme_rules:get_rules", "acme-rules"),
        ("beta", "beta_rules", "beta"),
        ("extra", "acme_rules.sub:Thing.attr [fast]", "acme-rules"),
    ]
    assert _ours("kvlint.rules") == _metadata("kvlint.rules")


def test_load_imports_the_module_and_its_attribute() -> None:
    assert EntryPoint("x", "os.path:join", "p").load() is __import__("os").path.join
    assert EntryPoint("x", "json", "p").load() is __import__("json")
    with pytest.raises(ValueError, match="malformed"):
        EntryPoint("x", "not a value!", "p").load()


def test_only_site_directories_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder or a zip on sys.path that is no site directory (the working directory under
    `python -m`, a PYTHONPATH entry) is never read for rules: a checkout could declare one."""
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("z-1.dist-info/entry_points.txt", "[kvlint.rules]\nz = z_rules\n")
        zf.writestr("z-1.dist-info/METADATA", "Name: z\n")
    checkout, real_site = tmp_path / "checkout", tmp_path / "site-packages"
    _dist(checkout, "pwn-0.1.dist-info", "pwn", "[kvlint.rules]\npwn = pwnmod\n")
    _dist(real_site, "good-1.dist-info", "good", "[kvlint.rules]\ngood = good_rules\n")
    _site(monkeypatch, real_site)
    monkeypatch.setattr(sys, "path", ["", str(checkout), str(archive), str(real_site)])
    assert site_directories() == [str(real_site)]
    assert _ours("kvlint.rules") == [("good", "good_rules", "good")]
    assert _ours("kvlint.rules") == _metadata("kvlint.rules")


def test_a_finder_of_distributions_is_left_to_importlib_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Finder:
        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert entry_points("kvlint.rules") is None


def test_metadata_that_is_no_regular_file_is_never_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO as entry_points.txt and a /dev/zero link as METADATA (a pull request can add
    both to a folder on sys.path): read through kvlint.reading, skipped without blocking or
    filling memory; the distribution named by its folder."""
    import os

    site_dir = tmp_path / "site"
    _dist(site_dir, "good-1.0.dist-info", "good", "[kvlint.rules]\ngood = good_rules\n")
    fifo = site_dir / "fifo-1.0.dist-info"
    fifo.mkdir()
    os.mkfifo(fifo / "entry_points.txt")
    zero = site_dir / "zero-1.0.dist-info"
    zero.mkdir()
    (zero / "entry_points.txt").write_text("[kvlint.rules]\nzero = zero_rules\n")
    (zero / "METADATA").symlink_to("/dev/zero")
    _site(monkeypatch, site_dir)
    assert _ours("kvlint.rules") == [
        ("good", "good_rules", "good"),
        ("zero", "zero_rules", "zero"),
    ]
