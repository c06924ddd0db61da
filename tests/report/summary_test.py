"""The Markdown job summary: a table per deployment and a Mermaid chart of its budget."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest

from kvlint.deployment import Sourced
from kvlint.finding import Severity
from kvlint.finding import Span
from kvlint.linter import DeploymentResult
from kvlint.report import summary as summary_module
from kvlint.report.summary import SummaryReporter
from kvlint.report.summary import context_points
from kvlint.report.summary import render_summary
from tests.report.records import KV301
from tests.report.records import result
from tests.report.records import sizing
from tests.report.records import summary
from tests.report.records import vllm_config

SECTION = """\
### `deploy.yaml`: `vllm config`

| model | engine | GPU | max_model_len | pool tokens | admitted sequences | max_num_seqs |
| --- | --- | --- | ---: | ---: | ---: | ---: |
{row}

KV per token 128 KiB; per sequence 4 GiB at 32,768 tokens; KV pool 60 GiB.

<details><summary>Sequences admitted by context length</summary>

```mermaid
%%{{init: {{"themeVariables": {{"xyChart": {{"plotColorPalette": "#1f77b4, #d62728"}}}}}}}}%%
xychart-beta
    title "Sequences admitted by context length (blue); red: max_num_seqs 256"
    x-axis "context length (tokens)" [512, 1024, 2048, 4096, 8192, 16384, 32768]
    y-axis "sequences" 0 --> 2000
    line [960.00, 480.00, 240.00, 120.00, 60.00, 30.00, 15.00]
    line [256, 256, 256, 256, 256, 256, 256]
```

`max_num_seqs` 256 fit up to 1,920 tokens each; at `max_model_len` 32,768 the pool admits 15.00.

