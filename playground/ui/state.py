"""Widget keys, view options, the last good result per layer, and process-wide resources.

Key scheme (stable, derived from names, so URL binding, presets and presenter mode can address
every control):

    "{layer}.{param}"            the widget holding a parameter's value (for arrays: its text,
                                 a preset name or comma-separated numbers)
    "{layer}.{param}.{axis}"     per-axis ints, axis in d/h/w
    "{layer}.{param}.set"        the override checkbox of an optional per-axis param
    "{layer}.{param}.preset"     an array's preset selectbox; derived from the value
    "{layer}.{param}.{i}"        an array's per-value editors; derived from the value
    "{layer}.{param}.table"      an array's table editor; derived from the value
    "{layer}.input.{name}"       input controls: kind, 3d, N, C, D, H, W, low, high, seed, value, image
    "{layer}.view.shared_scale"  one colour scale for input and output (its default differs by layer)
    "view.presenter"             presenter mode, shared by every page

    "{layer}.preset"             the "Spec example" selectbox; derived: the spec preset the current
                                 configuration equals, if any (choosing one writes every control)
    "{layer}.download.{what}"    download buttons (script, input.npy, input.csv, output.npy, output.csv)
    "{layer}.figure.{which}"     the input, output and spec heatmaps (the convolution's output one is
                                 clickable: a click picks the cell its section explains)

Only the first, "{layer}.{param}.{axis}", ".set", "{layer}.input.*" (except image) and the two
view toggles hold state of their own; the derived ones are rewritten from it on every run.

Those state-holding widgets, and only they, are bound to the page URL (widgets.STATE,
bind="query-params"): the query parameter is the widget key, e.g.
`/convolution?convolution.stride_nd.h=2&view.presenter=true`; a value equal to its default is
left out. Two more query parameters are not widgets (ui.links): `preset=NAME` applies a spec
example once, `hide=a,b` hides controls by name.

Containers keyed "ctl.{layer}.{name}" wrap what `hide` can hide (Streamlit gives a keyed
element the CSS class `st-key-` + the key with every character outside [A-Za-z0-9_-] as "-":
key_selector).
Keys starting with "_" are plain session state, not widgets.
"""
from __future__ import annotations

import gc
import re
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..errors import PlaygroundError
from ..shared import backend, engine_cache, prefetcher, shared  # noqa: F401 - the pages reach them as state.*
from .. import plots
from ..style import DEFAULT, Theme, theme as theme_for
from .keys import VIEW_PRESENTER, key



