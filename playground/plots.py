"""Figure builders (TREx-style): pure functions that take arrays and return go.Figure objects: a layer's line and bar
charts, and /chain's tensors until that page plays on the stage (every other tensor is drawn by heatmap.js).

No I/O and no Streamlit here; every visual constant comes from style.Theme. Output depends only on
the arguments (no randomness, explicit width/height/template), so screenshots are reproducible.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .colours import colour_range
from .numbers import compact, digits
from .style import DEFAULT, Theme

TEXT_CELL_LIMIT = 400  # numbers in cells cost ~1 s to draw at 128x128, so only small slices get them
MAX_DRAW_CELLS = 256 * 256  # per slice; larger slices are strided (factor reported in the stats)
# All slices of a figure together: no screen shows more, and 32 slices of 256×256 were a 27 MB figure sent
# on every change of a layer at the work budget's largest input.
MAX_FIGURE_CELLS = 512 * 512
MAX_COLS = 4  # slices per grid row
MAX_ASPECT = 8  # a 1x256 strip gets tall cells rather than a 3-px ribbon
GL_POINTS = 2000  # beyond this many markers SVG gets sluggish in the browser; use WebGL
_DIM_NAMES = {2: "hw", 3: "chw", 4: "nchw", 5: "ncdhw"}
_NONFINITE = ((3, "NaN", "nan_color"), (2, "+Inf", "posinf_color"), (1, "-Inf", "neginf_color"))


# ----------------------------------------------------------------------------- data helpers
def slices(t: np.ndarray) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """2-D (h, w) slices of a rank-2..5 tensor, labelled by the leading index ((), (c,), (n, c), (n, c, d))."""
    t = np.asarray(t)
    if t.ndim not in _DIM_NAMES:
        raise ValueError(f"expected a rank-2..5 tensor, got shape {t.shape}")
    return [(idx, t[idx]) for idx in np.ndindex(*t.shape[:-2])]


@dataclass(frozen=True)
class ColorRange:
    zmin: float
    zmax: float
    diverging: bool


def scale_of(r: Sequence[float] | None) -> ColorRange:
    """The scale a colour range is drawn on, by the stage's rule (heatmap.js `scaleFor`; both held to
    tests/fixtures/colour_rule.json): diverging and symmetric about 0 where the range crosses 0 (white is exactly
    0), else sequential from its low end; one value (a constant, all zeros, rounding noise) is the sequential
    scale's first colour. None (nothing finite): any range, nothing finite is drawn."""
    if r is None:
        return ColorRange(0.0, 1.0, False)
    lo, hi = float(r[0]), float(r[1])
    if lo < 0 < hi:
        a = max(-lo, hi)
        return ColorRange(-a, a, True)
    return ColorRange(lo, hi if hi > lo else lo + 1.0, False)


def color_range(arrays: Sequence[np.ndarray], shared: bool = True) -> list[ColorRange]:
    """One ColorRange per array, of colours.colour_range (the stage's: a spread of rounding noise is one value);
    all equal (of the arrays together) when shared."""
    if not shared:
        return [scale_of(colour_range(a)) for a in arrays]
    together = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays]) if arrays else np.zeros(0)
    return [scale_of(colour_range(together))] * len(arrays)


# A cell's number: six significant digits, as the stage's cells where they fit (its cells here grow to fit them).
CELL_DIGITS = 6
_cell_arr = np.frompyfunc(lambda v: digits(v, CELL_DIGITS), 1, 1)


