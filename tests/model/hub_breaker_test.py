"""The Hub circuit breaker: the first lookup that times out, or finds the Hub unreachable,
stops every further lookup of the run, and one line on stderr says so (127.0.0.1 servers)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kvlint.errors import ModelNotResolved
from kvlint.linter import HUB_LOOKUPS_AT_ONCE
from kvlint.model.resolve import HubBudget
from kvlint.model.resolve import resolve_model
from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.network_test import GUARD_S
from tests.hostile.network_test import HUB_TIMEOUT_S
from tests.hostile.network_test import _Hub
from tests.hostile.network_test import _online_env
from tests.hostile.network_test import hub  # noqa: F401  (the fixture)
from tests.hostile.runner import run_kvlint

# More models than go out at once: the first lookups are sent together, the rest wait for a
# place, and the breaker keeps them from being sent at all.
MODELS = tuple(f"acme/m{n}" for n in range(HUB_LOOKUPS_AT_ONCE + 3))


@pytest.mark.parametrize("hub", ["hang"], indirect=True)
def test_a_hanging_hub_trips_the_breaker_and_says_so_once(hub: _Hub, tmp_path: Path) -> None:  # noqa: F811
    docs = [f"model: {m}\nmax-model-len: 4096\n" for m in MODELS]
    (tmp_path / "deploy.yaml").write_text("---\n".join(docs))
    outcome = run_kvlint(
        ["check", "--no-config", "--format", "concise", "--select", "KV902", "deploy.yaml"],
        tmp_path,
        env=_online_env(hub, tmp_path),
        timeout=GUARD_S,
    )
    assert_well_behaved(outcome)
    assert outcome.code == 1  # KV902 warnings, not a failed run
    asked = {r.split("/")[2] for r in hub.requests if "/api/" not in r and "acme" in r}
    assert 1 <= len(asked) <= HUB_LOOKUPS_AT_ONCE < len(MODELS), hub.requests
    notices = [line for line in outcome.err.splitlines() if "did not answer" in line]
    assert len(notices) == 1 and notices[0].startswith("kvlint: the Hugging Face Hub did not")
    assert outcome.seconds < 2 * HUB_TIMEOUT_S + 10


def test_a_refused_connection_trips_the_breaker_without_waiting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.socket() as closed:  # a port nothing listens on: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("KVLINT_HUB_TIMEOUT", "5")
    budget = HubBudget()
    with pytest.raises(ModelNotResolved):
        resolve_model("acme/m0", hub=budget)
    assert budget.tripped is not None and len(budget.notices) == 1
    with pytest.raises(ModelNotResolved, match="did not answer an earlier lookup of this run"):
        resolve_model("acme/m1", hub=budget)
    assert len(budget.notices) == 1  # said once


def test_a_network_error_names_the_systems_words_and_nothing_else() -> None:
    from kvlint.model.resolve import _download_message

    reset = ConnectionResetError(104, "Connection reset by peer")
    assert "the download failed (ConnectionResetError: Connection reset by peer); " in (
        _download_message("acme/m0", reset)
    )
    # An error whose text could quote a path or the request says only its kind.
    bare = OSError("GET http://127.0.0.1/acme/m0 Authorization: Bearer hf_secret")
    message = _download_message("acme/m0", bare)
    assert "the download failed (OSError); " in message and "hf_secret" not in message