class PageState:
    """One layer page's private session state (not widgets, never in the URL), in one place: each slot is held
    under the key "_SLOT.LAYER"."""
    SLOTS = {
        "last_good": "the last Evaluation that validated: what the page shows while a change is invalid",
        "last_raw": "the parameters of the last evaluation, to tell which one moved (the prefetcher's hint)",
        "url_checked": "the URL was checked when the page first ran in this session",
        "url_problems": "link problems to show, until a control changes",
        "url_problems_seen": "the controls' values when the problems were first shown",
        "url_preset": "{name: the ?preset= applied, drawn: its widgets were drawn}",
        "preset_chosen": "the example last chosen (link or picker)",
        "preset_chosen_now": "set by the picker's callback, taken by the next run",
        "picked": "(evaluation, index, input cells read, Cell) of the picked output cell, computed once per run",
        "cell_drawn": "the picked cell the stage line last drew (play waits for it)",
        "cell_stepped_at": "when play last stepped (time.monotonic)",
        "controls_plan": "what each parameter's control last drew (widgets.controls_plan): a change redraws "
                         "those it changes",
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
    except Exception as exc:  # Streamlit's rerun/stop signals are BaseExceptions and pass through
        st.error(inert(f"Unexpected error ({type(exc).__name__}): {exc}"), icon=":material/error:")


@dataclass(frozen=True)
class ViewOptions:
    """How results are drawn; passed to every section under the main output (ui.extras)."""
    shared_scale: bool = True  # one colour scale for input and output, else one per heatmap
    presenter: bool = False  # projector: large type, strong colours
    theme: Theme = DEFAULT  # style.theme(presenter)
    instrument: bool = False  # the stage as one component answered by the server's route (playground.stage)

    @staticmethod
    def of(shared_scale: bool, presenter: bool, instrument: bool = False) -> "ViewOptions":
        return ViewOptions(bool(shared_scale), bool(presenter), theme_for(bool(presenter)), bool(instrument))


def frozen(fig: go.Figure) -> go.Figure:
    """`fig`, never changed again, with its dict made once: st.plotly_chart asks for a deep copy (to_dict)
    on every run, the largest part of drawing an unchanged chart again."""
    as_dict = fig.to_dict()
    fig.to_dict = lambda: as_dict  # an instance attribute: plotly allows it for names the figure has
    return fig


BELOW_STAGE = ("Explanation", "Spec example", "Engine", "Downloads")  # the tabs under the stage, in order
SPEC_TAB = BELOW_STAGE[1]  # the spec example's: its note, lesson and verdict


def open_tab(layer: str, title: str) -> None:
    """Open a tab under the stage (of those only the open one is drawn) before the tabs are drawn."""
    st.session_state[key(layer, "tabs")] = title


@shared(maxsize=96)
def tensor_figure(t, title: str, shared_scale: bool = True, presenter: bool = False):
    """plots.tensor_figure, cached across reruns and sessions; figures are never changed after this (and
    not copied: a revisit must not pay for unpickling a copy of every figure)."""
    fig, stats = plots.tensor_figure(t, title=title, shared_scale=shared_scale, theme=theme_for(presenter))
    return frozen(fig), stats


@shared(maxsize=96)
def tensor_heatmap(t, title: str, shared_scale: bool = True, presenter: bool = False,
                   zrange: plots.ColorRange | None = None, highlight: dict | None = None, selected: tuple | None = None,
                   clickable: bool = False, box: tuple | None = None, meta: dict | None = None):
    """plots.tensor_heatmap (the stage's canvas), cached across reruns and sessions like tensor_figure."""
    return plots.tensor_heatmap(t, title=title, shared_scale=shared_scale, theme=theme_for(presenter),
                                highlight=highlight, selected=selected, clickable=clickable, zrange=zrange, box=box,
                                meta=meta)


PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"],
               "toImageButtonOptions": {"format": "png", "scale": 2}}  # crisp documentation screenshots


def chart(fig, key: str, filename: str | None = None, width: str = "content", **kwargs):
    """st.plotly_chart as every chart here is drawn: the figure's own template and colours (theme=None; Streamlit's
    would override them), and a toolbar camera that saves a PNG named `filename` (default: from the key)."""
    options = {**PLOT_CONFIG["toImageButtonOptions"], "filename": filename or key.replace(".", "_")}
    return st.plotly_chart(fig, theme=None, key=key, width=width, config={**PLOT_CONFIG, "toImageButtonOptions": options},
                           **kwargs)


def badge(label: str, color: str, icon: str) -> str:
    """Markdown for a badge as st.badge writes it, so that a line of text and badges is one element."""
    escaped = label.replace("[", "\\[").replace("]", "\\]")
    return f":{color}-badge[:material/{icon}: {escaped}]"


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
    """Presenter mode before the toggle is drawn (app.py, the home page): the toggle's value in this
    session, else what the link says (?view.presenter=true)."""
    value = st.session_state.get(VIEW_PRESENTER)
    if value is None:
        value = st.query_params.get(VIEW_PRESENTER, "").strip().lower() == "true"
        if value:  # carried to the toggle of the layer page opened next (home links carry no query)
            st.session_state[VIEW_PRESENTER] = True
    return bool(value)


def last_good(layer: str):
    return PageState(layer).get("last_good")


def remember(layer: str, evaluation) -> None:
    PageState(layer).set("last_good", evaluation)
