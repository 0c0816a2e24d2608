"""The stage's heatmaps: a canvas component (heatmap.js) drawing plots.tensor_heatmap's spec.

Plotly took about half of the browser's work on every parameter change (its SVG axes, colour bars and hover
layers rebuilt for three figures); the canvas redraws in place in a few milliseconds, keeps hover values, the
output's input-window outlines, the click that picks a cell and a PNG download. Its stats caption is text the
component writes under the canvas: a separate Streamlit element per figure would add to every change's render
passes (bench/bench_render.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import streamlit as st

_CSS = """
.pg-heatmap { position: relative; }
.pg-heatmap canvas { position: absolute; left: 0; top: 0; }
.pg-heatmap .pg-overlay { pointer-events: none; }
.pg-heatmap.pg-clickable canvas { cursor: pointer; }
.pg-heatmap .pg-tip { display: none; position: absolute; z-index: 10; pointer-events: none; padding: 4px 8px;
  background: rgba(255, 255, 255, 0.95); border: 1px solid #888; border-radius: 4px; font-size: 0.8rem;
  white-space: nowrap; color: #1f2328; }
.pg-heatmap .pg-png { position: absolute; right: 0; top: 0; opacity: 0; font-size: 0.7rem; padding: 1px 6px;
  border: 1px solid #bbb; border-radius: 4px; background: #fff; color: #444; cursor: pointer; }
.pg-heatmap:hover .pg-png { opacity: 1; }
.pg-caption { font-size: 0.875rem; line-height: 1.45; opacity: 0.65; padding-top: 0.25rem; overflow-wrap: anywhere; }
"""
NAME = "playground_heatmap"  # the component's name, as its messages carry it (tests and benchmarks read them)
_component = None


def _heatmap_component():
    global _component
    if _component is None:  # registered once per process: a second registration would replace it
        _component = st.components.v2.component(NAME, js=Path(__file__).with_name("heatmap.js").read_text(),
                                                 css=_CSS, isolate_styles=False)
    return _component


def heatmap(spec: dict, key: str, filename: str, caption: str = "", link: str | None = None,
            on_pick: Callable[[tuple[int, ...]], None] | None = None) -> None:
    """Draw one heatmap, its caption under it. link: the key of the heatmap that hovering this one outlines
    windows on (the input); on_pick: called with the clicked cell's full index (n, c, …, h, w) before the rerun."""
    def picked() -> None:
        value = (st.session_state.get(key) or {}).get("pick")  # the component's state, its triggers merged in
        if isinstance(value, list) and value and all(isinstance(v, int) and v >= 0 for v in value):
            on_pick(tuple(value))

    extra = {"on_pick_change": picked} if on_pick is not None else {}
    _heatmap_component()(key=key, data={"spec": spec, "key": key, "link": link, "filename": filename,
                                        "caption": caption}, width=spec["width"], height="content", **extra)

