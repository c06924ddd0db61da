"""The chart drawn as text and as SVG, from a hand-made series and from a real plan."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kvlint.arith.parallel import Layout
from kvlint.gpus import lookup_gpu
from kvlint.model.catalog import lookup
from kvlint.solve.curve import POINTS
from kvlint.solve.curve import kv_chart
from kvlint.solve.plot import Chart
from kvlint.solve.plot import Series
from kvlint.solve.plot import format_tokens_short
from kvlint.solve.plot import render_svg
from kvlint.solve.plot import render_text
from kvlint.units import GiB
from testing.builders import settled

SVG = "{http://www.w3.org/2000/svg}"

LINE = Series("per sequence", ((0.0, 0.0), (100.0, 10.0 * GiB)), "*")
POOL = Series("pool", ((0.0, 8.0 * GiB),), "=", "#d62728")
CHART = Chart("a chart", "context (tokens)", "bytes", (LINE, POOL), marker_x=50.0)


def test_format_tokens_short() -> None:
    assert format_tokens_short(131_072) == "128K"
    assert format_tokens_short(128_000) == "128k"
    assert format_tokens_short(1_500) == "1.5k"
    assert format_tokens_short(0) == "0"


def test_text_chart_layout() -> None:
    text = render_text(CHART, width=20, height=5)
    lines = text.splitlines()
    # title, 5 plot rows, the axis, tick labels, the axis label, one legend line per series
    assert len(lines) == 1 + 5 + 1 + 1 + 1 + 2
    assert lines[0] == "a chart"
    plot = lines[1:6]
    assert plot[0].startswith("10.8 GiB ┤")  # the top is 8% above the largest value
    assert plot[-1].startswith("     0 B ┤*")  # the curve starts at the origin
    # The pool line (8 GiB of 10.8) sits on row 1 and runs the width wherever the curve is not.
    assert plot[1].count("=") >= 15
    assert plot[0].rstrip().endswith("*")  # the curve ends at the top right
    assert lines[-2:] == ["  * per sequence", "  = pool"]
    assert "|" in "".join(plot)  # the target context marker


def test_svg_is_well_formed_and_draws_every_series() -> None:
    root = ET.fromstring(render_svg(CHART))
    assert root.tag == f"{SVG}svg"
    polylines = root.findall(f"{SVG}polyline")
    assert len(polylines) == 1
    assert len(polylines[0].attrib["points"].split()) == 2
    colors = {line.attrib.get("stroke") for line in root.findall(f"{SVG}line")}
    assert "#d62728" in colors  # the pool
    texts = [t.text for t in root.findall(f"{SVG}text")]
    assert "a chart" in texts and "pool" in texts and "per sequence" in texts
    assert root.find(f"{SVG}title") is not None


def test_svg_escapes_text() -> None:
    chart = Chart("<model> & co", "x", "y", (LINE,))
    assert "&lt;model&gt; &amp; co" in render_svg(chart)
    ET.fromstring(render_svg(chart))


def test_kv_chart_of_a_real_plan() -> None:
    spec = lookup("meta-llama/Meta-Llama-3.1-70B")
    gpu = lookup_gpu("H100-80GB")
    assert spec is not None and gpu is not None
    deployment = settled("vllm", spec=spec, gpu=gpu)
    chart = kv_chart(deployment, layout=Layout(8), context=32_000, concurrency=4, limit=131_072)
    curve, pool, share = chart.series
    assert len(curve.points) == POINTS + 1
    # At 64,000 tokens (twice the target), one sequence on one TP 8 GPU: 4,000 blocks of 16
    # tokens at 40 KiB a token.
    assert curve.points[-1] == (64_000.0, float(4_000 * 16 * 40 * 1024))
    assert share.points[0][1] == pool.points[0][1] / 4
    assert chart.marker_x == 32_000


def test_svg_y_ticks_are_round_binary_units() -> None:
    chart = Chart("c", "x", "y", (Series("s", ((0.0, 0.0), (1.0, 50.8 * GiB))),))
    labels = [t.text for t in ET.fromstring(render_svg(chart)).findall(f"{SVG}text")]
    # The top is 8% above 50.8 GiB (54.86 GiB): ticks every 10 GiB.
    assert [label for label in labels if label and label.endswith(("GiB", " B"))] == [
        "0 B",
        "10 GiB",
        "20 GiB",
        "30 GiB",
        "40 GiB",
        "50 GiB",
    ]
