"""The stage as one Streamlit component (components v2; its browser side is the ES modules of playground/stage,
stage.js first, served as files by the stage's asset route, and stage.css; its server side
playground/serve/server.py): a layer page draws it once; its changes go to the route, not through a script run."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import streamlit as st

from ..base.errors import ValidationError
from ..base.layer import Layer
from ..layers import LAYERS
from ..network.core import complete, digest
from ..serve import assets, protocol, server
from ..serve.prefetch import Position
from ..serve.shared import engine_cache
from . import keys
from .entry import CHAIN_PATH, MODEL_PATH

NAME = "playground_stage"
_HERE = Path(__file__).parents[1] / "stage"  # its browser side: the modules (assets.py serves them), stage.css
_component = None
# The component's own script only imports the stage's modules from the asset route (a module served as a file
# imports its neighbours by relative path; the component's inline script could not): all at once, the entry first,
# so that loading them is one round trip, not one per level of imports. Served without the stage's routes
# (`streamlit run main.py`), the stage says where it is served.
LOADER = """
export default async function (component) {
  let stage;
  try {
    [stage] = await Promise.all(component.data.modules.map((m) => import(new URL(m, window.location.href).href)));
  } catch (e) {
    component.parentElement.textContent = "The stage's scripts are served beside the app by app.py (scripts/start.sh): " + e.message;
    return undefined;
  }
  return stage.default(component);
}
"""


def _stage_component():
    global _component
    if _component is None:  # registered once per process: a second registration would replace it
        _component = st.components.v2.component(
            NAME, js=LOADER, css=(_HERE / "stage.css").read_text(encoding="utf-8"), isolate_styles=False
        )
    return _component


def url_query(layer: Layer, shape: tuple) -> dict[str, str]:
    """The page URL's texts for this layer's parameters (what a shared link set)."""
    keys = set(protocol.query_keys(layer, shape))
    return {k: str(st.query_params[k]) for k in st.query_params if k in keys}


def draw(
    layer: Layer,
    x: np.ndarray,
    evaluate: Callable,
    presenter: bool = False,
    hide: tuple = (),
    on_example: Callable[[str], None] | None = None,
    node=None,
    dropped: dict[str, str] | None = None,
) -> object:
    """Draw the stage for `layer` on input `x`; returns the Evaluation of the configuration the URL holds (the
    defaults where the link's is refused: the stage names the refusal). `evaluate(raw, compare)` evaluates a
    configuration the page's way (its cache, backend, budgets); `on_example(name)`: an example or lesson was
    picked on the stage (it sets the input, which the page's sidebar owns, and the URL, then the page runs).
    `node` (ui.models.NodeLink): a model's node, whose configuration is the page's starting point (the URL holds
    what differs from it) and whose ONNX Runtime opinion is of the node itself while its configuration stands.
    `dropped`: {query key: message} of the link's values the page does not use (ui.links): their controls are
    marked until changed."""
    xs, x = x, (x[layer.input_names[0]] if isinstance(x, dict) else x)  # several inputs: the feed dict
    _follow_settle(layer, x.shape)
    # The stage's place: its skeleton first, on the screen while the configuration is evaluated and the stage's
    # scripts load, then the stage over it (stage.css stacks the two; the skeleton goes once the stage has painted).
    slot = st.container(key=f"pg-slot-{layer.name}")
    with slot:
        if painted(layer):
            st.empty()  # the stage keeps its place among the slot's elements
        else:
            st.html(skeleton(layer, xs if isinstance(xs, dict) else {layer.input_names[0]: x}, presenter, hide))
    own = node.opened if node is not None and node.opened.shape == x.shape else None
    token = server.SEATS.open(layer.name, xs, st.session_state.get(_token_key(layer)), opened=own)
    st.session_state[_token_key(layer)] = token
    query = {**(node.base if node else {}), **url_query(layer, x.shape)}
    compare = st.query_params.get(compare_key(layer))
    compare = compare if compare in layer.param("precision").choices else None
    problem, seat = None, server.SEATS.take(token)
    try:
        raw = protocol.raw_params(layer, x.shape, query)
        # The configuration the stage's route answered last (a settle run's): its evaluation, not a second one
        ev = seat.remembered(raw, compare) if seat is not None else None
        ev = complete(ev, engine_cache()) if ev is not None else evaluate(raw, compare)  # built, where it was pending
        if seat is not None:  # ONNX Runtime's badge, which the stage asks for once it has drawn, judges this one
            seat.remember(compare, ev)
            # the configuration the stage starts from, as its requests spell it: the first change's neighbours are
            # built ahead too
            with contextlib.suppress(protocol.RequestError):  # a model's weights by reference: no neighbours then
                seat.last_query = Position(
                    protocol.raw_params(layer, x.shape, protocol.query_of(layer, ev.params, x.shape)), ev.params
                )
    except (ValidationError, protocol.RequestError) as exc:
        problem = (
            protocol.problem(exc, layer, x.shape)
            if isinstance(exc, ValidationError)
            else {"message": str(exc), "keys": [exc.key] if exc.key else []}
        )
        ev = evaluate({}, compare)
    epoch = st.session_state.get(_epoch_key(layer), 0)
    arrays = xs.values() if isinstance(xs, dict) else [x]
    identity = hashlib.blake2b(  # the input's values by the seat's digests of them (made once, when it was opened)
        f"{token}|{epoch}|{x.shape}".encode()
        + b"".join(seat.digests.values() if seat is not None else map(digest, arrays))
        + b"".join(str(a.shape).encode() for a in arrays),
        digest_size=8,
    ).hexdigest()
    # A run whose stage the browser already holds (a settle, the first paint's): the stage keeps its own drawing and
    # drops what it is handed, so no answer is made for it. A stage mounted afresh on such data asks the route.
    fresh = st.session_state.get(_drawn_key(layer)) != identity
    st.session_state[_drawn_key(layer)] = identity
    answer = None
    if fresh:
        answer = protocol.answer(layer, ev, picked(layer, ev), opened=own)
        if seat is not None:  # the planes of a page turned later are asked for by id
            seat.keep(protocol.arrays(answer))
        answer = protocol.inline(protocol.within(answer, protocol.INLINE_VALUES))  # else the stage asks the route
        answer["finish"] = protocol.has_opinion(layer)  # ONNX Runtime's badge: asked for after the first paint
    describe = protocol.describe(layer, x.shape, {n: a.shape for n, a in xs.items()} if isinstance(xs, dict) else None)
    if node is not None:
        describe["defaults"] = {**describe["defaults"], **node.base}

    def example_picked() -> None:
        name = (st.session_state.get(f"{layer.name}.stage") or {}).get("example")
        if name and on_example is not None:
            on_example(name)
            st.session_state[_epoch_key(layer)] = epoch + 1  # the stage takes the page's configuration again

    with slot:  # the stage in its slot, over its skeleton
        _stage_component()(
            key=f"{layer.name}.stage",
            data={
                "epoch": identity,
                "token": token,
                "route": server.ROUTE,
                "planes": server.PLANES_ROUTE,
                "modules": assets.urls(),
                "describe": describe,
                "source": node.source_of(x) if node is not None else None,
                "query": (
                    {**answer["query"], **({} if problem else query)}
                    if answer
                    else {**protocol.query_of(layer, ev.params, x.shape), **({} if problem else query)}
                ),
                "answer": answer,
                "pick": None if answer else picked(layer, ev),
                "problem": problem,
                "presenter": presenter,
                "compare": compare,
                "runs": ev.backend.can_run,
                "opinion": protocol.has_opinion(layer),  # ONNX Runtime's badge will come: its place is held
                "hide": list(hide),
                "public": server.public_url(),
                "qr": server.QR_ROUTE,
                "painted": painted(layer),
                "cell": view_cell(),
                "dropped": dropped or {},
            },
            # "settled": the page runs, and the tabs under the stage follow the URL the stage wrote; "painted": the
            # figures are on the screen, the page draws what it held back
            on_settled_change=lambda: None,
            on_example_change=example_picked,
            on_painted_change=_was_painted(layer),
            width="stretch",
            height="content",
        )
    return ev


@functools.cache
def _skeleton_css() -> str:
    """The stage's own sheet for a root of another class, read once (every first paint of a page draws it)."""
    return (_HERE / "stage.css").read_text(encoding="utf-8").replace(".pg-stage", ".pg-skeleton")


SKELETON_PLANES = 4  # heatmap.js's MAX_PLANES: the planes a figure shows at a time


def skeleton(layer: Layer, shapes: dict, presenter: bool = False, hide: tuple = ()) -> str:
    """The stage before it is here: the layer's title, a row per control (its label and the link's value) and a box
    per figure, the size its cells will take (stage.css fits them as figures.js does, by the room left to them),
    drawn from the page's own text while the configuration is evaluated and the stage's scripts load. Nothing is
    evaluated for it: the output's shape is the layer's shape rule (its work budget's), the link's parameters read as
    the stage reads them (the defaults where the link's are refused)."""
    shapes = {n: tuple(a.shape) for n, a in shapes.items()}
    first = shapes[layer.input_names[0]]
    try:
        query = url_query(layer, first)
        params = layer.resolve(protocol.raw_params(layer, first, query), layer.shape_arg(shapes))
    except (ValidationError, protocol.RequestError):
        query, params = {}, layer.defaults(layer.shape_arg(shapes))
    out = layer.cost(params, layer.shape_arg(shapes))[0] if layer.cost else first
    figs = [(f"Input {n.upper()}" if layer.several else "Input", shapes[n]) for n in layer.used_inputs(params)]
    with contextlib.suppress(Exception):  # a weight the link's value cannot make: its box is left out
        figs += [(t, a.shape) for t, a in (layer.stage_tensors(params) if layer.stage_tensors else [])]
    figs.append(("Output", tuple(out)))

    def box(title: str, shape: tuple) -> tuple[str, int, int, tuple]:  # its title, columns and rows of cells
        planes = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        h, w, n = (shape[-2] if len(shape) > 1 else 1), shape[-1], min(planes, SKELETON_PLANES)
        return title, n * w + n - 1, h, shape

    boxes = [box(t, sh) for t, sh in figs]
    across, rows = sum(b[1] for b in boxes), max(b[2] for b in boxes)
    frames = "".join(
        f'<div class="pg-frame" style="--cols: {cols}; --r: {r}"><div class="pg-bone-fig"></div>'
        f"<b>{html.escape(t)}</b><br>shape {html.escape(str(tuple(sh)))}</div>"
        for t, cols, r, sh in boxes
    )
    described = protocol.describe(layer, first, shapes if layer.several else None)["controls"]
    texts = protocol.query_of(layer, params, first)

    def value(c: dict) -> str:  # the text the control will show: its axes' values joined
        return ",".join(texts.get(k, "") for k in c["keys"].values()) if c.get("keys") else texts.get(c["key"], "")

    lines = [("Example or lesson", "", 1)] if protocol.examples(layer) and "preset" not in hide else []
    lines += [("Compare with (compare)", "", 1)] if "compare" not in hide else []  # as controls.js heads the list
    lines += [(c["label"], value(c), max(1, len(c.get("axes") or ()))) for c in described if c["name"] not in hide]
    controls = "".join(
        f'<div class="pg-control"><div class="pg-label"><span>{html.escape(label)}</span>'
        f'<span class="pg-value">{html.escape(text)}</span></div>' + '<div class="pg-bone"></div>' * bones + "</div>"
        for label, text, bones in lines
    )
    if "parameters" in hide:
        controls = ""
    return (
        # the stage's own sheet, for a root of another class: nothing that looks for the stage finds its skeleton
        f"<style>{_skeleton_css()}</style>"
        f'<div class="pg-skeleton{" pg-presenter" if presenter else ""}" aria-busy="true">'
        f'<div class="pg-controls">{controls}</div><div class="pg-figures">'
        f'<div class="pg-head"><div class="pg-titles"><span class="pg-title">{html.escape(layer.title)}</span></div>'
        f'<div class="pg-badges"></div></div><div class="pg-link"><button disabled>Copy link</button></div>'
        '<div class="pg-precision"></div>'
        f'<div class="pg-row" style="--across: {across}; --gaps: {18 * (len(boxes) - 1)}px; --rows: {rows}">'
        f"{frames}</div></div></div>"
    )


def view_cell() -> int | None:
    """The link's one cell size for every figure (view.cell=PX: a documentation gallery's), or None (fitted)."""
    text = str(st.query_params.get(protocol.VIEW_CELL, "")).strip()
    low, high = keys.VIEW_CELL_RANGE
    return int(text) if text.isdigit() and low <= int(text) <= high else None


def picked(layer: Layer, ev) -> tuple[int, ...] | None:
    """The output cell the link picks (`LAYER.cell.AXIS`, which the stage writes as a cell is picked; an older
    link's `LAYER.extra.AXIS`), where it names one of this output; else None (the stage picks the first)."""
    if layer.reads is None:
        return None
    shape = tuple(ev.reference.shape)
    axes = layer.axes_of_cell(len(shape))
    texts = [st.query_params.get(pick_key(layer, a)) for a in axes]
    if all(t is None for t in texts):
        texts = [st.query_params.get(pick_key(layer, a, old=True)) for a in axes]
    if not all(t is not None and t.isdigit() for t in texts):
        return None
    index = tuple(int(t) for t in texts)
    return index if all(v < n for v, n in zip(index, shape)) else None


def pick_key(layer: Layer, axis: str, old: bool = False) -> str:
    """The picked cell's index along `axis` in the URL (LAYER.cell.AXIS, as the stage writes it; `old`: the
    spelling of older links, LAYER.extra.AXIS, which still open)."""
    return protocol.cell_key(layer, axis, old)


def _follow_settle(layer: Layer, shape: tuple) -> None:
    """A run the stage's settle asked for: the URL the stage wrote (history.replaceState, which Streamlit does not
    see: its next runs would send the query the page loaded with) becomes the page's query, for this run's tabs
    and every later run. Only the stage's own keys, each value as text of bounded length; the page checks them as
    it checks any link."""
    settled = (st.session_state.get(f"{layer.name}.stage") or {}).get("settled")
    search = settled.get("search") if isinstance(settled, dict) else None
    if not isinstance(search, str) or len(search) > 64 * protocol.MAX_TEXT:
        return
    given = dict(urllib.parse.parse_qsl(search.lstrip("?"), keep_blank_values=True))
    keys = set(protocol.query_keys(layer, shape)) | {compare_key(layer)}
    if layer.reads:  # the picked cell, any rank the output may have
        keys |= {
            pick_key(layer, a, old) for rank in (2, 3, 4, 5) for a in layer.axes_of_cell(rank) for old in (False, True)
        }
    for k in keys:
        v = given.get(k)
        if v is None or len(v) > protocol.MAX_TEXT:
            st.query_params.pop(k, None)
        elif st.query_params.get(k) != v:
            st.query_params[k] = v


def compare_key(layer: Layer) -> str:
    """Compare mode's second precision in the URL (LAYER.compare)."""
    return protocol.compare_key(layer)


def set_query(layer: Layer, params: dict, shape: tuple, shapes: dict | None = None) -> None:
    """Write a configuration into the URL as the stage writes it (an example picked on the stage): the keys whose
    values differ from the defaults', and those whose defaults follow a choice that differs (`shapes`: every
    input's, where the layer has several)."""
    base = layer.defaults(shapes or shape)
    defaults, query = protocol.query_of(layer, base, shape), protocol.query_of(layer, params, shape)
    owned = {
        k
        for owner, keys in protocol.resets(layer, base, shape).items()
        if query.get(owner) != defaults.get(owner)
        for k in keys
    }  # their defaults follow a choice moved
    switched = protocol.switched(layer, shape)
    for k, v in query.items():
        if k in st.query_params:
            del st.query_params[k]
        if k in switched and query.get(switched[k]) != "true":
            continue  # an unset parameter's axes show what is in force (Param.fallback): no value of its own
        if defaults.get(k) != v or k in owned:
            st.query_params[k] = v


def painted(layer: Layer) -> bool:
    """Whether this session's stage of `layer` has drawn its figures on the screen: until then the page holds back
    the tabs under it, so that a page's first paint is the stage's."""
    return bool(st.session_state.get(_painted_key(layer)))


MENU_SHOWN = "_menu_shown"  # session: the pages' menu has been shown once (it stays)
MODEL_DRAWN = "_model_drawn"  # session: the model page's first view (its graph, or its upload box) is on the screen


def menu_position() -> str:
    """Where the pages' menu goes: at the top, except while a session's first view of a stage page (a layer's, the
    chain's) waits for its stage's first paint (the menu's twenty-odd links cost that first paint about 150 ms on a
    2-core machine), or the model page's first view (its graph, or its upload box: the menu cost it about a second on
    a loaded 2-core machine, bench/bench_graph.py); the paint's run shows it, and from then on it stays. The page is
    read from the browser's address (`st.context.url`),
    the menu being placed before the page is known."""
    if st.session_state.get(MENU_SHOWN):
        return "top"
    path = urllib.parse.urlsplit(st.context.url or "").path.rstrip("/")
    name = path.rsplit("/", 1)[-1]
    if (name in LAYERS or name == CHAIN_PATH) and not st.session_state.get(PAINTED.format(name)):
        return "hidden"
    if name == MODEL_PATH and not st.session_state.get(MODEL_DRAWN):
        return "hidden"
    st.session_state[MENU_SHOWN] = True
    return "top"


def _was_painted(layer: Layer) -> Callable[[], None]:
    def mark() -> None:
        st.session_state[_painted_key(layer)] = True

    return mark


PAINTED = "_stage_painted.{}"  # session: a stage page (by its layer's name, or "chain") has painted its figures


def _painted_key(layer: Layer) -> str:
    return PAINTED.format(layer.name)


def _token_key(layer: Layer) -> str:
    return f"_stage_token.{layer.name}"


def _drawn_key(layer: Layer) -> str:
    return f"_stage_drawn.{layer.name}"


def _epoch_key(layer: Layer) -> str:
    return f"_stage_epoch.{layer.name}"
