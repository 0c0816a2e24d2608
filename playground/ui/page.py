"""The home page and the layer pages: one page per declared layer, made from the registry (no file per layer)."""

from __future__ import annotations

import functools
import itertools

import streamlit as st

from ..base import numbers
from ..base.layer import Layer
from ..layers import LAYERS, get_layer
from ..network import presets
from ..network.core import Evaluation, evaluate
from ..serve import protocol, shared
from . import extras, home_pictures, links, models, stage, state, widgets, workshop
from .entry import CHAIN_PATH, WAYS_IN
from .figures import table
from .keys import SPEC_TAB, control_key, key
from .messages import guarded, inert
from .view import presenter_on

PAGES_DIR = "app_pages"  # the home page's file; not pages/: see main.py
HOME_ICON = ":material/home:"
PRESENTER_FONT_PX = 20  # Streamlit's default is 16
HEADER_PX, PADDING_X_PX = 60, 24  # Streamlit's top bar with the page navigation; the main area's side padding
# The main area starts under the page navigation and uses the whole width; a collapsed sidebar's controls are out
# of the Tab order too (the keyboard starts at the stage); an open sidebar lies over the page, a drawer, instead of
# narrowing it, so the stage does not reflow (!important: Streamlit writes its position on the element itself).
STAGE_CSS = (
    f'<style>[data-testid="stMainBlockContainer"] {{ max-width: 100%; padding: {HEADER_PX + 12}px '
    f"{PADDING_X_PX}px 3rem; }} "
    '[data-testid="stMain"] h3 { padding: 0; } '
    '[data-testid="stSidebar"][data-collapsed="true"] [data-testid="stSidebarContent"] '
    "{ visibility: hidden; }</style>"
)
# Presenter mode: larger type everywhere (rem-based), black text, stronger borders on alerts and boxes; the home
# page's figures (its metrics) at the size they have without it, whole in a fifth of 1280 px ("tensorrt_rtx").
PRESENTER_CSS = (
    f"<style>html {{ font-size: {PRESENTER_FONT_PX}px; }} "
    '[data-testid="stMetricValue"] { font-size: 1.8rem; } '
    '[data-testid="stMain"] { color: #000; } '
    '[data-testid="stMain"] [data-testid="stCaptionContainer"] { color: #222; } '
    '[data-testid="stMain"] [data-testid="stVerticalBlockBorderWrapper"] { border-color: #555; }</style>'
)
STATUS_TEXT = protocol.ENGINE_STATUS  # the stage says it so too


def page_path(name: str) -> str:
    return f"{PAGES_DIR}/{name}.py"


def layer_pages() -> dict[str, st.Page]:
    """Every declared layer's page, at /NAME: a callable page drawn by `layer_page`."""
    return {
        name: st.Page(functools.partial(layer_page, name), title=layer.title, icon=layer.icon, url_path=name)
        for name, layer in LAYERS.items()
    }


# -- layer pages ------------------------------------------------------------------------------
def layer_page(name: str) -> None:
    guarded(lambda: _layer_page(name))


