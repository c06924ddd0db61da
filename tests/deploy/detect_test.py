"""Engine detection by program, module, shell script or image; versions from image tags."""

from __future__ import annotations

import pytest

from kvlint.deploy.detect import image_engine
from kvlint.deploy.detect import version_from_image


@pytest.mark.parametrize(
    ("image", "engine", "version"),
    [
        ("vllm/vllm-openai:v0.11.0", "vllm", "0.11.0"),
        ("docker.io/vllm/vllm-openai:v0.10.0", "vllm", "0.10.0"),
        ("vllm/vllm-openai:latest", "vllm", None),
        ("lmcache/vllm-openai:v0.3.9post2", "vllm", None),  # LMCache's own version
        ("ghcr.io/llm-d/llm-d-cuda:v0.9.0", "vllm", None),
        ("lmsysorg/sglang:v0.5.4-cu126", "sglang", "0.5.4"),
        ("ghcr.io/ggml-org/llama.cpp:server-b4500", "llamacpp", "b4500"),
        ("ghcr.io/ggml-org/llama.cpp:server-cuda", "llamacpp", None),
        ("ghcr.io/huggingface/text-generation-inference:2.4.1", "tgi", "2.4.1"),
        (
            "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/"
            "huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311",
            "tgi",
            "2.3",
        ),
        ("ollama/ollama:0.5.7", "ollama", "0.5.7"),
        ("vllm/vllm-openai@sha256:0123abcd", "vllm", None),
    ],
)
def test_version_from_image(image: str, engine: str, version: str | None) -> None:
    assert image_engine(image) == engine
    assert version_from_image(image, engine) == version


def test_unrelated_images() -> None:
    assert image_engine("nginx:1.27") is None
    assert image_engine("rayproject/ray-llm:2.52.0-py311-cu128") is None


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("aibrix/vllm-openai:v0.6.2-distributed", "0.6.2"),
        ("aibrix/vllm-openai:v0.7.3.self.post1", "0.7.3"),  # AIBrix's own build of 0.7.3
        # vLLM's four-part hot-fix releases and post releases
        ("vllm/vllm-openai:v0.9.0.1", "0.9.0.1"),
        ("vllm/vllm-openai:v0.10.1.1", "0.10.1.1"),
        ("vllm/vllm-openai:v0.8.5.post1", "0.8.5.post1"),
        ("vllm/vllm-openai:v0.11.0-x86_64", "0.11.0"),
        ("quay.io/opendatahub/vllm-openai-ubi9:v0.5.3.post1", "0.5.3.post1"),
        ("rocm/vllm:rocm6.4.1_vllm_0.9.1_20250702", "0.9.1"),
        ("rocm/vllm-dev:nightly_main_20250601", None),  # a nightly names no release
        ("lmsysorg/sglang:v0.4.6.post1-cu124", "0.4.6.post1"),
        ("lmsysorg/sglang:v0.5.2-cu126-gb200", "0.5.2"),
        ("lmsysorg/sglang:latest", None),
        ("quay.io/opendatahub/vllm-openai-ubi9:0.4.2", "0.4.2"),
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "0.8.5"),
        ("rocm/vllm:v0.6.4", "0.6.4"),
        # NGC's own YY.MM tags, mapped to the vLLM release the container ships
        ("nvcr.io/nvidia/vllm:25.10-py3", "0.10.2"),
        ("nvcr.io/nvidia/vllm:26.05-py3", "0.20.1"),
        # between two known months of one accounting line: the earlier release
        ("nvcr.io/nvidia/vllm:26.02-py3", "0.13.0"),
        # between months of different lines, or past the table: not known
        ("nvcr.io/nvidia/vllm:26.07-py3", None),
        ("nvcr.io/nvidia/vllm:24.01-py3", None),
        ("lmsysorg/sglang:v0.5.2-cu126", "0.5.2"),
        ("vllm/vllm-openai:latest", None),
    ],
)
def test_engine_version_from_every_tag_style(image: str, version: str | None) -> None:
    from kvlint.deploy.detect import version_from_image

    engine = "sglang" if "sglang" in image else "vllm"
    assert version_from_image(image, engine) == version
