"""The real corpus grown under issue 17: its manifest, each file's source, and a check over it all.

The manifest (``tests/fixtures/deployments-real-more/SOURCES.md``) is always checked. The files
are the projects' own, kept beside ``../shared``'s corpus (``testing.shared``); where they are
absent the tests that read them skip. A check over the whole corpus, offline: no traceback and
no KV900, no file that runs an engine left silent (each gives a deployment or says why not at
warning or above), and every error and warning listed in ``docs/real-deployments-review.md``.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

import pytest

from kvlint.config import load_config
from kvlint.config import resolve
from kvlint.finding import Severity
from kvlint.linter import LintResult
from kvlint.linter import lint_paths
from kvlint.registry import default_registry
from testing.shared import DEPLOYMENTS_REAL
from testing.shared import DEPLOYMENTS_REAL_MORE
from testing.shared import REPO
from testing.shared import requires_shared

MANIFEST = REPO / "tests" / "fixtures" / "deployments-real-more" / "SOURCES.md"
REVIEW = REPO / "docs" / "real-deployments-review.md"
LICENCES = frozenset({"Apache-2.0", "MIT", "MIT-0", "MPL-2.0"})

requires_corpus = pytest.mark.skipif(
    not DEPLOYMENTS_REAL_MORE.is_dir(),
    reason=f"{DEPLOYMENTS_REAL_MORE} is absent: the grown real corpus is not on this machine",
)


class Row(NamedTuple):
    file: str
    repository: str
    commit: str
    path: str
    blob: str
    licence: str


def _rows() -> list[Row]:
    rows = []
    for line in MANIFEST.read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{40}", cells[4]):
            rows.append(Row(*cells))
    return rows


def test_the_manifest_holds_150_files_from_30_repositories() -> None:
    rows = _rows()
    assert len(rows) >= 150
    assert len({row.repository for row in rows}) >= 30
    assert len({row.file for row in rows}) == len(rows)
    for row in rows:
        assert row.licence in LICENCES, row
        assert re.fullmatch(r"[0-9a-f]{40}", row.commit), row
        assert row.file == f"{row.repository.replace('/', '__')}__{row.path.replace('/', '__')}"


@requires_shared
def test_the_manifest_takes_nothing_reserved_or_already_kept() -> None:
    reserved = set()
    for line in (DEPLOYMENTS_REAL / "RESERVED.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"- ([^:]+): (.+)$", line.strip())
        if match:
            reserved.add((match.group(1).strip(), match.group(2).strip()))
    kept = {p.name for p in DEPLOYMENTS_REAL.iterdir()}
    for row in _rows():
        assert (row.repository, row.path) not in reserved, row
        assert row.file not in kept, row


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@requires_corpus
def test_each_file_is_its_source_blob() -> None:
    for row in _rows():
        path = DEPLOYMENTS_REAL_MORE / row.file
        assert path.is_file(), f"{row.file} is missing from {DEPLOYMENTS_REAL_MORE}"
        assert _blob(path.read_bytes()) == row.blob, f"{row.file} is not its source's blob"


@pytest.fixture(scope="module")
def corpus_check(tmp_path_factory: pytest.TempPathFactory) -> LintResult:
    if not DEPLOYMENTS_REAL_MORE.is_dir():
        pytest.skip(f"{DEPLOYMENTS_REAL_MORE} is absent: the grown real corpus is not here")
    home = tmp_path_factory.mktemp("hf-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HOME", str(home))
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.delenv("HF_HUB_CACHE", raising=False)
        patch.chdir(DEPLOYMENTS_REAL_MORE)
        settings = resolve(load_config(None), default_registry(), offline=True)
        files = sorted(row.file for row in _rows())
        return lint_paths(files, settings)


def test_no_traceback_and_no_internal_error(corpus_check: LintResult) -> None:
    internal = [f for f in corpus_check.findings if f.code == "KV900"]
    assert internal == []
    assert len(corpus_check.files) == len(_rows())


def _without_kv_cache() -> set[str]:
    """The files the review lists as running only servers that keep no KV cache."""
    text = REVIEW.read_text(encoding="utf-8")
    section = (
        text.split("## Servers that keep no KV cache", 1)[1] if "## Servers that" in text else ""
    )
    return set(re.findall(r"^- `([^`]+)`$", section, flags=re.MULTILINE))


def test_no_file_that_runs_an_engine_is_silent(corpus_check: LintResult) -> None:
    read = {result.deployment.path for result in corpus_check.deployments}
    said = {f.span.path for f in corpus_check.findings if f.severity >= Severity.WARNING}
    silent = {name for name in corpus_check.files if name not in read and name not in said}
    # Silent only where the review says the file runs no server with a KV cache, and that list
    # names no file kvlint reads or warns about (it would be stale).
    assert silent == _without_kv_cache()


def _reviewed() -> set[tuple[str, int, int, str]]:
    """(file, line, column, code) of every row of the review's issue-17 table."""
    text = REVIEW.read_text(encoding="utf-8")
    section = text.split("## Issue 17", 1)[1] if "## Issue 17" in text else ""
    rows = set()
    for line in section.splitlines():
        match = re.match(r"\| \d+ \| `([^`]+)` \| (\d+):(\d+) \| (KV\d{3}) \|", line)
        if match:
            name, row, column, code = match.groups()
            rows.add((name, int(row), int(column), code))
    return rows


def test_every_error_and_warning_is_reviewed(corpus_check: LintResult) -> None:
    reviewed = _reviewed()
    unreviewed = [
        f"{f.span.path}:{f.span.line}:{f.span.column} {f.code} {f.message}"
        for f in corpus_check.findings
        if f.severity >= Severity.WARNING
        and (f.span.path, f.span.line, f.span.column, f.code) not in reviewed
    ]
    assert unreviewed == [], "add these to docs/real-deployments-review.md"


def test_the_review_lists_no_finding_that_is_gone(corpus_check: LintResult) -> None:
    found = {
        (f.span.path, f.span.line, f.span.column, f.code)
        for f in corpus_check.findings
        if f.severity >= Severity.WARNING
    }
    stale = sorted(_reviewed() - found)
    assert stale == [], "these rows of the review no longer fire: update the review"