def _layer_page(name: str) -> None:
    """A layer page: the sidebar (input, view, an ONNX upload) and the stage (playground.stage), one component that
    owns the controls, the figures and the URL; a change is answered by the server's route. This script runs when
    the page opens, when the stage has first painted (the sidebar and the tabs under it, held back till then), when
    the input or the view changes, and when the stage settles on a configuration (the tabs under it follow)."""
    layer = get_layer(name)
    if protocol.PRESET in st.query_params:  # ?preset=NAME: the example's input and parameters, then the stage
        _preset_link(layer)
    node = models.node_link(layer)  # ?onnx=DIGEST&node=NAME: a model's node
    if node is not None and node.opened.shapes:
        _node_inputs(layer, node.opened)
    constants = {n: a.shape for n, a in node.opened.constants.items()} if node is not None else None
    links.check_url(layer, constants)  # drops the URL values the layer refuses (and runs the page again)
    hide = links.hidden(layer)
    inp, view = None, None
    if not stage.painted(layer):  # the stage's first paint comes first: the sidebar (collapsed) follows it
        unseen = widgets.Unseen(layer)
        inp, view = _input(layer, node, unseen), widgets.view_controls(unseen)
    if inp is None or inp.x is None:  # else no stage would paint: the input's controls say what it lacks
        inp, view = _sidebar(layer, node, hide)
    st.html(STAGE_CSS + links.hide_css(layer, hide) + (PRESENTER_CSS if view.presenter else ""))
    _rerun_on_reconnect()
    dropped = _link_problems(layer)
    if inp.error is not None:
        kept = " — the stage shows the last good input." if inp.x is not None else ""
        st.error(inert(str(inp.error) + kept), icon=":material/error:")
    if inp.x is None:
        return
    backend, engines = shared.backend(), shared.engine_cache()

    def run(raw: dict, compare: str | None) -> Evaluation:
        return evaluate(layer.name, raw, inp.x, backend=backend, cache=engines, compare=compare, fit=True)

    def example(chosen: str) -> None:  # the input is the sidebar's; the parameters go to the URL the stage reads
        _open_example(layer, presets.find(layer.name, chosen))

    ev = stage.draw(
        layer, inp.x, run, presenter=view.presenter, hide=tuple(hide), on_example=example, node=node, dropped=dropped
    )
    if not stage.painted(layer):  # the stage's first paint comes first; it asks for the rest at once
        return
    # Of the tabs only the open one is drawn (on_change="rerun"): a page opens without the engine's table.
    names = (
        (["Details"] if layer.section or layer.cell else [])
        + ["Engine", "Downloads"]
        + ([SPEC_TAB] if presets.examples(layer.name) else [])
    )
    tabs = dict(zip(names, st.tabs(names, key=key(layer.name, "tabs"), on_change="rerun")))
    if "Details" in tabs and tabs["Details"].open:  # the layer's own tables and charts, and the picked cell's terms
        with tabs["Details"], st.container(key=control_key(layer.name, "explanation")):
            extras.details(
                ev, stage.picked(layer, ev), view, functools.partial(evaluate, backend=backend, cache=engines)
            )
    if tabs["Engine"].open:
        with tabs["Engine"], st.container(key=control_key(layer.name, "engine")):
            _engine_panel(ev)
            if layer.onnx is not None:  # a layer with no ONNX mapping has no second opinion
                _second_opinions(ev, node.opened if node and node.opened.stands(ev) else None)
    if tabs["Downloads"].open:
        with tabs["Downloads"]:
            workshop.downloads(layer, ev)
    if SPEC_TAB in tabs and tabs[SPEC_TAB].open:
        with tabs[SPEC_TAB]:
            workshop.spec_tab(layer, ev, view)


def _sidebar(layer: Layer, node, hide: list) -> tuple:
    """The sidebar: the input's controls, the view's, an ONNX upload; (the input form, the view options)."""
    with st.sidebar:
        titles = [t.capitalize() for t in links.TABS]  # the order `hide` counts on; the first not hidden opens
        shown_first = next((t for t in titles if t.lower() not in hide), titles[0])
        input_tab, view_tab = st.tabs(titles, default=shown_first)
    with input_tab, st.container(key=control_key(layer.name, "input")):
        inp = _input(layer, node, st)
    with view_tab, st.container(key=control_key(layer.name, "view")):
        view = widgets.view_controls()
        if hide:
            st.caption("Hidden by the link (`hide`): " + ", ".join(hide))
            st.button(
                "Show everything",
                key=key(layer.name, "show_all"),
                on_click=links.show_all,
                icon=":material/visibility:",
            )
    with st.sidebar:
        models.uploader(key(layer.name, "onnx_upload"), layer_pages(), page_path("model"))
    return inp, view


def _input(layer: Layer, node, ui) -> widgets.InputForm:
    """The input the controls hold (`ui`: Streamlit, or widgets.Unseen: not drawn)."""
    inp = models.node_input(widgets.input_controls(layer, ui), node)  # a model page's link: the node's real input
    if node is not None and node.opened.constants and isinstance(inp.x, dict):
        inp.x = {**inp.x, **node.opened.constants}  # the model's constants, not the controls' pattern
        ui.caption(
            "From the model: "
            + ", ".join(f"input {n.upper()} {tuple(a.shape)}" for n, a in node.opened.constants.items())
            + " (its constant)."
        )
    return inp


