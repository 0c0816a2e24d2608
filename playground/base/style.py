"""Visual constants for the playground's line and bar charts (TREx-style: plots.py holds no literals); the
stage's heatmap keeps its own (heatmap.js, stage.css).

Two themes: DEFAULT for the screen and documentation screenshots, PRESENTER for a projector
(bigger type, larger marks and thicker lines that survive a washed-out beamer).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Theme:
    # Type
    font_family: str = "Inter, 'Helvetica Neue', Arial, sans-serif"
    font_size: int = 13  # ticks, legend, hover
    title_size: int = 16  # figure title
    font_color: str = "#1f2328"

    # Geometry (px). A figure is laid out for figure_width.
    margin: dict = field(default_factory=lambda: dict(l=48, r=24, t=64, b=40))
    figure_width: int = 960

    # Line charts and bars
    curve_height: int = 380
    curve_color: str = "#1f77b4"
    mark_color: str = "#d62728"
    mark_size: int = 9
    mark_outline: str = "#ffffff"  # separates overlapping points
    legend_bg: str = "rgba(255,255,255,0.6)"
    line_width: float = 2.5
    axis_color: str = "#444444"  # the zero axes of the transfer curve
    grid_color: str = "rgba(128,128,128,0.18)"
    bar_color: str = "#76b900"  # NVIDIA green
    bar_row_px: int = 44


DEFAULT = Theme()

PRESENTER = Theme(
    font_size=18,
    title_size=24,
    font_color="#000000",
    margin=dict(l=64, r=32, t=84, b=56),
    figure_width=1280,
    curve_height=520,
    mark_size=14,
    line_width=4.0,
    axis_color="#000000",
    grid_color="rgba(0,0,0,0.25)",
    bar_row_px=64,
)


def theme(presenter: bool) -> Theme:
    return PRESENTER if presenter else DEFAULT
