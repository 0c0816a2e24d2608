"""Visual constants for every figure in the playground (TREx-style: plots.py holds no literals).

Two themes: DEFAULT for the screen and documentation screenshots, PRESENTER for a projector
(bigger type and cells, saturated colours and thicker outlines that survive a washed-out beamer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Blue-white-red, centred on 0: the sign reads at a glance, and white = 0 is what people expect.
_RDBU = "RdBu_r"
# Stronger end points than RdBu for projectors, which flatten pale tints.
_RDBU_HC = ((0.0, "#08306b"), (0.25, "#2171b5"), (0.5, "#ffffff"), (0.75, "#cb181d"), (1.0, "#67000d"))


@dataclass(frozen=True)
class Theme:
    # Type
    font_family: str = "Inter, 'Helvetica Neue', Arial, sans-serif"
    font_size: int = 13  # ticks, legend, hover
    title_size: int = 16  # figure title
    subtitle_size: int = 13  # "n=0, c=1" over each slice
    cell_text_size: int = 11  # numbers written inside heatmap cells
    font_color: str = "#1f2328"

    # Colour scales. Diverging for signed data (symmetric range), sequential for one-signed data.
    diverging: str | tuple = _RDBU
    sequential: str | tuple = "Viridis"
    # Non-finite values: hues absent from both scales, so they cannot pass for a value.
    nan_color: str = "#9e9e9e"  # neutral grey = "no value"
    posinf_color: str = "#ff00ff"  # magenta
    neginf_color: str = "#00e5ff"  # cyan

    # Outlines: receptive-field window of a conv output cell, and the clicked cell.
    window_color: str = "#111111"
    selected_color: str = "#ff7f0e"
    outline_width: float = 2.0

    # Geometry (px). A figure is laid out for figure_width; cells stay square.
    margin: dict = field(default_factory=lambda: dict(l=48, r=24, t=64, b=40))
    figure_width: int = 960
    min_figure_width: int = 360  # keeps a long title from being clipped on tiny tensors
    cell_px: int = 44  # largest cell (tiny tensors); big ones shrink to fit
    text_cell_px: int = 40  # smallest cell that holds "-0.1235" at cell_text_size
    max_panel_px: int = 440  # longest side of one slice without text
    gap_px: int = 28  # between slices
    colorbar_px: int = 12  # colourbar thickness
    colorbar_room_px: int = 64  # thickness + tick labels
    # On the stage, where figures fit a box beside each other: tighter margins and colour bar room.
    stage_margin: dict = field(default_factory=lambda: dict(l=30, r=6, t=40, b=26))
    stage_colorbar_room_px: int = 52

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
    subtitle_size=18,
    cell_text_size=16,
    font_color="#000000",
    diverging=_RDBU_HC,
    sequential="Plasma",
    nan_color="#707070",
    posinf_color="#ff00ff",
    neginf_color="#00ffff",
    window_color="#000000",
    selected_color="#ff6600",
    outline_width=3.5,
    margin=dict(l=64, r=32, t=84, b=56),
    figure_width=1280,
    min_figure_width=480,
    cell_px=72,
    text_cell_px=60,
    max_panel_px=600,
    gap_px=40,
    colorbar_px=18,
    colorbar_room_px=90,
    stage_margin=dict(l=40, r=8, t=52, b=34),
    stage_colorbar_room_px=72,
    curve_height=520,
    mark_size=14,
    line_width=4.0,
    axis_color="#000000",
    grid_color="rgba(0,0,0,0.25)",
    bar_row_px=64,
)


def theme(presenter: bool) -> Theme:
    return PRESENTER if presenter else DEFAULT
