"""The ``../shared`` fixtures: present here and in CI, absent on a bare clone (tests skip)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
HF_CONFIGS = FIXTURES / "hf-configs"
ENGINE_LOGS = FIXTURES / "engine-logs" / "engine_logs.jsonl"
DEPLOYMENTS_REAL = FIXTURES / "deployments-real"
SARIF_SCHEMA = FIXTURES / "schemas" / "sarif-schema-2.1.0.json"
# The real corpus grown under issue 17 (its manifest: tests/fixtures/deployments-real-more/):
# the projects' own files, kept beside ../shared's corpus rather than committed. The first of
# these that exists: KVLINT_REAL_CORPUS, ../shared's folder.
_CORPUS_PLACES = [
    *([Path(os.environ["KVLINT_REAL_CORPUS"])] if os.environ.get("KVLINT_REAL_CORPUS") else []),
    FIXTURES / "deployments-real-more",
]
DEPLOYMENTS_REAL_MORE = next((p for p in _CORPUS_PLACES if p.is_dir()), _CORPUS_PLACES[0])

requires_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"{SHARED} is absent (a bare clone): shared fixtures not available"
)


def shared_file(path: Path) -> Path:
    """``path`` if it exists, else skip the calling test with the reason."""
    if not path.exists():
        pytest.skip(f"{path} is absent (a bare clone): shared fixtures not available")
    return path


def hf_config_files() -> list[Path]:
    """Every real config.json fixture (empty on a bare clone)."""
    if not HF_CONFIGS.is_dir():
        return []
    return sorted(HF_CONFIGS.glob("*.json"))
