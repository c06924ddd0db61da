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


def _findings(image: str, command: str) -> list[tuple[str, str]]:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: s\n"
        f"        image: {image}\n        command: [{command}]\n"
    )
    (dep,) = load_text(text, display="d.yaml").deployments
    return [(p.severity.name, p.message) for p in dep.problems if p.code == "KV501"]


def test_a_flag_unknown_to_releases_newer_than_the_image_is_a_warning() -> None:
    """SGLang's own OME runtimes pass `--cuda-graph-max-bs` to v0.5.5 (documented then; renamed
    since): the table is read from 0.5.12 and 0.5.23, so on an older release an unknown flag
    may be one it had, and an error would be a guess. On a release the table covers it stays
    an error."""
    flag = "--cuda-graph-max-bs, '64'"
    assert _findings("lmsysorg/sglang:v0.5.5.post3-cu129-amd64", f"{SGLANG}, {flag}") == [
        (
            "WARNING",
            "unknown flag `--cuda-graph-max-bs` for sglang; did you mean `--cuda-graph-bs`? "
            "(flags read from sglang 0.5.12 and 0.5.23; 0.5.5.post3 is older and may have it)",
        )
    ]
    ((severity, _),) = _findings("lmsysorg/sglang:v0.5.23", f"{SGLANG}, {flag}")
    assert severity == "ERROR"
    ((severity, _),) = _findings("lmsysorg/sglang:latest", f"{SGLANG}, {flag}")
    assert severity == "ERROR"  # no release named: the newest, which the table is


def test_an_abbreviation_of_an_alias_is_expanded_as_argparse_does() -> None:
    """argparse matches a prefix against every option string: SGLang's `--nccl-init` is
    `--nccl-init-addr`, an alias of `--dist-init-addr` (an error "unknown flag" before)."""
    command = f"{SGLANG}, --nccl-init, 'leader:5000'"
    assert _findings("lmsysorg/sglang:v0.5.23", command) == [
        (
            "WARNING",
            "unknown flag `--nccl-init` for sglang; did you mean `--dist-init-addr`? "
            "(argparse takes it as an abbreviation of `--dist-init-addr` today)",
        )
    ]


def test_a_prefix_of_an_option_and_of_its_alias_names_one_option() -> None:
    """Both spellings of one option match `--foo`: one option, expanded (argparse takes it so
    when every match is the same action); two options stay ambiguous."""
    from kvlint.deploy.flags import EngineSpec

    spec = EngineSpec("e", {}, {"foo-bar": "1"}, aliases={"--foo-bar-x": "foo-bar"}, abbrev=True)
    assert spec.expand_abbreviation("--foo") == "foo-bar"
    two = EngineSpec("e", {}, {"foo-bar": "1", "foo-baz": "1"}, abbrev=True)
    assert two.expand_abbreviation("--foo") is None
