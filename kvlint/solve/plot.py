"""A chart (``kvlint.solve.chart``) drawn two ways without a plotting library: terminal text and
SVG. Imported only for the output that draws it: ``solve --format json`` never loads it."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from html import escape as html_escape

from kvlint.solve.chart import Chart


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities (what ``xml.sax.saxutils.escape`` does, without its
    import of urllib, http.client and ssl: 25 ms of every ``kvlint solve``)."""
    return html_escape(text, quote=False)


def format_tokens_short(n: float) -> str:
    """131072 -> '128K', 128000 -> '128k', 1500 -> '1.5k' (K = 1,024 and k = 1,000, as
    vLLM's human-readable ints read them)."""
    value = round(n)
    if value >= 1000 and value % 1000 == 0:
        return f"{value // 1000}k"
    if value >= 1024 and value % 1024 == 0:
        return f"{value // 1024}K"
    if value >= 1000:
        return f"{value / 1000:.4g}k"
    return str(value)


def _bounds(chart: Chart) -> tuple[float, float, float]:
    xs = [x for s in chart.series if not s.horizontal for x, _ in s.points]
    ys = [y for s in chart.series for _, y in s.points]
    x_max = max(xs, default=1.0) or 1.0
    y_max = max(ys, default=1.0) or 1.0
    return 0.0, x_max, y_max * 1.08