</details>
""".format(
    row="| `meta-llama/Llama-3.1-8B-Instruct` | vllm 0.11 | `H100-SXM-80GB` | 32,768 | 491,520 "
    "| 15.00 | 256 |"
)


def test_summary_with_a_finding() -> None:
    stream = io.StringIO()
    reporter = SummaryReporter(stream)
    reporter.start()
    reporter.deployment(result())
    reporter.finding(KV301)
    reporter.finish(summary({"error": 1}))
    assert stream.getvalue() == (
        "## kvlint\n"
        "\n"
        "1 error in 1 file, 1 deployment.\n"
        "\n"
        "| location | code | severity | message |\n"
        "| --- | --- | --- | --- |\n"
        "| `deploy.yaml:3:15` | KV301 | error | `max_num_seqs` 256 sequences of 32,768 tokens "
        "need 1 TiB; the pool admits 15 |\n"
        "\n" + SECTION
    )


def test_the_pool_of_a_tensor_parallel_deployment_spans_its_gpus() -> None:
    # Two GPUs each with 60 GiB of KV memory: one model copy has 120 GiB.
    one = result()
    tp2 = replace(
        one,
        deployment=replace(one.deployment, tensor_parallel_size=Sourced(2, one.deployment.span)),
    )
    out = render_summary([tp2], [], summary({}))
    assert "KV pool 120 GiB (60 GiB per GPU x 2)." in out


def test_without_a_gpu_the_table_says_so_and_the_chart_has_no_pool() -> None:
    dep = vllm_config("plan.yaml", max_num_seqs=None)
    dep = replace(dep, gpu=None)
    out = render_summary([DeploymentResult(dep, sizing(with_engine=False))], [], summary({}))
    assert "| `meta-llama/Llama-3.1-8B-Instruct` | vllm | not named | 32,768 | ? | ? | ? |" in out
    assert "Not computed: the files do not give the GPU type." in out
    assert out.startswith("## kvlint\n\nNo findings in 1 file, 1 deployment.\n\n### `plan.yaml`")
    assert "```mermaid" not in out  # nothing admitted is known: no chart


def test_a_chart_only_for_a_deployment_with_findings() -> None:
    clean = result("clean.yaml", findings=())
    out = render_summary([clean], [], summary({}))
    assert "| 15.00 | 256 |" in out
    assert "<details>" not in out and "```mermaid" not in out


def test_the_crossing_sentence() -> None:
    from kvlint.report.figures import deployment_figures
    from kvlint.report.summary import crossing_text

    found = result()
    fig = deployment_figures(found)
    # 491,520 pool tokens: 256 sequences of 1,920 tokens, 15 of 32,768.
    assert crossing_text(found, fig) == (
        "`max_num_seqs` 256 fit up to 1,920 tokens each; at `max_model_len` 32,768 the pool "
        "admits 15.00."
    )
    assert crossing_text(found, fig._replace(requested=8)) == (
        "`max_num_seqs` 8 fit at every context up to `max_model_len` 32,768: the pool admits 15.00."
    )
    assert crossing_text(found, fig._replace(requested=10**6)) == (
        "`max_num_seqs` 1,000,000 do not fit at any context; at `max_model_len` 32,768 the pool "
        "admits 15.00."
    )


def test_the_admitted_column_has_one_shape() -> None:
    from kvlint.report.figures import deployment_figures
    from kvlint.report.summary import admitted_cell

    fig = deployment_figures(result())
    cases = (fig, fig._replace(fits=False), fig._replace(admitted=None))
    assert [admitted_cell(f) for f in cases] == ["15.00", "0.00", "?"]


def test_pipes_in_cells_are_escaped() -> None:
    finding = KV301._replace(message="a | b\nc")
    out = render_summary([], [finding], summary({"error": 1}, deployments=0))
    assert "| `deploy.yaml:3:15` | KV301 | error | a \\| b c |" in out


def test_context_points() -> None:
    assert context_points(32768) == [512, 1024, 2048, 4096, 8192, 16384, 32768]
    assert context_points(40960) == [640, 1280, 2560, 5120, 10240, 20480, 40960]
    assert context_points(3000) == [375, 750, 1500, 3000]  # stops at an odd length
    assert context_points(1) == [1]


def test_many_deployments_are_capped_with_the_ones_with_findings_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(summary_module, "MAX_SECTIONS", 2)
    clean = [result(f"clean{i}.yaml", findings=()) for i in range(3)]
    found = result("found.yaml")
    out = render_summary([*clean, found], [KV301], summary({"error": 1}, 4, 4))
    sections = re.findall(r"^### `(.*?)`", out, re.MULTILINE)
    assert sections == ["found.yaml", "clean0.yaml"]
    assert out.endswith("\nAnd 2 more deployments, not shown here.\n")


def test_paths_lose_their_dot_slash() -> None:
    finding = KV301._replace(span=KV301.span._replace(path="./deploy.yaml"))
    out = render_summary([result("./deploy.yaml")], [finding], summary({"error": 1}))
    assert "| `deploy.yaml:3:15` | KV301 |" in out
    assert "### `deploy.yaml`: `vllm config`" in out


def test_findings_go_errors_first_then_by_path() -> None:
    warning = KV301._replace(severity=Severity.WARNING, span=Span("a.yaml", 1, 1))
    error = KV301._replace(span=Span("b.yaml", 9, 1))
    info = KV301._replace(severity=Severity.INFO, span=Span("a.yaml", 2, 1))
    out = render_summary([], [info, warning, error], summary({"error": 1}, deployments=0))
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["b.yaml:9:1", "a.yaml:1:1", "a.yaml:2:1"]


def test_a_tensorrt_llm_band_and_borderline_verdict_reach_the_summary() -> None:
    # 70B FP8 weights on one H100 leave TensorRT-LLM a pool its band's low end does not hold:
    # the summary quotes the band on the pool line, as for vLLM (the verdict is the finding's).
    from testing.builders import catalog_model
    from testing.builders import deployment
    from testing.builders import sized

    dep = deployment("trtllm", gpu="H100-80GB", max_model_len=8192)
    sizing = sized(dep, catalog_model("nvidia/Llama-3.1-70B-Instruct-FP8"))
    engine = sizing.engine
    assert engine is not None and engine.verdict == "borderline"
    assert engine.available_kv_bytes_low is not None and engine.available_kv_bytes_high
    stream = io.StringIO()
    reporter = SummaryReporter(stream)
    reporter.start()
    reporter.deployment(DeploymentResult(dep, sizing, "catalog", "", (KV301,)))
    reporter.finding(KV301)
    reporter.finish(summary({"warning": 1}))
    text = stream.getvalue()
    low, high = engine.available_kv_bytes_low / 2**30, engine.available_kv_bytes_high / 2**30
    assert f"KV pool 8.2 GiB, 90% band {low:.2f}-{high:.2f} GiB." in text