def _node_inputs(layer: Layer, opened) -> None:
    """A model's node of several inputs, the first run of a session: each input the model computes takes its shape
    and the seeded pattern (the first's is set with the node); a constant comes from the model on every run."""
    done = f"_onnx_inputs.{layer.name}"
    if st.session_state.get(done) == (opened.model, opened.node):
        return
    st.session_state[done] = (opened.model, opened.node)
    widgets.write_input(
        layer,
        {
            n: {"kind": "random", "shape": s, "seed": i, "low": -4.0, "high": 4.0}
            for i, (n, s) in enumerate(opened.shapes.items())
            if i > 0 and n not in opened.constants
        },
    )


def _open_example(layer: Layer, preset: presets.Preset) -> None:
    """An example or lesson: its input to the sidebar's controls, its parameters to the URL the stage reads."""
    widgets.write_input(layer, preset.input)
    shape = preset.input_shape  # {input name: shape} for a layer of several inputs; the parameters read the first's
    first = shape[layer.input_names[0]] if isinstance(shape, dict) else shape
    stage.set_query(layer, layer.resolve(preset.params, shape), first, shape if isinstance(shape, dict) else None)


def _preset_link(layer: Layer) -> None:
    """An example's link (?preset=NAME) opens it: `preset` goes (the URL then says it all). An unknown name is
    named. A parameter the link also gives is the link's, over the example's, and checked as any link's value; an
    input control it gives is the example's (its input is the example), and is named as ignored."""
    name = st.query_params[protocol.PRESET]
    del st.query_params[protocol.PRESET]
    own = {k: st.query_params[k] for k in links.param_keys(layer) if k in st.query_params}
    inputs = [
        k for k in links.fields(layer) if k.startswith(protocol.input_key(layer, "", "")) and k in st.query_params
    ]
    try:
        preset = presets.find(layer.name, name)
    except KeyError:
        known = ", ".join(p.name for p in presets.examples(layer.name)) or "none"
        state.PageState(layer.name).setdefault("url_problems", []).append(
            f'URL parameter preset: {layer.name} has no example "{links.quoted(name)}" (it has: {known}) — ignored.'
        )
        return
    _open_example(layer, preset)
    for k, v in own.items():
        st.query_params[k] = v
    problems = state.PageState(layer.name).setdefault("url_problems", [])
    problems += [f"URL parameter {k}: the example {preset.name} sets the input — ignored." for k in inputs]


def _link_problems(layer: Layer) -> dict[str, str]:
    """What the link asked that the page does not use: one box, one line per message, and the sidebar's controls of
    those keys outlined; {key: message} for the stage, which marks its own."""
    problems = links.take_problems(layer)
    if not problems:
        return {}
    st.warning(
        "\n".join(f"- {inert(m)}" for m in problems) if len(problems) > 1 else inert(problems[0]),
        icon=":material/link_off:",
    )
    dropped = links.dropped(layer)
    css = links.dropped_css(k for k in dropped if k in links.fields(layer))
    if css:
        st.html(css)
    return dropped


@st.fragment(run_every=600)
def _rerun_on_reconnect() -> None:
    """Nothing to see. Streamlit's page runs its script again after its websocket reconnects only where a fragment
    reruns on a timer (its frontend's App.tsx: autoRerunIntervals): with this one (every 10 minutes: it costs next
    to nothing), a page whose replica was lost (a room behind a proxy) runs on the live replica it reconnects to, on
    the configuration its URL holds, and its stage gets a seat there."""
    st.empty()


