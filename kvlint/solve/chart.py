"""The chart's data: the curves, lines and labelled points ``kvlint solve`` draws and writes
into its JSON. Drawing them is ``kvlint.solve.plot``'s job, imported only when a chart is drawn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvlint.units import format_binary


@dataclass(frozen=True)
class Series:
    """A curve (``points`` ascending in x) or, with one point, a horizontal line at its y."""

    label: str
    points: tuple[tuple[float, float], ...]
    mark: str = "*"  # the terminal character
    color: str = "#1f77b4"  # the SVG stroke
    dashed: bool = False

    @property
    def horizontal(self) -> bool:
        return len(self.points) == 1


@dataclass(frozen=True)
class Chart:
    """A chart as data: its axes, series, marker and labelled points."""

    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    marker_x: float | None = None  # a vertical rule (the target context)
    marker_label: str | None = None  # its name, at its top and in the legend
    annotations: tuple[tuple[float, float, str], ...] = ()  # (x, y, label): a labelled point
    y_format: Callable[[float], str] | None = None  # how the y axis reads (None: bytes)

    def y_text(self, value: float) -> str:
        return self.y_format(value) if self.y_format is not None else format_binary(value)
