"""What is drawn under the stage for any layer, from its declaration: its explanations and section blocks
(`layer_section`), the picked output cell (outlines, the Σ line, step and play) and its table.

view_options is any object with `shared_scale`, `presenter` and `theme` (ui.state.ViewOptions). Every widget
key is "{layer}.extra.{name}".
"""
from __future__ import annotations

import functools
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import streamlit as st

from .. import core, explain, section, style
from . import state
from ..layers import get_layer
from ..numbers import precise

# Beyond this many cells per slice the output heatmap is not clickable (its click targets cost megabytes)
# and the outlines are drawn on request (each change would redraw the large input heatmap too).
LARGE_SLICE_CELLS = 64 * 64


@dataclass(frozen=True)
class Marks:
    """What a layer's section outlines on the page's own input and output heatmaps."""
    input: dict = field(default_factory=dict)  # ui.state.tensor_heatmap keyword arguments
    output: dict = field(default_factory=dict)
    on_pick: Callable[[tuple[int, ...]], None] | None = None  # a click on an output cell, with its full index


def _key(layer: str, name: str) -> str:
    return f"{layer}.extra.{name}"


def _theme(view: Any) -> style.Theme:
    theme = getattr(view, "theme", None)
    return theme if isinstance(theme, style.Theme) else style.theme(bool(getattr(view, "presenter", False)))


def _presenter(view: Any) -> bool:
    return bool(getattr(view, "presenter", False))


def _shared(view: Any) -> bool:
    return bool(getattr(view, "shared_scale", True))


# ------------------------------------------------- the picked output cell: any layer that declares `reads`
def _axes(layer: str, rank: int) -> tuple[str, ...]:
    return get_layer(layer).axes_of_cell(rank)


def _picker(layer: str, rank: int) -> Callable[[tuple[int, ...]], None]:
    """The output heatmap's click: the cell's full index becomes the index inputs' state (it runs before the
    rerun, as their own changes do). An index of another rank (a stale page) is ignored."""
    def pick(index: tuple[int, ...]) -> None:
        if len(index) == rank:
            for name, v in zip(_axes(layer, rank), index):
                st.session_state[_key(layer, name)] = int(v)
    return pick


def _cell_index(layer: str, out_shape: tuple) -> tuple[int, ...]:
    """The picked output cell, from the index inputs' state (drawn later, under the heatmaps); an index
    the output no longer has moves to the nearest cell it has."""
    index = []
    for name, size in zip(_axes(layer, len(out_shape)), out_shape):
        key = _key(layer, name)
        value = st.session_state.get(key)
        if value is None:  # not drawn yet in this session: a shared link's cell (the inputs are bound to the URL)
            text = st.query_params.get(key, "0")
            value = int(text) if text.strip().isdigit() else 0
        value = int(min(max(value, 0), size - 1)) if isinstance(value, (int, float)) else 0
        st.session_state[key] = value
        index.append(value)
    return tuple(index)


def _picked(evaluation) -> tuple[tuple, tuple[int, ...], list[tuple], Any]:
    """Output shape, picked index, the input cells it reads and its Cell (None where the layer explains no
    arithmetic); the heatmaps' outlines and the sections below them all need it in one run, so the last one is
    kept."""
    layer = get_layer(evaluation.layer)
    out_shape = tuple(evaluation.reference.shape)
    index = _cell_index(layer.name, out_shape)
    page = state.PageState(layer.name)
    last = page.get("picked")
    if last is not None and last[0] is evaluation and last[1] == index:
        return out_shape, index, last[2], last[3]
    reads = layer.reads(evaluation.params, evaluation.input.shape, index)
    cell = layer.cell(evaluation.input, evaluation.params, index, evaluation.reference) if layer.cell else None
    page.set("picked", (evaluation, index, reads, cell))
    return out_shape, index, reads, cell


def _outline_key(layer: str) -> str:
    return _key(layer, "outline")


