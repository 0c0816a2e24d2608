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

Only the first, "{layer}.{param}.{axis}", ".set" and "{layer}.input.*" (except image) hold
state of their own; the derived ones are rewritten from it on every run.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ..backend import Backend, detect
from ..cache import EngineCache
from ..style import DEFAULT, Theme, theme as theme_for

AXES = ("d", "h", "w")
INPUT = "input"
VIEW_SHARED_SCALE, VIEW_PRESENTER = "view.shared_scale", "view.presenter"
_LAST = "_last_good."  # + layer: the last Evaluation that validated (not a widget key)


def key(layer: str, *parts) -> str:
    return ".".join([layer, *map(str, parts)])


def input_key(layer: str, name: str) -> str:
    return key(layer, INPUT, name)


def axes(rank: int) -> tuple[str, ...]:
    """Spatial axis names of an input of this rank: h, w or d, h, w."""
    return AXES[-(rank - 2):]


@dataclass(frozen=True)
class ViewOptions:
    """How results are drawn; passed to every section under the main output (ui.extras)."""
    shared_scale: bool = True  # one colour scale for input and output, else one per heatmap
    presenter: bool = False  # projector: large type, strong colours
    theme: Theme = DEFAULT  # style.theme(presenter)

    @staticmethod
    def of(shared_scale: bool, presenter: bool) -> "ViewOptions":
        return ViewOptions(bool(shared_scale), bool(presenter), theme_for(bool(presenter)))


@st.cache_resource(show_spinner=False)
def backend() -> Backend:
    return detect()


@st.cache_resource(show_spinner=False)
def engine_cache() -> EngineCache:
    # One per process: its in-memory entries are what make a revisited configuration instant.
    return EngineCache()


def last_good(layer: str):
    return st.session_state.get(_LAST + layer)


def remember(layer: str, evaluation) -> None:
    st.session_state[_LAST + layer] = evaluation
