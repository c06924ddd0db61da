"""The chart drawn as text and as SVG, from a hand-made series and from a real plan."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kvlint.arith.parallel import Layout
from kvlint.engines import account
from kvlint.solve.capacity import admitted_at
from kvlint.solve.capacity import max_model_len_at
from kvlint.solve.capacity import max_num_seqs_at
from kvlint.solve.chart import Chart
from kvlint.solve.chart import Series
from kvlint.solve.curve import POINTS
from kvlint.solve.curve import kv_chart
from kvlint.solve.plot import format_tokens_short
from kvlint.solve.plot import render_svg
from kvlint.solve.plot import render_text
from kvlint.solve.variants import placed
from kvlint.units import GiB
from testing.builders import catalog_gpu
from testing.builders import catalog_model
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
    """Llama 3.1 70B on 8 H100s, 16 sequences at 32,000 tokens: the curve is the engine's own
    admitted count at each length, the requested 16 a line, the crossing labelled."""
    spec, gpu = catalog_model("meta-llama/Meta-Llama-3.1-70B"), catalog_gpu("H100-80GB")
    deployment = settled("vllm", spec=spec, gpu=gpu)
    chart = kv_chart(deployment, layout=Layout(8), context=32_000, concurrency=16, limit=131_072)
    curve, requested = chart.series
    xs = [x for x, _ in curve.points]
    assert xs == sorted(set(xs))
    assert POINTS + 1 <= len(xs) <= POINTS + 4  # the grid, the crossing, the step, the target
    assert requested.horizontal and requested.points[0][1] == 16.0
    assert (curve.label, requested.label) == ("sequences vLLM admits", "requested: 16")
    base = placed(deployment, Layout(8))

    def admitted(length: int) -> int:
        return admitted_at(base, length, account)[0]

    for x, y in curve.points:  # each point is the engine's count at that length
        assert y == admitted(int(x))
    assert [y for _, y in curve.points] == sorted((y for _, y in curve.points), reverse=True)
    (cross_x, cross_y, cross_label), (target_x, target_y, target_label) = chart.annotations
    longest = int(cross_x)
    assert longest == max_model_len_at(base, concurrency=16, limit=131_072).max_model_len
    assert cross_y == 16.0 and admitted(longest) >= 16 > admitted(longest + 1)
    # The labelled points are drawn exactly, so each dot sits on the curve.
    assert {float(longest), float(longest + 1), 32_000.0} <= set(xs)
    assert cross_label == f"16 sequences fit up to {longest:,} tokens"
    assert (target_x, target_y) == (32_000.0, admitted(32_000))
    assert target_label == f"{admitted(32_000)} sequences at 32,000 tokens"
    # The x range holds the target and the crossing; the y axis is sequences, not bytes.
    assert curve.points[0][0] <= min(32_000, longest) and curve.points[-1][0] >= longest
    assert chart.marker_x == 32_000 and chart.y_text(12.0) == "12"
    assert chart.marker_label == "target: 32,000 tokens"
    assert "  | target: 32,000 tokens" in render_text(chart).splitlines()
    svg = render_svg(chart)
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    assert cross_label in texts and target_label in texts and "target: 32,000 tokens" in texts
    assert texts.count("requested: 16") == 2  # at the line's end and in the legend
    # 4 sequences fit at every length the model takes: the label says so at the right edge.
    few = kv_chart(deployment, layout=Layout(8), context=32_000, concurrency=4, limit=131_072)
    assert few.annotations[0] == (
        131_072.0,
        4.0,
        "4 sequences fit up to 131,072 tokens, the model's limit",
    )
    # Not one sequence on a single GPU (the weights alone overflow it): said, not drawn as 0.
    none = kv_chart(deployment, layout=Layout(1), context=32_000, concurrency=1, limit=131_072)
    assert none.annotations[0][2] == "1 sequence never fits"
    assert none.annotations[1][2] == "0 sequences at 32,000 tokens"


def test_kv_chart_counts_slots_where_the_context_spans_them() -> None:
    """llama.cpp's -c is every slot's cells together: the chart counts the slots of each length
    that fit (the count the plan's max_num_seqs answer gives), not -c / length."""
    spec, gpu = catalog_model("meta-llama/Llama-3.1-8B-Instruct"), catalog_gpu("L4")
    deployment = settled("llamacpp", spec=spec, gpu=gpu, max_num_seqs=4)
    chart = kv_chart(deployment, layout=Layout(1), context=8_192, concurrency=4, limit=131_072)
    curve, _ = chart.series
    assert curve.label == "sequences llama.cpp admits"
    base = placed(deployment, Layout(1))
    for x, y in curve.points:
        assert y == admitted_at(base, int(x), account)[0]
    assert chart.annotations[1] == (
        8_192.0,
        float(max_num_seqs_at(base, max_model_len=8_192).max_num_seqs),
        chart.annotations[1][2],
    )
    assert chart.annotations[1][1] > 4  # an L4 holds more than four 8k slots of an 8B model


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


def _svg_texts(svg: str) -> dict[str, ET.Element]:
    return {t.text or "": t for t in ET.fromstring(svg).iter(f"{SVG}text")}


def test_svg_names_every_line_inside_the_picture() -> None:
    """A long name at a line's end widens the picture instead of running off its edge."""
    name = "max_concurrent_requests: 64 (from the file)"
    chart = Chart("c", "x", "y", (LINE, Series(name, ((0.0, 4.0 * GiB),), "-", "#d62728")))
    root = ET.fromstring(render_svg(chart))
    # The name at the line's end is drawn in the line's colour (the legend's is black).
    end = next(t for t in root.iter(f"{SVG}text") if t.get("fill") == "#d62728")
    assert end.text == name
    assert float(end.attrib["x"]) + 6.5 * len(name) <= float(root.attrib["width"])
    short = ET.fromstring(render_svg(CHART))
    assert short.attrib["width"] == "800"  # short names: the default size


def test_svg_point_labels_stay_inside_the_plot() -> None:
    """A labelled point on the x axis (none admitted at the target) has its text above the
    axis, not over the tick labels; one at the top has it below the title."""
    curve = Series("s", ((0.0, 100.0), (50.0, 0.0), (100.0, 0.0)))
    notes = ((80.0, 0.0, "0 sequences at 80 tokens"), (1.0, 100.0, "100 sequences fit up to 1"))
    chart = Chart("c", "x", "y", (curve,), annotations=notes, y_format=str)
    texts = _svg_texts(render_svg(chart, height=400))
    top, axis = 36, 400 - 64  # the plot's top and its x axis
    for label in ("0 sequences at 80 tokens", "100 sequences fit up to 1"):
        y = float(texts[label].attrib["y"])
        assert top + 11 <= y <= axis - 2, (label, y)