def _engine_panel(ev: Evaluation) -> None:
    b, s = ev.backend, ev.engine_summary()
    with st.expander("Engine", expanded=True, icon=":material/memory:"):
        st.markdown(
            f"**{b.name} {b.version or ''}** · device: **{b.device}** · "
            f"can build: **{'yes' if b.can_build else 'no'}** · can run: **{'yes' if b.can_run else 'no'}**"
        )
        st.markdown(f"Output shown: **{ev.source_label}**")
        _passed_over(b)
        diff = "not run" if ev.max_abs_diff is None else numbers.compact(ev.max_abs_diff)
        shape = str(tuple(s["output_shape"])) if s["output_shape"] else "—"
        size = f"{s['bytes']:,} bytes" if s["bytes"] else "—"
        st.markdown(
            "| engine | engine size | TensorRT's output shape | max \\|TensorRT − reference\\| |\n"
            "|---|---|---|---|\n"
            f"| {STATUS_TEXT.get(s['status'], s['status'])} | {size} | {shape} | {diff} |"
        )
        with st.container(key=f"volatile-{ev.layer}-timing"):  # masked in documentation snapshots
            build = "—" if s["build_ms"] is None else f"{s['build_ms']:.1f} ms"
            latency = "not measured (no GPU run)" if ev.latency_ms is None else f"{ev.latency_ms:.4f} ms"
            st.markdown(
                f"Build time **{build}**{' (when first built)' if s['status'] == 'cached' else ''} · "
                f"latency **{latency}**"
            )
        layers, log = s["layers"], s["log"]
        st.markdown(f"**Engine layers** ({len(layers)})")
        if layers:
            fmt = lambda ts: "; ".join(f"{t['shape']} {t['format']}" for t in ts)  # noqa: E731
            table(
                [
                    {
                        "name": l["name"],
                        "type": l["type"],
                        "inputs": fmt(l["inputs"]),
                        "outputs": fmt(l["outputs"]),
                        "tactic": l["tactic"],
                    }
                    for l in layers
                ],
                key(ev.layer, "engine_layers"),
                width="stretch",
            )
        else:
            st.caption("No engine, so no layers to list.")
        st.markdown(f"**TensorRT log** ({len(log)} warnings and errors)")
        if log:
            st.code("\n".join(f"[{sev}] {msg}" for sev, msg in log), language=None, wrap_lines=True)
        else:
            st.caption("TensorRT reported no warnings or errors.")
        if s["cache_key"]:
            st.caption(f"Engine cache key {s['cache_key']}")


def _second_opinions(ev: Evaluation, opened) -> None:
    """ONNX Runtime's answer and TensorRT's ONNX parser's network beside the layer's own build."""
    from ..onnx.opinions import second_opinions
    from ..onnx.runtime import worst_text

    o = second_opinions(ev, opened)
    ort, parser = o["onnxruntime"], o["onnx_parser"]
    st.markdown(f"**Second opinions** on {ort.get('model', 'the configuration')} (ONNX, float32)")
    if ort.get("agrees"):
        st.success(
            f"ONNX Runtime {ort['version']} agrees with {ort['compared_to']}, cell by cell: max |difference| "
            f"{numbers.compact(ort['max_abs_diff'])}; {worst_text(ort, numbers.compact)}.",
            icon=":material/check_circle:",
        )
    else:
        why = ort.get("rule") or ort.get("why") or ort.get("error") or "no known rule explains it"
        if ort.get("worst"):
            why += f" ({ort.get('cells_differ', 0)} cell(s) over; {worst_text(ort, numbers.compact)})"
        st.warning(
            inert(f"ONNX Runtime {ort.get('version') or ''} differs from {ort.get('compared_to')}: {why}."),
            icon=":material/difference:",
        )
    if parser is None or parser.get("status") == "not_built":
        why = (parser or {}).get("why", "no parser")
        st.caption(inert(f"TensorRT's ONNX parser: {STATUS_TEXT['not_built']} ({why})."))
        return
    if parser.get("error"):
        st.warning(inert(f"{parser['parser']}: {parser['error']}"), icon=":material/error:")
        return
    same = "the same output shape" if parser["same_output_shape"] else "another output shape"
    layers = "the same engine layers" if parser["same_layers"] else parser.get("difference", "other engine layers")
    st.markdown(
        inert(
            f"{parser['parser']} built the model ({STATUS_TEXT.get(parser['status'], parser['status'])}): "
            f"output {tuple(parser['output_shape'] or ())}, {same} as the layer's build, {layers}."
        )
    )
    pairs = itertools.zip_longest(parser["layers"], parser.get("layer_build", []), fillvalue="")
    table([{"parser's network": a, "layer's build": b} for a, b in pairs], key=key(ev.layer, "parser_layers"))


