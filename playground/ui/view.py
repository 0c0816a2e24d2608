"""How results are drawn (`ViewOptions`: presenter mode and its theme), presenter mode before its toggle is drawn
(`presenter_on`), and the browser window's size, read once (`viewport`, `probe_viewport`)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ..stage.protocol import VIEW_PRESENTER
from ..style import DEFAULT, Theme
from ..style import theme as theme_for


@dataclass(frozen=True)
class ViewOptions:
    """How results are drawn; passed to every section under the stage (ui.extras)."""

    presenter: bool = False  # projector: large type, strong colours
    theme: Theme = DEFAULT  # style.theme(presenter)

    @staticmethod
    def of(presenter: bool) -> ViewOptions:
        return ViewOptions(bool(presenter), theme_for(bool(presenter)))


def presenter_on() -> bool:
    """Presenter mode before the toggle is drawn (main.py, the home page): the toggle's value in this
    session, else what the link says (?view.presenter=true)."""
    value = st.session_state.get(VIEW_PRESENTER)
    if value is None:
        value = st.query_params.get(VIEW_PRESENTER, "").strip().lower() == "true"
        if value:  # carried to the toggle of the layer page opened next (home links carry no query)
            st.session_state[VIEW_PRESENTER] = True
    return bool(value)


VIEWPORT = "_viewport"  # session, no URL key: the browser window's {"width", "height"} in CSS px, once said
VIEWPORT_PROBE = "viewport-probe"  # the probe component's key (no URL key either)
# Says the window's size once, as the component's state: a fact for the page's Python to decide by.
_PROBE_JS = """
export default function (component) {
  if (component.parentElement.__said) return;
  component.parentElement.__said = true;
  component.setStateValue("size", { width: window.innerWidth, height: window.innerHeight });
}
"""
_probe = None


def viewport() -> dict | None:
    """The browser window's size ({"width", "height"}, CSS px) as it was when a page first asked (`probe_viewport`);
    None until it has said it. The server cannot know it before the page has been drawn once."""
    return st.session_state.get(VIEWPORT)


def probe_viewport() -> None:
    """Where the window's size is not known yet: a component of no height that says it once; its answer reruns the
    page, and `viewport` has it from then on (the probe is not drawn again)."""
    global _probe
    if viewport() is not None:
        return
    if _probe is None:  # registered once per process
        _probe = st.components.v2.component("playground_viewport", js=_PROBE_JS)

    def keep():  # a browser's message: kept only where it is two sizes a window can have
        size = (st.session_state.get(VIEWPORT_PROBE) or {}).get("size")
        if isinstance(size, dict) and all(
            isinstance(size.get(k), (int, float)) and 0 < size[k] < 100_000 for k in ("width", "height")
        ):
            st.session_state[VIEWPORT] = {"width": int(size["width"]), "height": int(size["height"])}

    _probe(key=VIEWPORT_PROBE, on_size_change=keep, height=0)
