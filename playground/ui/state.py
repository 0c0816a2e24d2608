"""A layer page's private session state (`PageState`): not widgets, never in the URL. Keys starting with "_" are
plain session state; the widgets' keys are named in keys.py."""

from __future__ import annotations

import streamlit as st


class PageState:
    """One layer page's private session state (not widgets, never in the URL), in one place: each slot is held
    under the key "_SLOT.LAYER"."""

    SLOTS = {
        "url_checked": "the URL was checked when the page first ran in this session",
        "url_problems": "link problems to show, until a control changes",
        "url_dropped": "the URL's keys the page does not use, each with its message: their controls are marked",
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