def _passed_over(b) -> None:
    """Why a TensorRT that is installed is not the one in use (full TensorRT with no GPU it can use)."""
    for why in b.passed_over:
        st.text(f"Not used: {why}.")  # TensorRT's words, shown as they are (no markdown)


# -- home -------------------------------------------------------------------------------------
def home_page(chain_page) -> None:
    """`chain_page`: the chain page's function (ui.chain, which draws on this module: handed in, not imported)."""
    guarded(lambda: _home_page(chain_page))


def _home_page(chain_page) -> None:
    # What costs nothing first (the title, the ways in): the machine's backend is looked up after them
    if presenter_on():
        st.html(PRESENTER_CSS)
    st.title("TensorRT Layer Playground", anchor=False)
    st.markdown(
        "Move a parameter and a real TensorRT engine is built for exactly that configuration: the tensors drawn as "
        "heatmaps beside the engine TensorRT built. Invalid combinations are caught with the rule they break; the "
        "last valid result stays on screen."
    )
    pages = layer_pages()
    ways = (  # the skeleton served with the page (entry.HOME_SKELETON) names them too
        (
            pages["convolution"],
            "Convolution, or any of the 20 layers below",
            "Move a layer's parameters: every output cell, the input window it reads, the engine TensorRT built.",
        ),
        (
            st.Page(chain_page, title="Chain", url_path=CHAIN_PATH),
            "The chain page",
            "Chain layers and see which ones TensorRT fuses into one kernel (Convolution → ReLU does).",
        ),
        (
            page_path("model"),
            "The model page",
            "Open an ONNX model: its graph, each node on its real input, its verdict, what TensorRT fused.",
        ),
    )
    for i, (col, title, picture, (page, label, text)) in enumerate(
        zip(st.columns(3), WAYS_IN, home_pictures.PICTURES, ways)
    ):
        with col.container(border=True, height="stretch", key=f"home-way-{i}"):
            st.subheader(title, anchor=False)
            st.html(picture)
            st.markdown(text)
            st.page_link(page, label=label, icon=":material/arrow_forward:")
    with st.container(border=True):
        st.subheader("Your model", anchor=False)
        st.caption(
            "Upload an ONNX model: its whole graph on the Model page, and each node on its layer's page with every "
            "attribute set and its weights (also on the command line: `python -m playground onnx model.onnx`)."
        )
        models.uploader("home.onnx_upload", pages, page_path("model"))
    b = shared.backend()
    with st.container(border=True):
        st.subheader("On this machine", anchor=False)
        cols = st.columns(5)
        cols[0].metric("Backend", b.name)
        cols[1].metric("Version", b.version or "—")
        cols[2].metric("Builds engines", "yes" if b.can_build else "no")
        cols[3].metric("Runs engines", "yes" if b.can_run else "no")
        cols[4].metric("Device", b.device)
        if b.can_run:
            st.success(
                f"Outputs come from TensorRT on {b.device}, checked against the NumPy reference.",
                icon=":material/bolt:",
            )
        elif b.can_build:
            st.info(
                f"TensorRT builds every engine here, so shapes, engine layers, formats and build errors "
                f"are TensorRT's own; the output shown is the NumPy reference ({b.why_not_run}).",
                icon=":material/calculate:",
            )
        else:
            st.warning(f"No engine is built here: {b.why_not_run}.", icon=":material/warning:")
        _passed_over(b)
    st.subheader("Layers", anchor=False)
    cols = st.columns(3)
    for i, (name, layer) in enumerate(LAYERS.items()):
        with cols[i % 3].container(border=True, height="stretch"):
            st.page_link(pages[name], label=layer.title, icon=layer.icon)
            st.markdown(layer.summary)
            st.caption("Parameters: " + ", ".join(layer.param_names))
    st.caption("Also on the command line: `python -m playground run convolution --set stride_nd=2,2 --json`")