def decimation_factor(h: int, w: int, slices: int = 1) -> int:
    """Smallest stride f with ceil(h/f) * ceil(w/f) <= the cells one of `slices` slices may draw."""
    limit = min(MAX_DRAW_CELLS, max(1, MAX_FIGURE_CELLS // max(slices, 1)))
    f = max(1, math.ceil(math.sqrt(h * w / limit)))
    while -(-h // f) * -(-w // f) > limit:
        f += 1
    return f


def _nonfinite_codes(a: np.ndarray, f: int) -> np.ndarray:
    """Per drawn cell: 3 NaN, 2 +Inf, 1 -Inf, 0 finite. Takes the max over each f x f block, so a
    single NaN never disappears from view when the slice is strided."""
    code = np.select([np.isnan(a), a == np.inf, a == -np.inf], [3, 2, 1], 0).astype(np.int8)
    if f > 1:
        h, w = code.shape
        code = np.pad(code, ((0, -h % f), (0, -w % f)))
        code = code.reshape(code.shape[0] // f, f, code.shape[1] // f, f).max(axis=(1, 3))
    return code


def _scatter_type(n_points: int) -> str:
    return "scattergl" if n_points > GL_POINTS else "scatter"


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """The figure from plain trace and layout dicts, validated once: building it with make_subplots, trace
    objects and update_layout took about 4 times as long (plotly re-parses every property path)."""
    return go.Figure(dict(data=data, layout=layout))


def _subplots(
    rows: int, cols: int, hspace: float, vspace: float, titles: Sequence[str] | None, title_size: float
) -> tuple[dict, list[dict]]:
    """make_subplots' grid as plain layout dicts: axes x/y, x2/y2, ... row by row from the top left, each
    anchored to its partner, and the subplot titles as annotations above each panel."""
    w, h = (1 - hspace * (cols - 1)) / cols, (1 - vspace * (rows - 1)) / rows
    axes, notes = {}, []
    for i in range(rows * cols):
        r, c = divmod(i, cols)
        ref = "" if i == 0 else str(i + 1)
        x0, y1 = c * (w + hspace), 1 - r * (h + vspace)
        axes[f"xaxis{ref}"] = dict(anchor=f"y{ref}", domain=[x0, min(1.0, x0 + w)])  # min/max: rounding
        axes[f"yaxis{ref}"] = dict(anchor=f"x{ref}", domain=[max(0.0, y1 - h), y1])
        if titles is not None and i < len(titles):
            notes.append(
                dict(
                    font=dict(size=title_size),
                    showarrow=False,
                    text=titles[i],
                    x=x0 + w / 2,
                    xanchor="center",
                    xref="paper",
                    y=y1,
                    yanchor="bottom",
                    yref="paper",
                )
            )
    return axes, notes


TEMPLATE = "playground"


@functools.lru_cache(maxsize=1)
def _template() -> str:
    """plotly_white restricted to what these figures draw (cartesian axes; heatmap, scatter and bar traces),
    registered by name: the same look, and new figures build in about half the time (plotly validates a
    template on every figure, and plotly_white covers every trace type)."""
    full = pio.templates["plotly_white"].to_plotly_json()
    pio.templates[TEMPLATE] = go.layout.Template(
        {
            "layout": {k: v for k, v in full["layout"].items() if k not in ("polar", "ternary", "scene", "geo")},
            "data": {k: v for k, v in full["data"].items() if k in ("heatmap", "scatter", "scattergl", "bar")},
        }
    )
    return TEMPLATE


def _layout(th: Theme, title: str, width: float, height: float, margin: Mapping[str, float], **kw) -> dict:
    """Layout shared by every figure: fixed size and template, transparent, theme fonts."""
    return dict(
        title=dict(text=title, x=0, xref="paper", xanchor="left", font=dict(size=th.title_size)),
        width=round(width),
        height=round(height),
        margin={k: round(v) for k, v in margin.items()},
        template=_template(),  # fixed, so pio.templates.default elsewhere cannot change screenshots
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        hovermode="closest",
        font=dict(family=th.font_family, size=th.font_size, color=th.font_color),
        hoverlabel=dict(font=dict(family=th.font_family, size=th.font_size)),
        **kw,
    )


# ----------------------------------------------------------------------------- tensor heatmaps
@dataclass(frozen=True)
class _Grid:
    cols: int
    rows: int
    cell: float  # px per drawn cell
    panel_w: float
    panel_h: float
    square: bool  # False for long strips, which get stretched cells instead of a ribbon
    text: bool  # numbers written in the cells


def _grid(
    n: int, per_row: int, h: int, w: int, th: Theme, own_cbar: bool, label_chars: int = 0, max_h: float | None = None
) -> _Grid:
    """Columns and cell size so the grid fits th.figure_width (and max_h, the figure's height, where given).
    Numbers go in the cells only for small slices that fit at a legible cell size; without max_h, columns (not
    legibility) are dropped when needed, with it the cells are as large as the box allows and carry numbers only
    if those fit. A cell is at least as wide as its longest label where numbers are drawn."""
    th = replace(th, text_cell_px=max(th.text_cell_px, math.ceil(label_chars * th.cell_text_size * 0.62 + 8)))
    cbar = th.colorbar_room_px if own_cbar else 0
    room = th.figure_width - th.margin["l"] - th.margin["r"] - (0 if own_cbar else th.colorbar_room_px)
    fit = lambda c: (room - (c - 1) * th.gap_px - c * cbar) / (c * w)  # noqa: E731  px per cell at c columns
    small = h * w <= TEXT_CELL_LIMIT
    if max_h is not None:
        sub = th.subtitle_size * 1.6 if n > 1 or per_row > 1 else 0
        fit_h = lambda r: (max_h - th.margin["t"] - th.margin["b"] - sub - (r - 1) * (th.gap_px + sub)) / (r * h)  # noqa: E731
        size = lambda c: min(fit(c), fit_h(math.ceil(n / c)), 2 * th.cell_px)  # noqa: E731
        cols = max(range(1, n + 1), key=lambda c: (size(c), -c))
        cell = max(size(cols), 1.0)
        text = small and cell >= th.text_cell_px
    else:
        text = small and max(h, w) * th.text_cell_px <= room - cbar
        cols = min(MAX_COLS, per_row, n)
        while text and cols > 1 and fit(cols) < th.text_cell_px:
            cols -= 1
        cell = min(th.cell_px, fit(cols), th.max_panel_px / max(h, w))
        if text:
            cell = max(cell, th.text_cell_px)
    pw, ph = cell * w, cell * h
    square = max(pw, ph) <= MAX_ASPECT * min(pw, ph)
    if not square:
        pw, ph = max(pw, ph / MAX_ASPECT), max(ph, pw / MAX_ASPECT)
    return _Grid(cols, math.ceil(n / cols), cell, pw, ph, square, text)


@dataclass(frozen=True)
class _TensorLayout:
    """What a tensor's Plotly heatmap draws and where, in px."""

    th: Theme
    a: np.ndarray  # the tensor as float64
    sl: list  # its 2-D slices (plots.slices)
    f: int  # decimation stride
    ys: np.ndarray  # drawn rows and columns (real indices)
    xs: np.ndarray
    own_cbar: bool  # one colour bar per slice (scales not shared)
    g: _Grid
    ranges: list  # ColorRange per slice
    labels: list  # "n=0, c=1" per slice
    counts: np.ndarray  # cells per non-finite code (0 finite, 1 -Inf, 2 +Inf, 3 NaN)
    hgap: float
    vgap: float
    plot_w: float  # the panels' grid
    plot_h: float
    margin: dict  # around the grid: title, slice labels, colour bar, legend
    stats: dict


def _tensor_layout(
    t: np.ndarray, shared_scale: bool, theme: Theme, zrange: ColorRange | None, box: tuple[int, int] | None
) -> _TensorLayout:
    th = (
        theme
        if box is None
        else replace(
            theme,
            figure_width=box[0],
            min_figure_width=min(theme.min_figure_width, box[0]),
            margin=theme.stage_margin,
            colorbar_room_px=theme.stage_colorbar_room_px,
        )
    )
    a = np.asarray(t, dtype=np.float64)
    sl = slices(a)
    H, W = a.shape[-2:]
    f = decimation_factor(H, W, len(sl))
    ys, xs = np.arange(0, H, f), np.arange(0, W, f)  # drawn cells keep their real indices
    own_cbar = not shared_scale and len(sl) > 1
    small = a.size <= TEXT_CELL_LIMIT * len(sl)
    longest = max((len(digits(float(v), CELL_DIGITS)) for v in a.ravel()), default=0) if small else 0
    g = _grid(
        len(sl),
        a.shape[-3] if a.ndim > 2 else 1,
        len(ys),
        len(xs),
        th,
        own_cbar,
        longest,
        None if box is None else box[1],
    )
    ranges = [zrange] * len(sl) if zrange is not None else color_range([s for _, s in sl], shared=shared_scale)
    labels = [", ".join(f"{k}={i}" for k, i in zip(_DIM_NAMES[a.ndim], idx)) for idx, _ in sl]
    # Pixel geometry: each panel exactly panel_w x panel_h.
    sub_px = th.subtitle_size * 1.6 if a.ndim > 2 else 0
    hgap = th.gap_px + (th.colorbar_room_px if own_cbar else 0)
    vgap = th.gap_px + sub_px
    plot_w = g.cols * g.panel_w + (g.cols - 1) * hgap
    plot_h = g.rows * g.panel_h + (g.rows - 1) * vgap
    counts = np.bincount(_nonfinite_codes(a, 1).ravel(), minlength=4)
    margin = dict(th.margin)
    margin["t"] += sub_px
    margin["b"] += th.font_size * 2.2 if counts[1:].any() else 0  # the legend of non-finite colours
    margin["r"] += th.colorbar_room_px  # the (shared or last column's) colourbar sits in the right margin
    # Widen a tiny figure on the right only, so the panels keep exactly their computed size.
    margin["r"] += max(0, th.min_figure_width - plot_w - margin["l"] - margin["r"])
    finite = a[np.isfinite(a)]
    stats = {
        "shape": tuple(a.shape),
        "nan": int(counts[3]),
        "posinf": int(counts[2]),
        "neginf": int(counts[1]),
        "decimated": f,
        "text_in_cells": g.text,
        **(
            {"zmin": float(finite.min()), "zmax": float(finite.max()), "mean": float(finite.mean())}
            if finite.size
            else {"zmin": None, "zmax": None, "mean": None}
        ),
    }
    return _TensorLayout(
        th, a, sl, f, ys, xs, own_cbar, g, ranges, labels, counts, hgap, vgap, plot_w, plot_h, margin, stats
    )


def tensor_figure(
    t: np.ndarray,
    *,
    title: str,
    shared_scale: bool = True,
    theme: Theme = DEFAULT,
    zrange: ColorRange | None = None,
    box: tuple[int, int] | None = None,
) -> tuple[go.Figure, dict]:
    """Grid of heatmaps, one per 2-D slice (index i = position in slices(t)), plus the stats the UI prints: /chain's
    tensors until that page plays on the stage; every other page draws its tensors with the stage's heatmap
    (heatmap.js).

    zrange: the colour range of every slice (one scale shared with other tensors), else from the data.
    box: (width, height) in px the whole figure must fit, else laid out for th.figure_width.
    Stats: shape, nan, posinf, neginf (whole tensor), decimated (stride, 1 = none), text_in_cells,
    zmin/zmax/mean (of the finite values, None if none)."""
    L = _tensor_layout(t, shared_scale, theme, zrange, box)
    th, a, sl, f, ys, xs, own_cbar, g, ranges, labels = (
        L.th,
        L.a,
        L.sl,
        L.f,
        L.ys,
        L.xs,
        L.own_cbar,
        L.g,
        L.ranges,
        L.labels,
    )
    H, W = a.shape[-2:]
    hgap, vgap, plot_w, plot_h = L.hgap, L.vgap, L.plot_w, L.plot_h
    axes, titles = _subplots(
        g.rows,
        g.cols,
        hgap / plot_w if g.cols > 1 else 0,
        vgap / plot_h if g.rows > 1 else 0,
        labels if a.ndim > 2 else None,
        th.subtitle_size,
    )

    counts = L.counts
    cell_text = dict(texttemplate="%{text}", textfont=dict(size=th.cell_text_size)) if g.text else {}
    traces = []
    for i, ((_, s), r, label) in enumerate(zip(sl, ranges, labels)):
        ref = "" if i == 0 else str(i + 1)
        on = dict(xaxis=f"x{ref}", yaxis=f"y{ref}")
        tip = f"{label + ', ' if label else ''}h=%{{y}}, w=%{{x}}<br>value = %{{VALUE}}<extra></extra>"

        def hover(value: str) -> dict:
            return dict(hovertemplate=tip.replace("VALUE", value))

        drawn = s[::f, ::f]
        ok = np.isfinite(drawn)
        xd, yd = axes[f"xaxis{ref}"]["domain"], axes[f"yaxis{ref}"]["domain"]
        cbar = (
            dict(x=xd[1] + 6 / plot_w, y=sum(yd) / 2, len=yd[1] - yd[0])
            if own_cbar
            else dict(x=1 + 10 / plot_w, y=0.5, len=1.0)
        )
        traces.append(
            dict(
                type="heatmap",
                z=np.where(ok, drawn, np.nan),  # Inf would reach plotly.js raw and take an end colour
                x=xs,
                y=ys,
                zmin=r.zmin,
                zmax=r.zmax,
                name=label or "values",
                colorscale=th.diverging if r.diverging else th.sequential,
                showscale=own_cbar or i == 0,
                colorbar=dict(
                    **cbar,
                    xanchor="left",
                    yanchor="middle",
                    lenmode="fraction",
                    outlinewidth=0,
                    thickness=th.colorbar_px,
                    tickfont=dict(size=th.font_size - 1),
                ),
                **(dict(text=np.where(ok, _cell_arr(drawn), "").astype(str)) if g.text else {}),
                hoverongaps=False,
                **hover("z:.7~g"),  # seven significant digits, trailing zeros dropped: as the stage hovers a value
                **cell_text,
                **on,
            )
        )
        code = _nonfinite_codes(s, f)
        if code.any():  # a heatmap leaves NaN transparent: paint non-finite cells on top, own colours
            tags = np.array(["", "-Inf", "+Inf", "NaN"], dtype=object)[code] + (f" in {f}×{f} block" if f > 1 else "")
            traces.append(
                dict(
                    type="heatmap",
                    z=np.where(code > 0, code, np.nan),
                    x=xs,
                    y=ys,
                    zmin=1,
                    zmax=3,
                    showscale=False,
                    colorscale=[[0, th.neginf_color], [0.5, th.posinf_color], [1, th.nan_color]],
                    name=f"non-finite {label}".strip(),
                    text=np.where(code > 0, tags, "").astype(str),
                    hoverongaps=False,
                    **hover("text"),
                    **cell_text,
                    **on,
                )
            )
        # Matrix orientation (row 0 on top), square cells; the domain shrinks rather than the range
        # growing, so a stretched container never shows empty axis around the tensor.
        # Explicit ranges: exactly the cells.
        axes[f"xaxis{ref}"].update(
            constrain="domain",
            constraintoward="right" if own_cbar else "center",
            range=[-0.5, W - 0.5],
            autorange=False,
        )
        axes[f"yaxis{ref}"].update(
            range=[H - 0.5, -0.5],
            autorange=False,
            constrain="domain",
            constraintoward="top",
            **(dict(scaleanchor=f"x{ref}", scaleratio=1) if g.square else {}),
        )
    tick = dict(
        showgrid=False,
        zeroline=False,
        ticks="",
        tickfont=dict(size=th.font_size - 1),
        **(dict(dtick=1) if max(H, W) <= 16 else {}),
    )  # every index on small tensors
    for i in range(len(sl), g.rows * g.cols):  # empty cells of the last row
        axes[f"xaxis{i + 1}"]["visible"] = axes[f"yaxis{i + 1}"]["visible"] = False
    for axis in axes.values():
        axis.update(tick)

    # Legend entries explaining the non-finite colours, with counts, for the kinds present.
    legend = [
        dict(
            type="scatter",
            x=[None],
            y=[None],
            mode="markers",
            name=f"{tag}: {counts[c]}",
            marker=dict(symbol="square", size=th.font_size, color=getattr(th, attr)),
        )
        for c, tag, attr in _NONFINITE
        if counts[c]
    ]
    margin = L.margin
    layout = _layout(
        th,
        title,
        plot_w + margin["l"] + margin["r"],
        plot_h + margin["t"] + margin["b"],
        margin,
        showlegend=bool(legend),
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left"),
        **axes,
        **(dict(annotations=titles) if titles else {}),
    )
    return _figure(traces + legend, layout), L.stats


# ----------------------------------------------------------------------------- line and bar charts
def _finite_or_nan(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64).ravel()
    return np.where(np.isfinite(v), v, np.nan)  # plotly skips NaN; Inf would reach plotly.js raw


def transfer_curve_figure(xs, ys, *, marks_x=None, marks_y=None, title: str, theme: Theme = DEFAULT) -> go.Figure:
    """y = f(x) as a line, the tensor's input values as points on it, both axes drawn through 0."""
    th = theme
    hover = "x = %{x:.6g}<br>f(x) = %{y:.6g}<extra></extra>"
    data = [
        dict(
            type="scatter",
            x=_finite_or_nan(xs),
            y=_finite_or_nan(ys),
            mode="lines",
            name="f(x)",
            line=dict(color=th.curve_color, width=th.line_width),
            hovertemplate=hover,
        )
    ]
    if marks_x is not None:
        mx, my = _finite_or_nan(marks_x), _finite_or_nan(marks_y)
        data.append(
            dict(
                type=_scatter_type(mx.size),
                x=mx,
                y=my,
                mode="markers",
                name="tensor values",
                hovertemplate=hover,
                marker=dict(color=th.mark_color, size=th.mark_size, line=dict(width=1, color=th.mark_outline)),
            )
        )
    # rangemode="tozero" keeps 0 in view so the zero lines act as the x and y axes.
    axis = dict(
        zeroline=True,
        zerolinecolor=th.axis_color,
        zerolinewidth=1.5,
        showline=False,
        rangemode="tozero",
        gridcolor=th.grid_color,
        ticks="",
        tickfont=dict(size=th.font_size - 1),
    )
    return _figure(
        data,
        _layout(
            th,
            title,
            th.curve_height * 1.6,
            th.curve_height,
            th.margin,
            showlegend=marks_x is not None,
            legend=dict(x=0.01, y=0.99, xanchor="left", yanchor="top", bgcolor=th.legend_bg),
            xaxis=dict(axis, title=dict(text="x")),
            yaxis=dict(axis, title=dict(text="f(x)")),
        ),
    )


def comparison_bar_figure(
    labels: Sequence[str], values: Sequence[float], *, title: str, unit: str, theme: Theme = DEFAULT
) -> go.Figure:
    """Horizontal bars (long construction names stay readable), first label on top, value printed
    at the bar end; a missing/NaN value shows 'n/a' instead of a misleading zero-length bar."""
    th = theme
    v = _finite_or_nan(values)
    text = [f"{compact(x)} {unit}" if np.isfinite(x) else "n/a" for x in v]
    top = float(np.nanmax(v)) if np.isfinite(v).any() else 0.0
    bar = dict(
        type="bar",
        y=list(labels),
        x=np.nan_to_num(v),
        orientation="h",
        text=text,
        textposition="outside",
        cliponaxis=False,
        marker=dict(color=th.bar_color),
        hovertemplate=f"%{{y}}: %{{x:.6g}} {unit}<extra></extra>",
    )
    margin = dict(th.margin, r=th.margin["r"] + 8 * th.font_size)  # room for the outside labels
    return _figure(
        [bar],
        _layout(
            th,
            title,
            th.figure_width * 0.7,
            len(v) * th.bar_row_px + margin["t"] + margin["b"],
            margin,
            bargap=0.3,
            xaxis=dict(title=dict(text=unit), range=[0, (top or 1.0) * 1.05], gridcolor=th.grid_color, zeroline=False),
            yaxis=dict(autorange="reversed", automargin=True, ticks=""),
        ),
    )
