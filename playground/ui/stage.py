"""The stage: one screen per layer where the controls and the figures they change are seen together.

The browser reports its viewport (a tiny component, `viewport()`), and `layout()` turns it into pixel boxes:
the controls panel on the left (it scrolls within the screen when a layer has more controls than fit), the
figures on the right, each heatmap sized by `figure_rows` so that input, (kernel,) and output fit side by side
(or the output under the others) within the viewport's height. Until the browser has reported (the first run of a session, tests without a
browser) the smallest projector, 1280 × 720, is assumed: everything fits, only smaller.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from .keys import key_selector

DEFAULT_VIEWPORT = (1280, 720)
_VIEWPORT = "_viewport"  # plain session state: the last (main width, window height) the browser reported
HEADER_PX = 60  # Streamlit's top bar with the page navigation
# Vertical space the stage's own text takes, in CSS px at a 16 px root: the header row (title, spec example),
# the precision row and the shape line over the figures, the stats caption under them and the picked-cell line. Presenter mode's root
# is 20 px, so these grow by 1.25 there (and the title row is dropped).
TITLE_ROW_PX, SHAPE_ROW_PX, CAPTION_PX, CELL_ROW_PX, GAPS_PX = 44, 40, 44, 44, 48
PRECISION_ROW_PX = 84  # the precision, its scale and compare mode, over the figures (and the gap under them)
PADDING_X_PX = 24  # the main area's left and right padding (page CSS)
CONTROLS_PX = (300, 330)  # controls panel width: normal, presenter
MIN_FIGURES_PX = 480

# Reports the main area's width and the window's height when they differ from what the server knows (data) and
# from what it last sent: on mount, on window resize and when the sidebar opens or closes (a ResizeObserver on
# the main area). It also keeps them in a cookie, so a new session in the same browser starts with the right
# size (no second run). Where data names a control to focus (a spec example's parameter), it scrolls the
# controls panel to it.
_VIEWPORT_JS = """
export default function(component) {
  const { setStateValue, data } = component;
  const main = document.querySelector('[data-testid="stMain"]');
  if (data && data.focus) for (const ms of [300, 900, 1800]) setTimeout(() => {  // again, after late redraws
    const el = document.querySelector(data.focus);
    if (el) el.scrollIntoView({block: "nearest", inline: "nearest"});
  }, ms);
  let timer = null, sent = data ? [data.w, data.h] : [0, 0];
  const report = () => {
    const w = Math.round((main || document.documentElement).clientWidth), h = window.innerHeight;
    document.cookie = `__COOKIE__=${w}x${h}; path=/; max-age=31536000; SameSite=Lax`;
    if (Math.abs(sent[0] - w) > 8 || Math.abs(sent[1] - h) > 8) { sent = [w, h]; setStateValue("size", {w, h}); }
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(report, 200); };
  report();
  window.addEventListener("resize", later);
  const observer = main && window.ResizeObserver ? new ResizeObserver(later) : null;
  if (observer) observer.observe(main);
  return () => { clearTimeout(timer); window.removeEventListener("resize", later);
                 if (observer) observer.disconnect(); };
}
"""
COOKIE = "playground_viewport"
_VIEWPORT_JS = _VIEWPORT_JS.replace("__COOKIE__", COOKIE)
_component = None


def _viewport_component():
    global _component
    if _component is None:
        _component = st.components.v2.component("playground_viewport", js=_VIEWPORT_JS)
    return _component


def viewport() -> tuple[int, int]:
    """(main area width, window height) in CSS px, as the browser last reported them."""
    known = st.session_state.get(_VIEWPORT) or _from_cookie() or DEFAULT_VIEWPORT
    focus = st.session_state.pop(_FOCUS, None)
    with st.container(key="viewport-probe", height=1):  # nothing to see: CSS keeps it out of the layout
        result = _viewport_component()(key="viewport", data={"w": known[0], "h": known[1], "focus": focus},
                                       on_size_change=lambda: None)
    size = getattr(result, "size", None)
    if isinstance(size, dict) and all(isinstance(size.get(k), (int, float)) for k in ("w", "h")):
        known = _clamped(size["w"], size["h"])
    st.session_state[_VIEWPORT] = known
    return known


def _clamped(w: float, h: float) -> tuple[int, int]:
    return int(min(max(w, 320), 8192)), int(min(max(h, 240), 8192))


def _from_cookie() -> tuple[int, int] | None:
    """The size this browser reported in an earlier session (a cookie the probe writes), if it reads as one."""
    try:
        w, h = str(st.context.cookies.get(COOKIE, "")).split("x")
        return _clamped(int(w), int(h))
    except (ValueError, TypeError, AttributeError):
        return None


_FOCUS = "_viewport.focus"  # plain session state: a control the next page run scrolls into view


def focus(container_key: str) -> None:
    """Scroll the control in the keyed container into view on the next full page run (a spec example was just
    applied, which always runs the whole page)."""
    st.session_state[_FOCUS] = key_selector(container_key)


@dataclass(frozen=True)
class Layout:
    controls_w: int  # the controls panel
    controls_h: int
    figures_w: int  # the figure column
    figure_h: int  # the height every heatmap fits in


def layout(main_w: int, window_h: int, presenter: bool, cell_row: bool) -> Layout:
    """Pixel boxes of the stage for a main area main_w wide in a window window_h high."""
    grow = 1.25 if presenter else 1.0
    title = 0 if presenter else TITLE_ROW_PX
    inner_w = max(main_w - 2 * PADDING_X_PX, 600)
    controls_w = CONTROLS_PX[presenter]
    figures_w = max(inner_w - controls_w - 24, MIN_FIGURES_PX)
    top = HEADER_PX + 12 + title * grow
    controls_h = max(window_h - top - 40, 240)  # 40: the block gap above it, and a margin at the bottom
    text = (PRECISION_ROW_PX + SHAPE_ROW_PX + CAPTION_PX + (CELL_ROW_PX if cell_row else 0)) * grow + GAPS_PX
    figure_h = max(int(window_h - top - text), 160)
    return Layout(int(controls_w), int(controls_h), int(figures_w), figure_h)


def slices_across(t: np.ndarray) -> int:
    """Slices a heatmap lays out side by side (at most 4 a row, as plots.tensor_figure does)."""
    return min(int(np.prod(t.shape[:-2])) if t.ndim > 2 else 1, 4)


def _extent(t: np.ndarray) -> tuple[int, int]:
    """Cells a heatmap lays out across and down: W × slices per row (at most 4), H × rows of slices."""
    slices = int(np.prod(t.shape[:-2])) if t.ndim > 2 else 1
    across = min(slices, 4)
    return t.shape[-1] * across, t.shape[-2] * -(-slices // across)


def _row_cell(extents: list[tuple[int, int]], overheads: list[int], width: float, height: float, gap: int,
              v_overhead: int) -> float:
    across = sum(e[0] for e in extents)
    room_w = width - gap * (len(extents) - 1) - sum(overheads)
    return min(room_w / max(across, 1), (height - v_overhead) / max(max(e[1] for e in extents), 1))


def figure_rows(tensors: list[np.ndarray], width: int, height: int, gap: int = 16, overhead: int | list[int] = 92,
                v_overhead: int = 110, caption: int = 48) -> list[list[tuple[int, tuple[int, int]]]]:
    """Arrange heatmaps in one row, or (where that gives larger cells) in two: the first ones over the rest (the
    output, or compare mode's outputs and their difference, under the input). Within a row each figure gets its fixed overhead (axes, colour bars, gaps between its
    slices: one number for all, or one per figure) and a share of the rest in proportion to the cells it lays
    out across, so cells come out about the same size in every figure.
    Returns rows of (tensor index, (box width, box height))."""
    ext = [_extent(t) for t in tensors]
    over = list(overhead) if isinstance(overhead, (list, tuple)) else [overhead] * len(tensors)
    n = len(tensors)
    arrangements = [[list(range(n))]] + [[list(range(k)), list(range(k, n))] for k in range(n - 1, 0, -1)]

    def cell(rows):
        h = (height - caption * (len(rows) - 1)) / len(rows)
        return min(_row_cell([ext[i] for i in row], [over[i] for i in row], width, h, gap, v_overhead)
                   for row in rows)

    best = max(arrangements, key=cell)
    row_h = int((height - caption * (len(best) - 1)) / len(best))
    out = []
    for row in best:
        room = max(width - gap * (len(row) - 1) - sum(over[i] for i in row), 60 * len(row))
        total = float(sum(ext[i][0] for i in row)) or 1.0
        out.append([(i, (int(over[i] + room * ext[i][0] / total), row_h)) for i in row])
    return out
