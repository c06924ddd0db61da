"""Hub lookups at once: the models only the Hub can give are asked for together, on a
127.0.0.1 Hub that counts the requests it holds at the same time; models found without the Hub
are never sent."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlint.linter import HUB_LOOKUPS_AT_ONCE
from testing.hub import answer_repo_not_found
from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.network_test import GUARD_S
from tests.hostile.network_test import _online_env
from tests.hostile.runner import run_kvlint

MODELS = [f"acme/model-{n}" for n in range(HUB_LOOKUPS_AT_ONCE + 4)]
HOLD_S = 5.0
# Not a test of the Hub's deadline (tests/hostile/network_test.py is): one that a loaded
# machine cannot reach while the first requests are held.
HUB_TIMEOUT_S = "30"


class _CountingHub(http.server.ThreadingHTTPServer):
    """Answers every request 404 (no such repository, an answer: the breaker stays closed) after
    holding it until a second request is in flight or a second has passed."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.second = threading.Event()
        self.paths: list[str] = []


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _CountingHub

    def _answer(self) -> None:
        with self.server.lock:
            self.server.paths.append(self.path)
            self.server.in_flight += 1
            self.server.peak = max(self.server.peak, self.server.in_flight)
            if self.server.in_flight > 1:
                self.server.second.set()
        # A serial client never sends the second: each of its requests waits the bound out (and
        # the test fails on the peak). Generous, so a loaded machine's slow second is not that.
        self.server.second.wait(HOLD_S)
        with self.server.lock:
            self.server.in_flight -= 1
        answer_repo_not_found(self)

    do_GET = _answer
    do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def counting_hub() -> Iterator[_CountingHub]:
    server = _CountingHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.second.set()
    server.shutdown()
    server.server_close()


def test_models_only_the_hub_has_are_looked_up_at_once(
    counting_hub: _CountingHub, tmp_path: Path
) -> None:
    docs = [f"model: {m}\nmax-model-len: 4096\n" for m in MODELS]
    docs.append("model: Qwen/Qwen2.5-7B-Instruct\nmax-model-len: 4096\n")  # the catalog's
    (tmp_path / "vllm.yaml").write_text("---\n".join(docs))
    outcome = run_kvlint(
        ["check", "--no-config", "--format", "concise", "--select", "KV902", "vllm.yaml"],
        tmp_path,
        env={
            **_online_env(counting_hub, tmp_path),  # type: ignore[arg-type]
            "KVLINT_HUB_TIMEOUT": HUB_TIMEOUT_S,
            "HF_HUB_ETAG_TIMEOUT": HUB_TIMEOUT_S,
            "HF_HUB_DOWNLOAD_TIMEOUT": HUB_TIMEOUT_S,
        },
        timeout=GUARD_S,
    )
    assert_well_behaved(outcome)
    assert outcome.code == 1  # each unknown model is one KV902 warning, the run goes on
    kv902 = [line for line in outcome.lines() if " KV902 " in line]
    assert len(kv902) == len(MODELS)
    assert all("no such repository" in line for line in kv902), "\n".join(kv902)
    assert 2 <= counting_hub.peak <= HUB_LOOKUPS_AT_ONCE  # asked together, a pool's width
    asked = {p.split("/")[2] for p in counting_hub.paths if "/acme/" in p}
    assert asked == {m.split("/")[1] for m in MODELS}
    assert not any("Qwen2.5-7B" in p for p in counting_hub.paths)  # found in the catalog
