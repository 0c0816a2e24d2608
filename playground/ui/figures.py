"""Plotly figures and tables as every page draws them: a figure made once and never changed (`frozen`), a tensor's
heatmap kept across reruns and sessions (`tensor_figure`), a chart with the figure's own colours and a PNG camera
(`chart`), and a table handed to Streamlit as Arrow (`table`)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .. import plots
from ..shared import shared
from ..style import theme as theme_for


def frozen(fig: go.Figure) -> go.Figure:
    """`fig`, never changed again, with its dict made once: st.plotly_chart asks for a deep copy (to_dict)
    on every run, the largest part of drawing an unchanged chart again."""
    as_dict = fig.to_dict()
    fig.to_dict = lambda: as_dict  # an instance attribute: plotly allows it for names the figure has
    return fig


@shared(maxsize=96)
def tensor_figure(t, title: str, shared_scale: bool = True, presenter: bool = False):
    """plots.tensor_figure, cached across reruns and sessions; figures are never changed after this (and
    not copied: a revisit must not pay for unpickling a copy of every figure)."""
    fig, stats = plots.tensor_figure(t, title=title, shared_scale=shared_scale, theme=theme_for(presenter))
    return frozen(fig), stats


PLOT_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}  # crisp documentation screenshots


def chart(fig, key: str, filename: str | None = None, width: str = "content", **kwargs):
    """st.plotly_chart as every chart here is drawn: the figure's own template and colours (theme=None; Streamlit's
    would override them), and a toolbar camera that saves a PNG named `filename` (default: from the key)."""
    options = {**PLOT_CONFIG["toImageButtonOptions"], "filename": filename or key.replace(".", "_")}
    return st.plotly_chart(
        fig, theme=None, key=key, width=width, config={**PLOT_CONFIG, "toImageButtonOptions": options}, **kwargs
    )


def table(rows: list[dict], key: str, **kwargs):
    """st.dataframe of display rows, handed over as an Arrow table: Streamlit serialises that as is,
    where a pandas DataFrame costs it a conversion on every run (about 15× the time)."""
    import pyarrow as pa

    try:
        data = pa.Table.from_pylist(rows) if rows else pd.DataFrame()
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):  # a mixed column: pandas copes
        data = pd.DataFrame(rows)
    return st.dataframe(data, key=key, hide_index=True, **kwargs)
