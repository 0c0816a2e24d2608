"""How results are drawn (`ViewOptions`: presenter mode and its theme), presenter mode before its toggle is drawn
(`presenter_on`), and the browser window's size, said again where a resize changes a decision (`viewport`,
`probe_viewport`)."""

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


VIEWPORT = "_viewport"  # session, no URL key: the browser window's {"width", "height"} in CSS px, as last said
VIEWPORT_PROBE = "viewport-probe"  # the probe component's key (no URL key either)
SETTLE_MS = 300  # a resize is said once the window has held its size this long: a drag of its edge is one report
# Says the window's size, as the component's state: a fact for the page's Python to decide by. It says it where the
# page does not know it yet, and again where a resize, once settled, puts the height on the other side of one of
# the heights the page decides by (`data.heights`): a resize that changes no decision says nothing, so never reruns
# the page. `data.known`: the height the page holds, also on the element (data-known) for the tests to wait on.
_PROBE_JS = """
export default function (component) {
  const { parentElement: root, data, setStateValue } = component;
  const heights = (data && data.heights) || [];
  const side = (h) => heights.filter((b) => h >= b).length;
  const known = data && data.known != null ? data.known : null;
  (root.host || root).dataset.known = known == null ? "" : String(known);
  const said = root.__said != null ? root.__said : known;  // what the page holds, or has been told and will hold
  const say = () => {
    root.__said = window.innerHeight;
    setStateValue("size", { width: window.innerWidth, height: window.innerHeight });
  };
  if (said == null || side(window.innerHeight) !== side(said)) say();
  let timer = null;
  const resized = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { if (side(window.innerHeight) !== side(root.__said ?? known)) say(); }, data.settle_ms);
  };
  window.addEventListener("resize", resized);
  return () => { clearTimeout(timer); window.removeEventListener("resize", resized); };
}
"""
_probe = None


def viewport() -> dict | None:
    """The browser window's size ({"width", "height"}, CSS px) as the probe last said it (`probe_viewport`); None
    until it has said it. The server cannot know it before the page has been drawn once."""
    return st.session_state.get(VIEWPORT)


def window_size(said) -> dict | None:
    """The probe's message as a window's size: two numbers a window can have, else None (a browser's message is
    input like any other)."""
    size = (said or {}).get("size") if isinstance(said, dict) else None
    if isinstance(size, dict) and all(
        isinstance(size.get(k), (int, float)) and not isinstance(size.get(k), bool) and 0 < size[k] < 100_000
        for k in ("width", "height")
    ):
        return {"width": int(size["width"]), "height": int(size["height"])}
    return None


def probe_viewport(heights: tuple[int, ...]) -> None:
    """A component of no height that says the window's size where the page does not know it yet, and again where a
    resize crosses one of `heights` (the heights the page decides by); each answer reruns the page, and `viewport`
    has it from then on."""
    global _probe
    if _probe is None:  # registered once per process
        _probe = st.components.v2.component("playground_viewport", js=_PROBE_JS)

    def keep():
        size = window_size(st.session_state.get(VIEWPORT_PROBE))
        if size is not None:
            st.session_state[VIEWPORT] = size

    known = viewport()
    _probe(
        key=VIEWPORT_PROBE,
        data={"heights": list(heights), "known": known["height"] if known else None, "settle_ms": SETTLE_MS},
        on_size_change=keep,
        height=0,
    )
