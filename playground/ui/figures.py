"""Figures and tables as every page draws them: tensors drawn read-only by the stage's own heatmap (`tensors`),
a line or bar chart with the figure's own colours and a PNG camera (`chart`), and a table handed to Streamlit as
Arrow (`table`)."""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from ..serve import assets, protocol

STILL = "playground_figures"
STILL_VALUES = protocol.INLINE_VALUES  # the values one row of figures carries in the page's message, at most
STILL_HEIGHT = {False: 420, True: 600}  # px a row of figures fits its cells in (presenter mode's larger)


@functools.cache
def _still_component():
    """Registered once per process (a second registration would replace it). Its sheet is the stage's for a root
    of its own class: snapshots and tests that look for the stage never find these."""
    from .stage import LOADER

    css = (assets.STAGE.here / "stage.css").read_text(encoding="utf-8").replace(".pg-stage", ".pg-still")
    return st.components.v2.component(
        STILL, js=LOADER, css=css + "\n.pg-still { display: block; }\n", isolate_styles=False
    )


def tensors(figures: list[tuple[str, str, np.ndarray]], key: str, presenter: bool = False) -> None:
    """Tensors under the stage (a layer's Details, the spec's documented output), drawn as the stage draws its own
    (still.js: heatmap.js and figures.js, one renderer and one colour rule on every page and in every mode), side by
    side. `figures`: (name, title, tensor), every one of one quantity (the spec's output beside the computed one,
    one output by three constructions): one colour range for all of them (protocol.joined), so that a value is one
    colour on each. A tensor of more values than its share of STILL_VALUES is drawn as its first planes."""
    budget = STILL_VALUES // max(len(figures), 1)
    drawn = []
    for name, title, a in figures:
        a = np.asarray(a, dtype=np.float32)
        planes = protocol.as_planes(a)
        keep = max(1, budget // max(planes[0].size if len(planes) else 1, 1))
        if keep < len(planes):
            title = f"{title}: its first {keep} of {len(planes)} planes"
            a = planes[:keep][None]
        t = protocol.tensor(a, page=(0, len(protocol.as_planes(a))))
        drawn.append({"which": name, "title": title, "tensor": t, "range": protocol.ranged(t)})
    one = protocol.joined(f["range"] for f in drawn)
    for f in drawn:
        f["range"] = one
    identity = hashlib.blake2b(
        repr([(f["which"], f["title"], f["tensor"]["id"]) for f in drawn]).encode() + bytes([presenter]),
        digest_size=8,
    ).hexdigest()
    data = protocol.inline({"figures": drawn})
    _still_component()(
        key=key,
        data={
            "key": identity,
            "modules": assets.urls(assets.STILL),
            "figures": data["figures"],
            "blob": data["blob"],
            "presenter": presenter,
            "height": STILL_HEIGHT[presenter],
        },
        width="stretch",
        height="content",
    )


# -- charts and tables ----------------------------------------------------------------------------------------
PLOT_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}  # crisp documentation screenshots


def chart(fig, key: str, filename: str | None = None, width: str = "content", **kwargs):
    """st.plotly_chart as every line and bar chart here is drawn: the figure's own template and colours
    (theme=None; Streamlit's would override them), and a toolbar camera that saves a PNG named `filename` (default:
    from the key)."""
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
