"""How results are drawn (`ViewOptions`: presenter mode and its theme) and presenter mode before its toggle is drawn
(`presenter_on`)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ..base.style import DEFAULT, Theme
from ..base.style import theme as theme_for
from ..serve.protocol import VIEW_PRESENTER


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
