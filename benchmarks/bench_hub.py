#!/usr/bin/env python3
"""How long a run waits for the Hugging Face Hub: N models only the Hub can give, looked up
one after the other (HUB_LOOKUPS_AT_ONCE = 1) and together (the default), against a 127.0.0.1
Hub that answers every request after a fixed delay (a 404: no such repository).

    python benchmarks/bench_hub.py                       # N = 1, 4, 16, 32 at 200 ms
    python benchmarks/bench_hub.py --models 8 --delay 0.5

Each lookup is a HEAD then (for a 404, no) GET, so the serial wait is about N x delay; the
pool's is about ceil(N / HUB_LOOKUPS_AT_ONCE) x delay. Run by hand; figures go in the notes.
"""

from __future__ import annotations

import argparse
import http.server
import os
import pathlib
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.hub import answer_repo_not_found  # noqa: E402


class _SlowHub(http.server.ThreadingHTTPServer):
    daemon_threads = True
    delay = 0.2


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _SlowHub

    def _answer(self) -> None:
        time.sleep(self.server.delay)
        answer_repo_not_found(self)

    do_GET = _answer
    do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="1,4,16,32", help="comma-separated model counts")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per Hub answer")
    args = parser.parse_args(argv)
    server = _SlowHub(("127.0.0.1", 0), _Handler)
    server.delay = args.delay
    threading.Thread(target=server.serve_forever, daemon=True).start()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="kvlint-bench-hub-"))
    # huggingface_hub reads these when it is imported: set before kvlint imports it
    os.environ.update(
        HF_ENDPOINT=f"http://127.0.0.1:{server.server_address[1]}",
        HF_HOME=str(scratch / "hf-home"),
        HF_HUB_OFFLINE="0",
        HF_HUB_DISABLE_TELEMETRY="1",
        KVLINT_HUB_TIMEOUT="600",
    )
    from kvlint import linter
    from kvlint.config import Settings
    from kvlint.selection import Selection

    default_width = linter.HUB_LOOKUPS_AT_ONCE
    warm = scratch / "warm.yaml"  # imports (huggingface_hub, the rules) out of the figures
    warm.write_text("model: acme/warm-up\n")
    linter.lint_paths([str(warm)], Settings(Selection()))
    print(f"Hub answer delay {args.delay * 1000:.0f} ms; pool width {default_width}")
    print(f"{'models':>6}  {'one at a time':>13}  {'together':>9}  {'KV902':>5}")
    for count in (int(n) for n in args.models.split(",")):
        path = scratch / f"models-{count}.yaml"
        docs = [f"model: acme/bench-{count}-{i}\nmax-model-len: 4096\n" for i in range(count)]
        path.write_text("---\n".join(docs))
        times = []
        for width in (1, default_width):
            linter.HUB_LOOKUPS_AT_ONCE = width
            for stale in (scratch / "hf-home").rglob("*"):  # no answer kept from the last run
                if stale.is_file():
                    stale.unlink()
            start = time.perf_counter()
            result = linter.lint_paths([str(path)], Settings(Selection()))
            times.append(time.perf_counter() - start)
        unknown = sum(1 for f in result.findings if f.code == "KV902")
        print(f"{count:>6}  {times[0]:>12.2f}s  {times[1]:>8.2f}s  {unknown:>5}")
    linter.HUB_LOOKUPS_AT_ONCE = default_width
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
