"""Figure builders (TREx-style): pure functions that take arrays and return go.Figure objects: a layer's line and bar
charts (every tensor is drawn by the stage's heatmap.js).

No I/O and no Streamlit here; every visual constant comes from style.Theme. Output depends only on
the arguments (no randomness, explicit width/height/template), so screenshots are reproducible.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .numbers import compact
from .style import DEFAULT, Theme

GL_POINTS = 2000  # beyond this many markers SVG gets sluggish in the browser; use WebGL


def _scatter_type(n_points: int) -> str:
    return "scattergl" if n_points > GL_POINTS else "scatter"


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """The figure from plain trace and layout dicts, validated once: building it with trace objects and
    update_layout took about 4 times as long (plotly re-parses every property path)."""
    return go.Figure(dict(data=data, layout=layout))


TEMPLATE = "playground"


@functools.lru_cache(maxsize=1)
def _template() -> str:
    """plotly_white restricted to what these figures draw (cartesian axes; scatter and bar traces),
    registered by name: the same look, and new figures build in about half the time (plotly validates a
    template on every figure, and plotly_white covers every trace type)."""
    full = pio.templates["plotly_white"].to_plotly_json()
    pio.templates[TEMPLATE] = go.layout.Template(
        {
            "layout": {k: v for k, v in full["layout"].items() if k not in ("polar", "ternary", "scene", "geo")},
            "data": {k: v for k, v in full["data"].items() if k in ("scatter", "scattergl", "bar")},
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