def _at(points: tuple[tuple[float, float], ...], x: float) -> float:
    """Linear interpolation of a curve at ``x`` (points ascending in x)."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x <= x1:
            if x1 == x0:
                return y1
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def render_text(
    chart: Chart,
    *,
    width: int = 56,
    height: int = 12,
    y_format: Callable[[float], str] | None = None,
    x_format: Callable[[float], str] = format_tokens_short,
) -> str:
    """The chart as plain lines of text: a y axis with three labels, the curves as their
    marks, horizontal lines drawn across, a legend below, then each labelled point."""
    y_format = y_format or chart.y_text
    x_min, x_max, y_max = _bounds(chart)
    grid = [[" "] * width for _ in range(height)]

    def row_of(y: float) -> int:
        return height - 1 - min(height - 1, max(0, round(y / y_max * (height - 1))))

    for series in chart.series:
        if series.horizontal:
            row = row_of(series.points[0][1])
            for col in range(width):
                if grid[row][col] == " ":
                    grid[row][col] = series.mark
            continue
    for series in chart.series:
        if series.horizontal:
            continue
        for col in range(width):
            x = x_min + (x_max - x_min) * col / (width - 1)
            grid[row_of(_at(series.points, x))][col] = series.mark
    if chart.marker_x is not None and x_max > 0:
        col = min(width - 1, round(chart.marker_x / x_max * (width - 1)))
        for row in range(height):
            if grid[row][col] == " ":
                grid[row][col] = "|"
    labels = {0: y_format(y_max), height // 2: y_format(y_max / 2), height - 1: y_format(0)}
    pad = max(len(text) for text in labels.values())
    lines = [chart.title]
    for row in range(height):
        lines.append(f"{labels.get(row, ''):>{pad}} ┤{''.join(grid[row])}")
    lines.append(" " * pad + " └" + "─" * width)
    left, middle, right = x_format(0), x_format(x_max / 2), x_format(x_max)
    axis = [" "] * width
    placed = ((left, 0), (middle, width // 2 - len(middle) // 2), (right, width - len(right)))
    for text, col in placed:
        for i, char in enumerate(text):
            if 0 <= col + i < width:
                axis[col + i] = char
    lines.append(" " * (pad + 2) + "".join(axis))
    lines.append(" " * (pad + 2) + chart.x_label)
    lines.extend(f"  {s.mark} {s.label}" for s in chart.series)
    if chart.marker_x is not None and chart.marker_label:
        lines.append(f"  | {chart.marker_label}")
    lines.extend(f"  o {label}" for _, _, label in chart.annotations)
    return "\n".join(lines)


def _nice_ticks(top: float, count: int = 6, *, binary: bool = True) -> list[float]:
    """Round ticks from 0 to ``top``: 1, 2, 2.5 or 5 times a power of ten (of the largest
    binary unit below ``top`` for bytes, so they tick at 10 GiB, not at 10.74 GB)."""
    if top <= 0:
        return [0.0]
    unit = 1.0
    while binary and top / unit >= 1024:
        unit *= 1024
    raw = top / unit / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    ticks = [0.0]
    while (ticks[-1] + step) * unit <= top * 1.0001:
        ticks.append(ticks[-1] + step)
    return [tick * unit for tick in ticks]


def render_svg(
    chart: Chart,
    *,
    width: int = 800,
    height: int = 400,
    y_format: Callable[[float], str] | None = None,
    x_format: Callable[[float], str] = format_tokens_short,
) -> str:
    """The chart as a standalone SVG document (no scripts, no external references): every
    line labelled at its right end and in the legend, each annotation a dot with its text."""
    y_format = y_format or chart.y_text
    # The right margin holds each line's name at its end: about 6.5 px a character at 11 px
    # sans-serif; past 150 px the picture widens rather than cut the widest name at its edge.
    names = max((len(series.label) for series in chart.series), default=0)
    left, right, top, bottom = 84, max(20, 14 + math.ceil(6.5 * names)), 36, 64
    width += max(0, right - 150)
    plot_w, plot_h = width - left - right, height - top - bottom
    _, x_max, y_max = _bounds(chart)

    def sx(x: float) -> float:
        return left + plot_w * (x / x_max if x_max else 0)

    def sy(y: float) -> float:
        return top + plot_h * (1 - (y / y_max if y_max else 0))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(chart.title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20" font-size="13">{escape(chart.title)}</text>',
    ]
    for tick in _nice_ticks(y_max, binary=chart.y_format is None):
        y = sy(tick)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e5e5e5"/>'
        )
        label = escape(y_format(tick))
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
    x_ticks = [x_max * i / 4 for i in range(5)]
    for tick in x_ticks:
        x = sx(tick)
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
            f"{escape(x_format(tick))}</text>"
        )
    out.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="black"/>'
    )
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="black"/>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 28}" text-anchor="middle">'
        f"{escape(chart.x_label)}</text>"
    )
    out.append(
        f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {top + plot_h / 2:.1f})">{escape(chart.y_label)}</text>'
    )
    if chart.marker_x is not None:
        x = sx(chart.marker_x)
        out.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#999" '
            'stroke-dasharray="2 3"/>'
        )
        if chart.marker_label:  # named at its top, on the side with more room
            anchor, dx = ("end", -4.0) if x > left + plot_w * 0.6 else ("start", 4.0)
            out.append(
                f'<text x="{x + dx:.1f}" y="{top + 10}" text-anchor="{anchor}" fill="#666">'
                f"{escape(chart.marker_label)}</text>"
            )
    for series in chart.series:
        dash = ' stroke-dasharray="6 4"' if series.dashed else ""
        if series.horizontal:
            y = sy(series.points[0][1])
            out.append(
                f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                f'stroke="{series.color}" stroke-width="2"{dash}/>'
            )
            continue
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in series.points)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{series.color}" '
            f'stroke-width="2"{dash}/>'
        )
    for series in chart.series:  # each line named at its right end, in its colour
        end_y = sy(series.points[-1][1] if not series.horizontal else series.points[0][1])
        out.append(
            f'<text x="{left + plot_w + 6}" y="{end_y + 4:.1f}" fill="{series.color}">'
            f"{escape(series.label)}</text>"
        )
    for x, y, label in chart.annotations:
        px, py = sx(x), sy(y)
        # The curve falls to the right: above-right of a point, or below-left of one near
        # the right edge, is clear of it. Where that would cross the x axis (or the title),
        # the text goes to the other side of the point.
        if px > left + plot_w * 0.6:
            anchor, dx, dy = "end", -8.0, 18.0
        else:
            anchor, dx, dy = "start", 8.0, -8.0
        if py + dy > top + plot_h - 3:
            dy = -8.0
        elif py + dy - 11 < top:
            dy = 18.0
        out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="black"/>')
        out.append(
            f'<text x="{px + dx:.1f}" y="{py + dy:.1f}" text-anchor="{anchor}" '
            f'font-weight="bold">{escape(label)}</text>'
        )
    legend_x = left
    for series in chart.series:
        dash = ' stroke-dasharray="6 4"' if series.dashed else ""
        y = height - 10
        out.append(
            f'<line x1="{legend_x}" y1="{y - 4}" x2="{legend_x + 18}" y2="{y - 4}" '
            f'stroke="{series.color}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{legend_x + 22}" y="{y}">{escape(series.label)}</text>')
        legend_x += 40 + 7 * len(series.label)
    out.append("</svg>")
    return "\n".join(out) + "\n"
