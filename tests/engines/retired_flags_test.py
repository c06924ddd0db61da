"""Flags an older release took and the newest table lacks: accepted on that release, named on
a newer one; llama.cpp's --no-mmap."""

from __future__ import annotations

import pytest

from kvlint.deploy.load import load_text


def _problems(image: str, command: str) -> list[str]:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: s\n"
        f"        image: {image}\n        command: [{command}]\n"
    )
    (dep,) = load_text(text, display="d.yaml").deployments
    return [p.message for p in dep.problems if p.code == "KV501"]


SGLANG = "python3, -m, sglang.launch_server, --model-path, Qwen/Qwen3-8B"


@pytest.mark.parametrize(
    "flag", ["--cuda-graph-bs, '1', '2', '4'", "--prefill-round-robin-balance"]
)
def test_an_old_sglang_takes_flags_it_later_retired(flag: str) -> None:
    assert _problems("lmsysorg/sglang:v0.5.5.post3-cu129", f"{SGLANG}, {flag}") == []
    (message,) = _problems("lmsysorg/sglang:v0.5.23", f"{SGLANG}, {flag}")
    assert message.endswith("removed after 0.5.12 (absent from 0.5.23)")


def test_llama_cpp_no_mmap() -> None:
    command = "llama-server, -m, /models/m.gguf, --no-mmap, --mmap"
    assert _problems("ghcr.io/ggml-org/llama.cpp:server", command) == []
