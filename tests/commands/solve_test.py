"""``kvlint solve`` end to end: JSON numbers, the text tables, the SVG, bad input."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.shared import DEPLOYMENTS_REAL
from testing.shared import requires_shared
from testing.shared import shared_file

LLAMA = "meta-llama/Meta-Llama-3.1-70B"
TARGET = ["--gpu", "H100-80GB", "--context", "128k", "--concurrency", "32"]


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    # Module-scoped (capsys is per test): one solve serves every JSON test.
    import contextlib
    import io

    from kvlint.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["solve", LLAMA, *TARGET, "--format", "json"])
    assert code == 0
    data: dict[str, object] = json.loads(out.getvalue())
    return data


def test_json_answers(report: dict[str, object]) -> None:
    assert report["model"] == LLAMA
    assert report["target"] == {"context": 128_000, "concurrency": 32}
    assert report["engine"] == {"name": "vllm", "version": "0.33.0"}
    assert report["model_max_len"] == 131_072
    # The seed's figures: 320 KiB a token, 41.94 GB a 128K sequence, 1,342 GB for 32 of them.
    assert report["first_principles"] == {
        "per_token_bytes": 2 * 80 * 8 * 128 * 2,
        "per_sequence_bytes": 327_680 * 128_000,
        "target_bytes": 32 * 327_680 * 128_000,
    }
    assert 32 * 327_680 * 128_000 == 1_342_177_280_000
    gpus = report["gpus"]
    assert isinstance(gpus, dict)
    assert gpus["gpus"] == 24
    assert gpus["layout"] == {"tp": 8, "pp": 3, "dp": 1, "gpus": 24}
    # Without --tp, the per-layout answers are for the smallest layout holding one sequence.
    layout = report["layout"]
    assert isinstance(layout, dict)
    assert (layout["tp"], layout["pp"]) == (4, 1)
    seqs = report["max_num_seqs"]
    assert isinstance(seqs, dict)
    estimate = seqs["estimate"]
    assert isinstance(estimate, dict)
    # Admitted at 128,000 on TP 4: 80 KiB a token per GPU, blocks of 16, the null block kept.
    blocks = estimate["available_kv_bytes"] // (16 * 80 * 1024)
    assert seqs["value"] == (blocks - 1) // 8000


def test_json_levers_and_engines(report: dict[str, object]) -> None:
    levers = report["levers"]
    assert isinstance(levers, list)
    by_setting = {(row["group"], row["setting"]): row for row in levers}
    assert by_setting[("cache dtype", "fp8")]["gpus"] == 16
    assert by_setting[("cache dtype", "auto")]["gpus"] == 24
    assert by_setting[("cache dtype", "nvfp4")]["offered"] is False
    engines = report["engines"]
    assert isinstance(engines, list)
    assert [row["label"] for row in engines][:2] == ["vLLM (current)", "vLLM 0.11"]
    chart = report["chart"]
    assert isinstance(chart, dict)
    assert [s["label"] for s in chart["series"]] == [
        "sequences vLLM admits",
        "requested: 32",
    ]


def test_text_output_and_svg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "kv.svg"
    result = run_cli(["solve", LLAMA, *TARGET, "--tp", "8", "--plot", str(svg)], capsys)
    assert result.code == 0, result.err
    assert "24 (TP 8 x PP 3)" in result.out
    for title in ("Answers", "Layouts (one replica)", "Levers for 32 x 128,000", "Engines on TP 8"):
        assert title in result.out
    assert "on TP 8 (as asked)" in result.out
    # The chart's crossing is the answer the plan gives (32 sequences up to ~41,800 tokens; the
    # figure moves with the fitted memory constants, so it is read from the answers).
    answer = re.search(r"max_model_len for 32 sequences on TP 8\s+([\d,]+)", result.out)
    assert answer is not None
    length = answer.group(1)
    assert 40_000 <= int(length.replace(",", "")) <= 44_000
    assert f"  o 32 sequences fit up to {length} tokens" in result.out
    assert "TP 16 and beyond replicate the 8 KV heads: a token costs 40 KiB per GPU" in " ".join(
        result.out.split()
    )
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert f"32 sequences fit up to {length} tokens" in texts
    assert texts.count("requested: 32") == 2 and texts.count("sequences vLLM admits") == 2


def test_unknown_gpu_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["solve", LLAMA, "--gpu", "H900"], capsys)
    assert result.code == 2
    assert "unknown GPU 'H900'" in result.err
    assert "Traceback" not in result.err


def test_no_gpu_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["solve", LLAMA], capsys)
    assert result.code == 2
    assert "no GPU named; pass --gpu" in result.err


def test_bad_context_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["solve", LLAMA, "--gpu", "H100", "--context", "lots"], capsys)
    assert result.code == 2
    assert "expected an integer such as 8192, 32k or 128K" in result.err


def test_unwritable_plot_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "kv.svg"
    result = run_cli(
        [
            "solve",
            "meta-llama/Meta-Llama-3.1-8B",
            "--gpu",
            "L4",
            "--context",
            "8k",
            "--plot",
            str(target),
        ],
        capsys,
    )
    assert result.code == 2
    assert "cannot write the chart" in result.err


def test_a_deployment_file_is_solved_with_its_own_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "vllm.yaml"
    config.write_text(
        "model: meta-llama/Meta-Llama-3.1-8B\n"
        "max-model-len: 32k\n"
        "max-num-seqs: 64\n"
        "tensor-parallel-size: 4\n",
        encoding="utf-8",
    )
    result = run_cli(["solve", str(config), "--gpu", "L4", "--format", "json"], capsys)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    # The file's max-model-len and max-num-seqs are the target; its TP the layout.
    assert data["target"] == {"context": 32_000, "concurrency": 64}
    assert (data["layout"]["tp"], data["layout"]["reason"]) == (4, "the deployment's own")
    estimate = data["max_num_seqs"]["estimate"]
    # 32 layers x 2 KV heads a GPU (8 over TP 4) x 128 x K and V x 2 bytes = 32 KiB a token.
    assert estimate["bytes_per_token"] == 32 * 1024
    blocks = estimate["available_kv_bytes"] // (16 * 32 * 1024)
    assert data["max_num_seqs"]["value"] == (blocks - 1) // 2_000


def test_a_layout_the_engine_refuses_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["solve", LLAMA, "--gpu", "H100", "--tp", "3"], capsys)
    assert result.code == 2
    assert result.err == (
        "kvlint: meta-llama/Meta-Llama-3.1-70B: vllm refuses TP 3: "
        "64 attention heads do not divide by TP 3\n"
    )


def test_deployments_that_cannot_be_solved_are_skipped_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(
        "services:\n"
        "  small:\n"
        "    image: vllm/vllm-openai:v0.11.0\n"
        "    command: --model meta-llama/Meta-Llama-3.1-8B --max-model-len 8192\n"
        "  other:\n"
        "    image: vllm/vllm-openai:v0.11.0\n"
        "    command: --model no-such-org/no-such-model --max-model-len 8192\n",
        encoding="utf-8",
    )
    result = run_cli(
        ["solve", str(compose), "--gpu", "L4", "--offline", "--format", "json"], capsys
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["model"] == "meta-llama/Meta-Llama-3.1-8B"
    assert data["engine"] == {"name": "vllm", "version": "0.11.0"}  # the image tag's version
    assert "kvlint: skipped" in result.err and "services.other" in result.err


@requires_shared
def test_a_real_manifest_gemma3_on_a100(capsys: pytest.CaptureFixture[str]) -> None:
    name = (
        "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__"
        "vllm-3-27b-it.yaml"
    )
    path = shared_file(DEPLOYMENTS_REAL / name)
    result = run_cli(["solve", str(path), "--offline", "--format", "json"], capsys)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    # From the manifest: the node selector's A100 80GB, --max-model-len 32768, --max-num-seqs 4,
    # no tensor parallelism.
    assert data["gpu"]["name"] == "A100-SXM-80GB"
    assert data["target"] == {"context": 32_768, "concurrency": 4}
    assert (data["layout"]["tp"], data["layout"]["reason"]) == (1, "the deployment's own")
    estimate = data["max_num_seqs"]["estimate"]
    # Gemma 3 is hybrid (sliding layers): a request takes blocks in every KV group.
    assert data["max_num_seqs"]["value"] == (
        (estimate["num_blocks"] - 1) // estimate["blocks_per_request"]
    )
    assert data["gpus"]["gpus"] == 1
