"""Per-layer explanations drawn under the main input/output heatmaps.

`EXTRAS[layer_name](evaluation, view_options)` renders one layer's extra: a thin Streamlit layer
over playground.explain, which does the arithmetic. view_options is any object with
`shared_scale`, `presenter` and `theme` (ui.state.ViewOptions). Every widget key is
"{layer}.extra.{name}".
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import streamlit as st

from .. import core, explain, plots, style
from . import state
from .keys import figure_key
from ..layers import get_layer
from ..numbers import precise

MAX_CURVE_MARKS = 2000  # distinct (x, y) marks on the transfer curve; more are strided
# Beyond this many cells per slice the output heatmap is not clickable (its click targets cost megabytes)
# and the outlines are drawn on request (each change would redraw the large input heatmap too).
LARGE_SLICE_CELLS = 64 * 64


@dataclass(frozen=True)
class Marks:
    """What a layer's section outlines on the page's own input and output heatmaps."""
    input: dict = field(default_factory=dict)  # ui.state.tensor_figure keyword arguments
    output: dict = field(default_factory=dict)
    on_select: Callable[[Any], Callable[[], None]] | None = None  # drawn output figure -> its click handler


def _key(layer: str, name: str) -> str:
    return f"{layer}.extra.{name}"


def _theme(view: Any) -> style.Theme:
    theme = getattr(view, "theme", None)
    return theme if isinstance(theme, style.Theme) else style.theme(bool(getattr(view, "presenter", False)))


def _presenter(view: Any) -> bool:
    return bool(getattr(view, "presenter", False))


def _shared(view: Any) -> bool:
    return bool(getattr(view, "shared_scale", True))


# ------------------------------------------------------------------------------------ activation
MARKS_SAMPLE = 1 << 16  # values looked at for the marks: np.unique over 8 million pairs took 10 s


def _curve_marks(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Distinct (input, output) pairs to mark on the curve, from every `step`-th value of a large tensor."""
    step = max(1, -(-x.size // MARKS_SAMPLE))
    pairs = np.column_stack([np.asarray(x, np.float64).ravel()[::step], np.asarray(y, np.float64).ravel()[::step]])
    pairs = pairs[np.isfinite(pairs).all(axis=1)]
    pairs = np.unique(pairs, axis=0)
    if len(pairs) > MAX_CURVE_MARKS:
        pairs = pairs[:: -(-len(pairs) // MAX_CURVE_MARKS)]
    return pairs[:, 0], pairs[:, 1], step


def activation_extra(evaluation, view) -> None:
    p = evaluation.params
    st.markdown(f"**{p['type']}** with the current parameters:")
    st.code(explain.activation_formula(p), language=None)
    xs, ys = explain.activation_curve(p["type"], p["alpha"], p["beta"], explain.curve_range(evaluation.input))
    mx, my, step = _curve_marks(evaluation.input, evaluation.output)
    fig = plots.transfer_curve_figure(xs, ys, marks_x=mx, marks_y=my, theme=_theme(view),
                                      title=f"{p['type']}: transfer curve, the input's values marked")
    state.chart(fig, _key("activation", "curve"))
    of = "the tensor" if step == 1 else f"every {step}th value of the tensor"
    st.caption(f"Marks: {len(mx)} distinct (input, output) pairs of {of}, output from {evaluation.output_source}.")


# ------------------------------------------------------------------------------------ leaky relu
def _layers_rows(layers: list[dict]) -> list[dict]:
    return [{"name": l.get("name", "?"), "type": l.get("type", "?"), "tactic": l.get("tactic", "")} for l in layers]


def leaky_relu_extra(evaluation, view) -> None:
    alpha = evaluation.params["alpha"]
    evaluate_fn = functools.partial(core.evaluate, backend=evaluation.backend, cache=state.engine_cache())
    with st.spinner("Building the three constructions' TensorRT engines …", show_time=True):
        cmp = explain.leaky_comparison(evaluation.input, alpha, evaluate_fn, own=evaluation)
    names = cmp["constructions"]
    st.markdown(f"The three constructions of Leaky ReLU with alpha = {precise(alpha)}, on the same input:")
    # Three more heatmaps per change, of outputs the difference table below already compares: on request.
    draw = st.toggle("Draw each construction's output", value=False, key=_key("leaky_relu", "draw_outputs"))
    for name, col in zip(names, st.columns(len(names))):
        with col:
            current = " (shown above)" if name == evaluation.params["construction"] else ""
            st.markdown(f"**{explain.CONSTRUCTION_LABELS[name]}**{current}")
            if cmp["errors"][name]:
                st.error(state.inert(cmp["errors"][name]))
            layers = cmp["layers"][name]
            st.caption(f"Engine layers: {len(layers)}" if layers else "No engine layers (no engine was built).")
            if layers:
                state.table(_layers_rows(layers), _key("leaky_relu", f"layers_{name}"))
            if draw:
                fig, _ = state.tensor_figure(cmp["outputs"][name], f"{name} output", _shared(view), _presenter(view))
                state.chart(fig, _key("leaky_relu", f"out_{name}"), width="stretch")
            st.caption(f"output from {cmp['sources'][name]}")
    st.markdown("**Pairwise max |difference|**")
    state.table([{"construction": a, **{b: f"{v:.3g}" for b, v in zip(names, row)}} for a, row in zip(names, cmp["max_diff"])],
                _key("leaky_relu", "max_diff"))
    worst = float(np.max(cmp["max_diff"]))
    verdict = f"Largest difference {worst:.3g}: " + (
        "the three agree to float32 rounding." if worst <= 1e-6 else "they disagree by more than float32 rounding.")
    (st.success if worst <= 1e-6 else st.warning)(verdict)
    latency = cmp["latency_ms"]
    if any(v is not None for v in latency.values()):
        fig = plots.comparison_bar_figure([explain.CONSTRUCTION_LABELS[n] for n in names],
                                          [np.nan if latency[n] is None else latency[n] for n in names],
                                          title="Latency (median of timed runs)", unit="ms", theme=_theme(view))
        state.chart(fig, _key("leaky_relu", "latency"))
        st.info(explain.PRELU_FUSION_NOTE)
    else:
        st.caption("Latency needs a GPU that runs the engines; none here. " + explain.PRELU_FUSION_NOTE)


# ----------------------------------------------------------------------------------------- prelu
def prelu_extra(evaluation, view) -> None:
    p = evaluation.params
    st.markdown(explain.prelu_broadcast(p, evaluation.input.shape))
    slopes = np.asarray(p["slopes"])
    if slopes.size <= 64:
        values = ", ".join(precise(v) for v in slopes.ravel())
        st.code(f"slopes{tuple(slopes.shape)} = [{values}]", language=None)
    st.caption(explain.PRELU_FUSION_NOTE)


# ----------------------------------------------------------------------------------------- scale
def scale_extra(evaluation, view) -> None:
    p = evaluation.params
    st.code(explain.scale_formula(p), language=None)
    why = explain.scale_nan_explanation(evaluation.input, p, reference_output=evaluation.reference)
    if why:
        st.warning(state.inert(why))
    rows, what = explain.scale_coefficient_rows(p, evaluation.input.shape)
    st.markdown(what)
    state.table(rows, _key("scale", "coefficients"))


# ----------------------------------------------------------------------------------- convolution
def convolution_extra(evaluation, view) -> None:
    p, x = evaluation.params, evaluation.input
    st.markdown("**Output size per axis**")
    rows = explain.conv_shape_rows(p, x.shape)
    names = {"dilated_kernel": "1+d(k−1)", "pre_padding_set": "pre_padding", "post_padding_set": "post_padding",
             "pre": "pre (resolved)", "post": "post (resolved)"}
    unset = ("pre_padding_set", "post_padding_set")  # None or a number: one type per column
    state.table([{names.get(k, k): ("unset" if v is None else str(v)) if k in unset else v for k, v in row.items()}
                 for row in rows], _key("convolution", "shape_table"))
    out_shape = evaluation.reference.shape
    st.markdown(f"Output shape: `{out_shape}` (N = {out_shape[0]}, K = num_output_maps = {out_shape[1]}).")
    st.markdown(explain.PADDING_PRECEDENCE)
    st.markdown(explain.padding_in_force(p))
    cell_section(evaluation)


# ------------------------------------------------- the picked output cell: any layer that declares `reads`
def index_from_point(point: dict, customdata_by_curve: dict[int, np.ndarray], rank: int) -> tuple[int, ...] | None:
    """The output index a plotly selection point stands for: its customdata (n, c, [d,] h, w) (a list, or the
    {"0": n, "1": c, ...} dict that st.plotly_chart actually reports), or, where the frontend left customdata
    out, the clicked trace's customdata row at point_index. None for anything else."""
    data = point.get("customdata")
    if data is None:
        rows = customdata_by_curve.get(point.get("curve_number"))
        i = point.get("point_index", point.get("point_number"))
        if rows is None or i is None or not 0 <= int(i) < len(rows):
            return None
        data = rows[int(i)]
    if isinstance(data, dict):  # the frontend sends an array's customdata as {"0": n, "1": k, ...}
        try:
            data = [data[i] for i in sorted(data, key=int)]
        except (TypeError, ValueError):
            return None
    try:
        index = tuple(int(v) for v in data)
    except (TypeError, ValueError):
        return None
    return index if len(index) == rank else None


def _axes(layer: str, rank: int) -> tuple[str, ...]:
    return get_layer(layer).axes_of_cell(rank)


def _click_handler(layer: str, rank: int) -> Callable[[Any], Callable[[], None]]:
    """For the drawn output figure, its on_select callback: runs before the rerun, so it may set the
    index inputs' state."""
    def for_figure(fig) -> Callable[[], None]:
        customdata = {i: np.asarray(t.customdata) for i, t in enumerate(fig.data) if t.customdata is not None}

        def on_select() -> None:
            chart = st.session_state.get(figure_key(layer, "output")) or {}
            for point in ((chart.get("selection") or {}).get("points") or [])[:1]:
                index = index_from_point(point, customdata, rank)
                if index is not None:
                    for name, v in zip(_axes(layer, rank), index):
                        st.session_state[_key(layer, name)] = v
        return on_select
    return for_figure


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
    memo = "_" + _key(layer.name, "picked")  # plain session state: (evaluation, index, reads, cell) of this run
    last = st.session_state.get(memo)
    if last is not None and last[0] is evaluation and last[1] == index:
        return out_shape, index, last[2], last[3]
    reads = layer.reads(evaluation.params, evaluation.input.shape, index)
    cell = layer.cell(evaluation.input, evaluation.params, index, evaluation.reference) if layer.cell else None
    st.session_state[memo] = (evaluation, index, reads, cell)
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
                 on_select=None if large else _click_handler(layer.name, len(out_shape)))


def _large(in_shape: tuple, out_shape: tuple) -> bool:
    return max(in_shape[-2] * in_shape[-1], out_shape[-2] * out_shape[-1]) > LARGE_SLICE_CELLS


def _cell_picker(layer: str, out_shape: tuple) -> None:
    """The index inputs (their state already kept within out_shape by _cell_index)."""
    labels = {"n": "n (batch)", "k": "k (output map)", "c": "c (channel)"}
    names = _axes(layer, len(out_shape))
    for name, size, col in zip(names, out_shape, st.columns(len(out_shape))):
        with col:
            # Bound to the URL: the share link holds the picked cell (read before drawing by _cell_index).
            st.number_input(labels.get(name, name), min_value=0, max_value=size - 1, step=1, key=_key(layer, name),
                            bind="query-params")


def cell_section(evaluation) -> None:
    """Under the stage: pick an output cell, what it reads and how its value is made."""
    layer = get_layer(evaluation.layer)
    out_shape, index, reads, cell = _picked(evaluation)  # before the index inputs: it may move their values
    if _large(evaluation.input.shape, out_shape):
        st.markdown("**One output cell**: pick its index.")
        st.toggle("Outline it and the input cells it reads on the heatmaps (large tensors: slower per change)",
                  value=False, key=_outline_key(layer.name))
    else:
        st.markdown("**One output cell**: pick its index, or click a cell of the output heatmap. It is outlined "
                    "on the output, and the input cells it reads on the input (dashed: outside the input).")
    _cell_picker(layer.name, out_shape)
    shown = float(evaluation.output[index]) if evaluation.output.shape == out_shape else None
    if shown is not None:
        st.markdown(f"output{index} = {precise(shown)} ({evaluation.output_source}); "
                    f"reference = {precise(float(evaluation.reference[index]))}")
    if cell is not None:
        for note in cell.notes:
            st.markdown(note)
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
    st.session_state["_" + _key(layer, "drawn")] = index
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
    drawn, stepped_at = "_" + _key(layer, "drawn"), "_" + _key(layer, "stepped_at")
    if not st.session_state.get(_key(layer, "play")) or st.session_state.get(drawn) != _cell_index(layer, out_shape):
        return
    if time.monotonic() - st.session_state.get(stepped_at, 0.0) < 0.8 * PLAY_SECONDS:
        return
    st.session_state[stepped_at] = time.monotonic()
    _step(layer, out_shape, 1)
    st.rerun()


def layer_section(evaluation, view) -> None:
    """A layer with no section of its own here: its explanations, then its picked cell."""
    layer = get_layer(evaluation.layer)
    if layer.explain:
        for paragraph in layer.explain(evaluation.params, evaluation.input.shape):
            st.markdown(paragraph)
    if layer.reads:
        cell_section(evaluation)


EXTRAS: dict[str, Callable[[Any, Any], None]] = {
    "activation": activation_extra,
    "leaky_relu": leaky_relu_extra,
    "prelu": prelu_extra,
    "scale": scale_extra,
    "convolution": convolution_extra,
}
