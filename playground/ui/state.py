"""Widget keys, view options, and process-wide resources.

Key scheme (stable, derived from names, so links and presenter mode can address every control):

    "{layer}.input.{name}"       input controls: kind, 3d, N, C, D, H, W, low, high, seed, value, image
                                 (stage.protocol.input_key, which names the input too for a layer of several)
    "view.presenter"             presenter mode, shared by every page (stage.protocol.VIEW_PRESENTER)
    "{layer}.download.{what}"    download buttons (script, onnx, input/output .npy and .csv)
    "{layer}.tabs"               the tabs under the stage (of those only the open one is drawn)

The input controls and the presenter toggle hold state of their own and are bound to the page URL
(widgets.STATE, bind="query-params"): the query parameter is the widget key, spelled by stage.protocol as every
key a link holds is: `LAYER.PARAM[.AXIS]` (query_keys), `LAYER.compare`, `LAYER.cell.AXIS`, the input's, the
view's; ui.links checks all of them when a page opens.

Containers keyed "ctl.{layer}.{name}" wrap what `hide` can hide (Streamlit gives a keyed element the CSS
class `st-key-` + the key with every character outside [A-Za-z0-9_-] as "-": key_selector).
Keys starting with "_" are plain session state, not widgets.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .. import plots
from ..errors import PlaygroundError
from ..shared import backend, engine_cache, prefetcher, shared  # noqa: F401 - the pages reach them as state.*
from ..stage.protocol import VIEW_PRESENTER
from ..style import DEFAULT, Theme
from ..style import theme as theme_for


class PageState:
    """One layer page's private session state (not widgets, never in the URL), in one place: each slot is held
    under the key "_SLOT.LAYER"."""

    SLOTS = {
        "url_checked": "the URL was checked when the page first ran in this session",
        "url_problems": "link problems to show, until a control changes",
        "url_problems_seen": "the controls' values when the problems were first shown",
    }

    def __init__(self, layer: str):
        self.layer = layer

    def key(self, slot: str) -> str:
        if slot not in self.SLOTS:
            raise KeyError(f"{slot!r} is no page state slot; the slots are {', '.join(self.SLOTS)}")
        return f"_{slot}.{self.layer}"

    def get(self, slot: str, default=None):
        return st.session_state.get(self.key(slot), default)

    def set(self, slot: str, value) -> None:
        st.session_state[self.key(slot)] = value

    def pop(self, slot: str, default=None):
        return st.session_state.pop(self.key(slot), default)

    def setdefault(self, slot: str, value):
        return st.session_state.setdefault(self.key(slot), value)


# What markdown, HTML or Streamlit would act on in a message: code, emphasis, links and images, HTML,
# math, headings and tables always; underscores that could open or close emphasis (not inside a name like
# dilation_nd); a colon that could open a directive (:red[…], :material/…:) or a URL scheme (http:); the
# dot of a www. autolink. Ordinary prose keeps its characters, so messages stay readable as stored.
_ACTIVE = re.compile(r"[\\`*~|$<>\[\]#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=[A-Za-z/])|(?<=www)\.")


# Streamlit's markdown turns bare URLs, www. names and e-mail addresses into links after escapes are
# resolved, so those are broken with an invisible word joiner instead.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\\\.)|(?<=@)")


def inert(text) -> str:
    """Text for Streamlit's markdown that shows as typed: for anything a user supplied (a value quoted in an
    error, a link's text) and for messages that may quote one."""
    escaped = _ACTIVE.sub(lambda m: "\\" + m.group(0), str(text))
    return _AUTOLINK.sub("\u2060", escaped).replace("\n", "  \n")


def guarded(draw) -> None:
    """Run a page or a part of it; a bug shows as one error line, never as a traceback in front of a room."""
    try:
        draw()
    except PlaygroundError as exc:  # a setting or input whose message names the rule
        st.error(inert(exc), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - Streamlit's rerun/stop signals are BaseExceptions and pass through
        st.error(inert(f"Unexpected error ({type(exc).__name__}): {exc}"), icon=":material/error:")


@dataclass(frozen=True)
class ViewOptions:
    """How results are drawn; passed to every section under the stage (ui.extras)."""

    presenter: bool = False  # projector: large type, strong colours
    theme: Theme = DEFAULT  # style.theme(presenter)

    @staticmethod
    def of(presenter: bool) -> ViewOptions:
        return ViewOptions(bool(presenter), theme_for(bool(presenter)))


def frozen(fig: go.Figure) -> go.Figure:
    """`fig`, never changed again, with its dict made once: st.plotly_chart asks for a deep copy (to_dict)
    on every run, the largest part of drawing an unchanged chart again."""
    as_dict = fig.to_dict()
    fig.to_dict = lambda: as_dict  # an instance attribute: plotly allows it for names the figure has
    return fig


SPEC_TAB = "Spec example"  # the tab under the stage with the example's verdict, note and documented table


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


@shared()
def freeze_startup_objects() -> int:
    """Once per server, after its first page: move every object alive (TensorRT, NumPy, pandas, Plotly and
    their modules) out of the garbage collector's sight (gc.freeze). Python's own full collections then
    walk only what the app made since: about 25 ms each instead of 120 (bench/RESULTS.md)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def presenter_on() -> bool:
    """Presenter mode before the toggle is drawn (main.py, the home page): the toggle's value in this
    session, else what the link says (?view.presenter=true)."""
    value = st.session_state.get(VIEW_PRESENTER)
    if value is None:
        value = st.query_params.get(VIEW_PRESENTER, "").strip().lower() == "true"
        if value:  # carried to the toggle of the layer page opened next (home links carry no query)
            st.session_state[VIEW_PRESENTER] = True
    return bool(value)