def cell_marks(evaluation) -> Marks:
    """The picked output cell outlined on the output heatmap (a click there picks another), the input cells it
    reads outlined on the input heatmap: no second pair of figures to draw on every change."""
    layer = get_layer(evaluation.layer)
    in_shape, out_shape = evaluation.input.shape, tuple(evaluation.reference.shape)
    large = _large(in_shape, out_shape)
    if large and not st.session_state.get(_outline_key(layer.name), False):
        return Marks()
    out_shape, index, reads, _ = _picked(evaluation)
    selected = (explain.output_slice_index(index, out_shape), index[-2], index[-1])
    windows = None if large else explain.hover_windows(layer, evaluation.params, in_shape, out_shape)
    return Marks(input=dict(highlight=explain.drawn_cells(reads, in_shape)),
                 output=dict(selected=selected, clickable=not large,
                             meta={"windows": windows, "color": style.theme(False).window_color,
                                   "hw": list(in_shape[-2:])} if windows else None),
                 on_pick=None if large else _picker(layer.name, len(out_shape)))


def _large(in_shape: tuple, out_shape: tuple) -> bool:
    return max(in_shape[-2] * in_shape[-1], out_shape[-2] * out_shape[-1]) > LARGE_SLICE_CELLS


def _cell_picker(layer: str, out_shape: tuple) -> None:
    """The index inputs (their state already kept within out_shape by _cell_index), for the axes with more than
    one index: an input that can only hold 0 would still cost every change a redraw."""
    labels = {"n": "n (batch)", "k": "k (output map)", "c": "c (channel)"}
    with st.container(horizontal=True, gap="small"):  # one block, where columns are one per axis and theirs
        for name, size in zip(_axes(layer, len(out_shape)), out_shape):
            if size == 1:
                continue
            # Bound to the URL: the share link holds the picked cell (read before drawing by _cell_index).
            st.number_input(labels.get(name, name), min_value=0, max_value=size - 1, step=1, key=_key(layer, name),
                            bind="query-params")


def _cell_heading(evaluation) -> section.Text:
    """The picked cell's heading: a text block, drawn with the texts before it as one element."""
    if _large(evaluation.input.shape, tuple(evaluation.reference.shape)):
        return section.Text("**One output cell**: pick its index.")
    return section.Text("**One output cell**: pick its index, or click a cell of the output heatmap. It is outlined "
                        "on the output, and the input cells it reads on the input (dashed: outside the input).")


def cell_section(evaluation) -> None:
    """Under the stage (after its heading, _cell_heading): pick an output cell, what it reads and how its value is
    made."""
    layer = get_layer(evaluation.layer)
    out_shape, index, reads, cell = _picked(evaluation)  # before the index inputs: it may move their values
    if _large(evaluation.input.shape, out_shape):
        st.toggle("Outline it and the input cells it reads on the heatmaps (large tensors: slower per change)",
                  value=False, key=_outline_key(layer.name))
    _cell_picker(layer.name, out_shape)
    shown = float(evaluation.output[index]) if evaluation.output.shape == out_shape else None
    lines = [f"output{index} = {precise(shown)} ({evaluation.output_source}); "
             f"reference = {precise(float(evaluation.reference[index]))}"] if shown is not None else []
    lines += list(cell.notes) if cell is not None else []
    if lines:  # one element: fewer for the browser to redraw on every change
        st.markdown("\n\n".join(lines))
    if cell is not None:
        if cell.rows:
            state.table(list(cell.rows), _key(layer.name, "products"))


def _step(layer: str, out_shape: tuple, delta: int) -> None:
    """Move the picked output cell delta cells on in reading order (w, then h, then d, c, n), wrapping around:
    the window walks the input by the stride, as in the convolution arithmetic animations."""
    index = _cell_index(layer, out_shape)
    flat = (int(np.ravel_multi_index(index, out_shape)) + delta) % int(np.prod(out_shape))
    for name, v in zip(_axes(layer, len(out_shape)), np.unravel_index(flat, out_shape)):
        st.session_state[_key(layer, name)] = int(v)


PLAY_SECONDS = 1.0  # one output cell a second: the eye follows the window


