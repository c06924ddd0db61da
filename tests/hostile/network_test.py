"""The Hub as an adversary: unresolvable offline, hanging, failing (500, 404, 401) and slow, all
simulated on 127.0.0.1; each run ends within the stated timeout with one clear message, and the
``HF_TOKEN`` value appears in no output and no report."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlint.linter import HUB_LOOKUPS_AT_ONCE
from tests.hostile.corpus_test import assert_well_behaved
from tests.hostile.runner import run_kvlint

TOKEN = "hf_kvlintHostileSecret0123456789abcdef"
HUB_TIMEOUT_S = 2  # KVLINT_HUB_TIMEOUT: the stated bound on the whole download
GUARD_S = 45.0  # the child is killed (and the test failed) past this: a hang, not a slow run
MODEL = "acme/not-anywhere"
HUGE = 100 * 2**20
DEPLOY = f"model: {MODEL}\nmax-model-len: 4096\ngpu-memory-utilization: 0.9\n"


class _Hub(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.release = threading.Event()
        self.requests: list[str] = []


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Hub

    def _answer(self) -> None:
        self.server.requests.append(f"{self.command} {self.path}")
        mode = self.server.mode
        if mode == "hang":  # accept, read the request, never answer
            self.server.release.wait(GUARD_S)
            return
        if mode == "slow":  # answers, but only after the stated timeout
            self.server.release.wait(HUB_TIMEOUT_S * 3)
        if mode == "huge":  # a config.json of 100 MiB, announced by the HEAD request
            self.send_response(200)
            self.send_header("Content-Length", str(HUGE))
            self.send_header("ETag", '"hostile"')
            self.send_header("X-Repo-Commit", "0" * 40)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(b" " * HUGE)
            return
        status = {"500": 500, "404": 404, "401": 401, "slow": 503}[mode]
        body = b'{"error": "hostile hub"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if mode == "404":
            self.send_header("X-Error-Code", "RepoNotFound")
        if mode == "401":
            self.send_header("X-Error-Code", "GatedRepo")
            self.send_header("X-Error-Message", "Access to model acme/not-anywhere is restricted")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = _answer
    do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return


@pytest.fixture
def hub(request: pytest.FixtureRequest) -> Iterator[_Hub]:
    server = _Hub(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def _online_env(hub: _Hub, tmp_path: Path) -> dict[str, str]:
    return {
        "HF_HUB_OFFLINE": "0",
        "HF_ENDPOINT": f"http://127.0.0.1:{hub.server_address[1]}",
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_TOKEN": TOKEN,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_ETAG_TIMEOUT": str(HUB_TIMEOUT_S),
        "HF_HUB_DOWNLOAD_TIMEOUT": str(HUB_TIMEOUT_S),
        "KVLINT_HUB_TIMEOUT": str(HUB_TIMEOUT_S),
    }


REASONS = {
    "hang": f"the Hugging Face Hub did not answer (no answer within {HUB_TIMEOUT_S} s)",
    "slow": f"the Hugging Face Hub did not answer (no answer within {HUB_TIMEOUT_S} s)",
    # The size is asked first (one HEAD, not retried): a 5xx answer is said as it is.
    "500": "the Hugging Face Hub answered HTTP 500",
    "404": "no such repository on the Hub (or it is private: set HF_TOKEN)",
    "401": "the repository is gated: accept its licence on the Hub and set HF_TOKEN",
}


@pytest.mark.parametrize("hub", sorted(REASONS), indirect=True)
def test_a_hostile_hub_ends_in_one_clear_message(hub: _Hub, tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    report = tmp_path / "report.json"
    outcome = run_kvlint(
        ["check", "--no-config", "--format", "json", "--output-file", str(report), "deploy.yaml"],
        tmp_path,
        env=_online_env(hub, tmp_path),
        timeout=GUARD_S,
    )
    assert_well_behaved(outcome, concise=False)
    text = report.read_text()
    assert TOKEN not in outcome.text + text
    assert hub.requests, "the hub was never asked"
    assert outcome.code == 1, outcome  # a KV902 warning: the run goes on
    assert f'"message": "model \'{MODEL}\': {REASONS[hub.mode]}' in text, text
    assert '"code": "KV902"' in text and '"line": 1' in text and '"column": 8' in text


@pytest.mark.parametrize("hub", ["404"], indirect=True)
def test_the_token_is_in_no_format(hub: _Hub, tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    env = _online_env(hub, tmp_path)
    for fmt in ("concise", "full", "json", "github", "sarif"):
        outcome = run_kvlint(
            ["check", "--no-config", "--format", fmt, "deploy.yaml"], tmp_path, env=env
        )
        assert_well_behaved(outcome, concise=fmt == "concise")
        assert TOKEN not in outcome.text, fmt
        assert MODEL in outcome.text, fmt
    size = run_kvlint(["size", MODEL], tmp_path, env=env)
    assert size.code == 2 and TOKEN not in size.text
    assert size.lines() == [size.lines()[0]] and size.lines()[0].startswith(
        f"kvlint: model '{MODEL}'"
    )


def test_offline_the_message_says_how_to_fix_it(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    outcome = run_kvlint(
        ["check", "--no-config", "--offline", "--format", "concise", "deploy.yaml"],
        tmp_path,
        env={"HF_HOME": str(tmp_path / "hf-home"), "HF_TOKEN": TOKEN},
    )
    assert_well_behaved(outcome)
    assert outcome.code == 1  # a KV902 warning: the run goes on
    assert TOKEN not in outcome.text
    (line,) = [s for s in outcome.lines() if "KV902" in s]
    assert line.startswith(
        f"deploy.yaml:1:8: KV902 [warning] model '{MODEL}' is not in the built-in catalog "
        "(`kvlint models` lists it) nor in the Hugging Face cache at "
        f"{tmp_path / 'hf-home' / 'hub'}, and "
        "--offline, so its config.json was not downloaded: pass a config.json path or a model "
        "directory, or point HF_HOME / HF_HUB_CACHE at a cache that holds it; "
        "not checked without the model: KV101, "
    )


@pytest.mark.parametrize("hub", ["huge"], indirect=True)
def test_a_hub_answer_past_the_cap_is_not_downloaded(hub: _Hub, tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(DEPLOY)
    outcome = run_kvlint(
        ["check", "--no-config", "--format", "concise", "deploy.yaml"],
        tmp_path,
        env=_online_env(hub, tmp_path),
        timeout=GUARD_S,
    )
    assert_well_behaved(outcome)
    assert outcome.code == 1  # a KV902 warning: the run goes on
    assert [r for r in hub.requests if r.startswith("GET")] == []  # only the HEAD was asked
    (line,) = [s for s in outcome.lines() if "KV902" in s]
    assert line.startswith(
        f"deploy.yaml:1:8: KV902 [warning] model '{MODEL}': the Hub's config.json 100 MiB is too "
        "large for a model config (the limit is 4 MiB): not read; "
    ), line
    assert not list((tmp_path / "hf-home").rglob("config.json"))


MODELS = 20


@pytest.mark.parametrize("hub", ["hang"], indirect=True)
def test_the_hub_deadline_is_one_per_run_not_one_per_model(hub: _Hub, tmp_path: Path) -> None:
    """20 unknown models against a silent Hub: one timeout in all, not 20 (40 s at 2 s)."""
    docs = [f"model: acme/model-{i}\nmax-model-len: 4096\n" for i in range(MODELS)]
    (tmp_path / "deploy.yaml").write_text("---\n".join(docs))
    outcome = run_kvlint(
        ["check", "--no-config", "--format", "concise", "--select", "KV902", "deploy.yaml"],
        tmp_path,
        env=_online_env(hub, tmp_path),
        timeout=GUARD_S,
    )
    assert_well_behaved(outcome)
    assert outcome.code == 1  # KV902 warnings: the run goes on
    lines = [line for line in outcome.lines() if " KV902 " in line]  # not the stderr notice
    assert len(lines) == MODELS
    # The first lookups go out together (HUB_LOOKUPS_AT_ONCE) and each waits out the one
    # deadline; the rest are not sent: the breaker tripped on the first timeout. A lookup in
    # flight when the breaker trips may end in the network error of its own connection
    # instead (seen under load); it was still sent once, and says why it failed.
    not_sent = "not looked up: the Hugging Face Hub did not answer an earlier lookup of this run"
    sent = [line for line in lines if not_sent not in line]
    timed_out = [line for line in sent if "did not answer (no answer within 2 s)" in line]
    assert 1 <= len(timed_out) <= len(sent) <= HUB_LOOKUPS_AT_ONCE, "\n".join(lines)
    assert all("the download failed (" in line for line in sent if line not in timed_out)
    assert len(sent) < len(lines), "\n".join(lines)
    assert outcome.seconds < 4 * HUB_TIMEOUT_S + 10  # a guard, far below 20 timeouts