def cell_stage_line(evaluation, view) -> None:
    """Under the stage's heatmaps: the picked cell's arithmetic, and the controls that walk it across the output
    (previous, next, play)."""
    layer = evaluation.layer
    out_shape, index, _, cell = _picked(evaluation)
    state.PageState(layer).set("cell_drawn", index)
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=_key(layer, "cell")):
        st.button("", icon=":material/skip_previous:", key=_key(layer, "prev"), on_click=_step,
                  args=(layer, out_shape, -1), help="Previous output cell")
        st.button("", icon=":material/skip_next:", key=_key(layer, "next"), on_click=_step,
                  args=(layer, out_shape, 1), help="Next output cell: the window moves on by the stride")
        playing = st.toggle("play", key=_key(layer, "play"), help=f"Walk over every output cell, one every "
                                                                  f"{PLAY_SECONDS:g} s")
        line = cell.line if cell is not None else precise(float(evaluation.reference[index]))
        st.markdown(f"output{index} = {line}", width="stretch")
    if playing:
        _player(layer, out_shape)


@st.fragment(run_every=PLAY_SECONDS)
def _player(layer: str, out_shape: tuple) -> None:
    """While play is on: one step per tick, then the page draws the new cell (a full run: the outlines are on the
    stage's own figures). A tick that comes before the last step was drawn waits, so no cell is skipped; the
    page's own run, which also runs this body, never steps (less than a tick since the last step)."""
    page = state.PageState(layer)
    if not st.session_state.get(_key(layer, "play")) or page.get("cell_drawn") != _cell_index(layer, out_shape):
        return
    if time.monotonic() - page.get("cell_stepped_at", 0.0) < 0.8 * PLAY_SECONDS:
        return
    page.set("cell_stepped_at", time.monotonic())
    _step(layer, out_shape, 1)
    st.rerun()


def draw_blocks(layer: str, blocks: list, view: Any) -> None:
    """A layer's section (playground.section blocks) in the current container; consecutive texts as one element
    (fewer for the browser to redraw on every change)."""
    for is_text, run in itertools.groupby(blocks, key=lambda b: isinstance(b, section.Text)):
        if is_text:
            st.markdown("\n\n".join(block.markdown for block in run))
            continue
        for block in run:
            _draw_block(layer, block, view)


def _draw_block(layer: str, block, view: Any) -> None:
    if isinstance(block, section.Code):
        st.code(block.text, language=None)
    elif isinstance(block, section.Note):
        text = state.inert(block.text) if block.tone in ("warning", "error") else block.text
        getattr(st, block.tone)(text)
    elif isinstance(block, section.Table):
        state.table(block.rows, _key(layer, block.name))
    elif isinstance(block, section.Chart):
        state.chart(block.figure, _key(layer, block.name))
    elif isinstance(block, section.Heatmap):
        fig, _ = state.tensor_figure(block.tensor, block.title, _shared(view), _presenter(view))
        state.chart(fig, _key(layer, block.name), width="stretch")
    elif isinstance(block, section.Columns):
        for column, col in zip(block.columns, st.columns(len(block.columns))):
            with col:
                draw_blocks(layer, column, view)
    elif isinstance(block, section.OnRequest):
        if st.toggle(block.label, value=False, key=_key(layer, block.name)):
            draw_blocks(layer, block.blocks(), view)
    else:
        raise TypeError(f"{layer}'s section holds {block!r}, which is no playground.section block")


def layer_section(evaluation, view) -> None:
    """Under the stage: the layer's explanations, its own section, then its picked cell (texts that follow each
    other are one element: draw_blocks)."""
    layer = get_layer(evaluation.layer)
    paragraphs = layer.explain(evaluation.params, evaluation.input.shape) if layer.explain else []
    blocks = [section.Text(p) for p in paragraphs]
    if layer.section:
        busy = lambda label: st.spinner(label, show_time=True)  # noqa: E731
        evaluate = functools.partial(core.evaluate, backend=evaluation.backend, cache=state.engine_cache())
        blocks += layer.section(evaluation, section.Context(_theme(view), evaluate, busy))
    draw_blocks(layer.name, blocks + ([_cell_heading(evaluation)] if layer.reads else []), view)
    if layer.reads:
        cell_section(evaluation)
