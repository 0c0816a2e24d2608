"""The home page and the layer pages: every file in app_pages/ calls one function here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import streamlit as st

from .. import plots, presets
from ..core import Evaluation, evaluate
from ..errors import ValidationError
from ..inputs import InputError
from ..layer import Layer
from ..layers import LAYERS, get_layer
from . import extras, links, state, widgets, workshop
from .state import ViewOptions, control_key

PAGES_DIR = "app_pages"  # not pages/: see app.py
HOME_ICON = ":material/home:"
PRESENTER_FONT_PX = 20  # Streamlit's default is 16
SIDEBAR_PX = 360  # room for a 3 × 3 kernel table
# Presenter mode: larger type everywhere (rem-based), black text, stronger borders on alerts and boxes.
PRESENTER_CSS = (f"<style>html {{ font-size: {PRESENTER_FONT_PX}px; }} "
                 '[data-testid="stMain"] { color: #000; } '
                 '[data-testid="stMain"] [data-testid="stCaptionContainer"] { color: #222; } '
                 '[data-testid="stMain"] [data-testid="stVerticalBlockBorderWrapper"] { border-color: #555; } '
                 '[data-testid="stMainBlockContainer"] { max-width: 100%; padding-top: 3rem; }</style>')


STATUS_TEXT = {"built": "built now", "cached": "from cache", "failed": "failed", "not_built": "not built"}


def page_path(layer: str) -> str:
    return f"{PAGES_DIR}/{layer}.py"


# -- layer pages ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    message: str
    param: str | None  # the parameter or input control it names, if any
    slot: Any = None  # the placeholder under that control


def guarded(draw: Callable[[], None]) -> None:
    """Run a page; a bug shows as one error line, never as a traceback in front of a room."""
    try:
        draw()
    except Exception as exc:  # Streamlit's rerun/stop signals are BaseExceptions and pass through
        st.error(f"Unexpected error ({type(exc).__name__}): {exc}", icon=":material/error:")


def layer_page(name: str) -> None:
    guarded(lambda: _layer_page(name))


def _layer_page(name: str) -> None:
    layer = get_layer(name)
    workshop.chosen_now(layer)  # a full run draws the input controls a spec example set anyway
    links.preset_from_url(layer)  # ?preset=NAME: writes the controls before they are drawn
    links.check_url(layer)  # drops the URL values the layer refuses (and runs the page again)
    hide = links.hidden(layer)
    with st.sidebar:
        link_slot = st.container(key=control_key(name, "link"))
        titles = [t.capitalize() for t in links.TABS]  # the order `hide` counts on; the first not hidden opens
        shown_first = next((t for t in titles if t.lower() not in hide), titles[0])
        params_tab, input_tab, view_tab = st.tabs(titles, default=shown_first)
    with input_tab, st.container(key=control_key(name, "input")):  # first: defaults and presets need the shape
        inp = widgets.input_controls(layer)
    params_box = params_tab.container(key=control_key(name, "parameters"))
    with view_tab, st.container(key=control_key(name, "view")):
        view = widgets.view_controls(layer)
        if hide:
            st.caption("Hidden by the link (`hide`): " + ", ".join(hide))

    css = links.hide_css(layer, hide)
    if view.presenter:  # the page's own text grows with the figures (rem-based: everything scales)
        css += PRESENTER_CSS
    if css:
        st.html(css)
    st.title(layer.title, anchor=False)
    link_problems = links.take_problems(layer)
    if link_problems:  # one box, one line per parameter
        st.warning("\n".join(f"- {m}" for m in link_problems) if len(link_problems) > 1 else link_problems[0],
                   icon=":material/link_off:")
    st.markdown(layer.summary)
    _results(layer, inp, view, params_box, link_slot)


@st.fragment
def _results(layer: Layer, inp: widgets.InputForm, view: ViewOptions, params_box, link_slot) -> None:
    """The parameters (drawn into the sidebar's Parameters tab) and all they change. A parameter change reruns
    only this: the input and view controls, the title and the summary are neither rebuilt nor redrawn."""
    guarded(lambda: _results_body(layer, inp, view, params_box, link_slot))


def _results_body(layer: Layer, inp: widgets.InputForm, view: ViewOptions, params_box, link_slot) -> None:
    name = layer.name
    if workshop.chosen_now(layer) or links.preset_pending(layer):
        st.rerun()  # the input controls or the URL, outside this fragment, must be written again
    with params_box:
        form = widgets.param_controls(layer, inp.shape)
    with st.spinner(f"Building the TensorRT engine for this {layer.title} configuration …", show_time=True):
        current, problem = _evaluate(layer.name, form, inp)
    if problem and problem.slot is not None:
        problem.slot.error(problem.message, icon=":material/error:")
    if current is not None:
        state.remember(name, current)
    shown = current or state.last_good(name)
    preset = workshop.current_preset(layer, current)
    cmp = presets.compare(preset, current.output) if preset is not None else None

    workshop.preset_picker(layer, preset, cmp)
    if shown is not None and layer.formula:
        with st.container(border=True, key=control_key(name, "formula")):
            st.markdown(f"#### {layer.formula(shown.params)}")
    if problem:
        where = f" — fix **{problem.param}** in the sidebar." if problem.slot is not None else ""
        if problem.slot is not None and problem.param not in form.slots:
            where = f" — fix **{problem.param}** in the sidebar's Input tab."
        st.error(problem.message + where, icon=":material/error:")
    if shown is None:
        st.info("No valid configuration yet: fix the parameter above to see the output.")
        _link(link_slot)
        links.page_drawn(layer)
        return
    if problem:
        st.warning("Stale — showing the last valid configuration.", icon=":material/history:")
    if shown.error:
        st.error(f"TensorRT could not build this configuration; the output is the NumPy reference. "
                 f"TensorRT said: {shown.error}", icon=":material/build:")
    spec = preset.expected if preset is not None else None
    _tensors(shown, view, spec)
    if preset is not None and cmp is not None:
        workshop.spec_panel(layer, preset, cmp, shown)
    workshop.downloads(layer, shown)
    for note in shown.messages:
        st.info(note, icon=":material/info:")
    with st.container(key=control_key(name, "explanation")):
        _extras(layer.name, shown, view)
    with st.container(key=control_key(name, "engine")):
        _engine_panel(shown)
    _link(link_slot)
    links.page_drawn(layer)


def _link(slot) -> None:
    """The "Copy link" box at the top of the sidebar, written last: by then every widget has put its value
    in the URL."""
    with slot:
        st.markdown(":small[**Copy link** to this configuration: the box's copy icon, on hover]")
        st.code(links.share_link(), language=None, wrap_lines=False)


def _evaluate(layer: str, form: widgets.ParamForm, inp: widgets.InputForm) -> tuple[Evaluation | None, Problem | None]:
    try:
        if inp.error is not None:
            raise inp.error
        return evaluate(layer, form.raw, inp.x, backend=state.backend(), cache=state.engine_cache()), None
    except ValidationError as exc:
        slot = form.slots.get(exc.param) or inp.slot_for(exc.param)
        return None, Problem(str(exc), exc.param, slot)
    except InputError as exc:
        return None, Problem(str(exc), exc.param, inp.slot_for(exc.param))
    except Exception as exc:  # anything else is a bug, but the page must still answer, not crash
        return None, Problem(f"Unexpected error ({type(exc).__name__}): {exc}", None)


def stats_text(stats: dict) -> str:
    """The numbers a heatmap shows, as text (from its cached figure's stats, so a revisit computes nothing):
    shape, range, mean, non-finite counts, decimation."""
    parts = [f"shape {stats['shape']}"]
    if stats["zmin"] is not None:
        c = plots.fmt_compact
        parts += [f"min {c(stats['zmin'])}", f"max {c(stats['zmax'])}", f"mean {c(stats['mean'])}"]
    bad = [(stats["nan"], "NaN"), (stats["posinf"], "+Inf"), (stats["neginf"], "−Inf")]
    parts.append(" · ".join(f"{n} {tag}" for n, tag in bad if n) or "no NaN or Inf")
    if stats["decimated"] > 1:
        d = stats["decimated"]
        parts.append(f"drawn every {d}th cell ({d}×{d} blocks; NaN/Inf in a block still shown)")
    return " · ".join(parts)


def _tensors(ev: Evaluation, view: ViewOptions, spec: np.ndarray | None = None) -> None:
    """Input and output heatmaps side by side, with what the layer's section outlines on them, and the
    spec's documented output where one is on screen."""
    st.markdown(f"#### Input {ev.input.shape} → Output {ev.output.shape}")
    tensorrt = ev.output_source == "tensorrt"
    st.badge(ev.source_label, icon=":material/bolt:" if tensorrt else ":material/calculate:",
             color="green" if tensorrt else "orange")
    zrange = plots.color_range([ev.input, ev.output], shared=True)[0] if view.shared_scale else None
    marks = _marks(ev)
    out_title = "Output (TensorRT)" if tensorrt else "Output (NumPy reference)"
    figs = [(ev.input, "Input", "input", marks.input), (ev.output, out_title, "output", marks.output)]
    if spec is not None:
        figs.append((spec, "Spec's output (as documented)", "spec", {}))
    # Side by side where the browser has room, one under the other where it has not.
    with st.container(horizontal=True, wrap=True, gap="large"):
        for t, title, which, outlines in figs:
            fig, stats = state.tensor_figure(t, title, view.shared_scale, view.presenter, zrange, **outlines)
            click = {}
            if which == "output" and marks.on_select is not None:
                click = dict(on_select=marks.on_select(fig), selection_mode="points")
            with st.container(width=fig.layout.width):
                state.chart(fig, state.figure_key(ev.layer, which), filename=f"{ev.layer}_{which}", **click)
                st.caption(("the spec's table · " if which == "spec" else "") + stats_text(stats))


def _marks(ev: Evaluation) -> extras.Marks:
    """The layer section's outlines for the heatmaps; none if it fails (its own section says why)."""
    draw = extras.MARKS.get(ev.layer)
    try:
        return draw(ev) if draw else extras.Marks()
    except Exception:
        return extras.Marks()


def _extras(layer: str, ev: Evaluation, view: ViewOptions) -> None:
    """The layer's own section (ui.extras); a failure there is one warning, not a broken page."""
    draw: Callable | None = extras.EXTRAS.get(layer)
    if draw is None:
        return
    try:
        draw(ev, view)
    except Exception as exc:
        st.warning(f"The {layer} explanation failed: {type(exc).__name__}: {exc}")


def _engine_panel(ev: Evaluation) -> None:
    b, s = ev.backend, ev.engine_summary()
    with st.expander("Engine", expanded=True, icon=":material/memory:"):
        st.markdown(f"**{b.name} {b.version or ''}** · device: **{b.device}** · "
                    f"can build: **{'yes' if b.can_build else 'no'}** · can run: **{'yes' if b.can_run else 'no'}**")
        st.markdown(f"Output shown: **{ev.source_label}**")
        diff = "not run" if ev.max_abs_diff is None else plots.fmt_compact(ev.max_abs_diff)
        shape = str(tuple(s["output_shape"])) if s["output_shape"] else "—"
        size = f"{s['bytes']:,} bytes" if s["bytes"] else "—"
        st.markdown("| engine | engine size | TensorRT's output shape | max \\|TensorRT − reference\\| |\n"
                    "|---|---|---|---|\n"
                    f"| {STATUS_TEXT.get(s['status'], s['status'])} | {size} | {shape} | {diff} |")
        with st.container(key=f"volatile-{ev.layer}-timing"):  # masked in documentation snapshots
            build = "—" if s["build_ms"] is None else f"{s['build_ms']:.1f} ms"
            latency = "not measured (no GPU run)" if ev.latency_ms is None else f"{ev.latency_ms:.4f} ms"
            st.markdown(f"Build time **{build}**{' (when first built)' if s['status'] == 'cached' else ''} · "
                        f"latency **{latency}**")
        layers, log = s["layers"], s["log"]
        st.markdown(f"**Engine layers** ({len(layers)})")
        if layers:
            fmt = lambda ts: "; ".join(f"{t['shape']} {t['format']}" for t in ts)  # noqa: E731
            state.table([{"name": l["name"], "type": l["type"], "inputs": fmt(l["inputs"]), "outputs": fmt(l["outputs"]),
                         "tactic": l["tactic"]} for l in layers], state.key(ev.layer, "engine_layers"), width="stretch")
        else:
            st.caption("No engine, so no layers to list.")
        st.markdown(f"**TensorRT log** ({len(log)} warnings and errors)")
        if log:
            st.code("\n".join(f"[{sev}] {msg}" for sev, msg in log), language=None, wrap_lines=True)
        else:
            st.caption("TensorRT reported no warnings or errors.")
        if s["cache_key"]:
            st.caption(f"Engine cache key {s['cache_key']}")


# -- home -------------------------------------------------------------------------------------
def home_page() -> None:
    guarded(_home_page)


def _home_page() -> None:
    if state.presenter_on():
        st.html(PRESENTER_CSS)
    st.title("TensorRT Layer Playground", anchor=False)
    st.markdown(
        "Pick a layer, move a parameter, and a real TensorRT engine is built for exactly that "
        "configuration. The input and output tensors are drawn as heatmaps, next to the engine TensorRT "
        "built: its layers, formats, tactics, build time and log. Invalid combinations are caught with the "
        "rule they break; the last valid result stays on screen.")
    b = state.backend()
    with st.container(border=True):
        st.subheader("On this machine", anchor=False)
        cols = st.columns(5)
        cols[0].metric("Backend", b.name)
        cols[1].metric("Version", b.version or "—")
        cols[2].metric("Builds engines", "yes" if b.can_build else "no")
        cols[3].metric("Runs engines", "yes" if b.can_run else "no")
        cols[4].metric("Device", b.device)
        if b.can_run:
            st.success(f"Outputs come from TensorRT on {b.device}, checked against the NumPy reference.",
                       icon=":material/bolt:")
        elif b.can_build:
            st.info(f"TensorRT builds every engine here, so shapes, engine layers, formats and build errors "
                    f"are TensorRT's own; the output shown is the NumPy reference ({b.why_not_run}).",
                    icon=":material/calculate:")
        else:
            st.warning(f"No engine is built here: {b.why_not_run}.", icon=":material/warning:")
    st.subheader("Layers", anchor=False)
    cols = st.columns(3)
    for i, (name, layer) in enumerate(LAYERS.items()):
        with cols[i % 3].container(border=True, height="stretch"):
            st.page_link(page_path(name), label=layer.title, icon=layer.icon)
            st.markdown(layer.summary)
            st.caption("Parameters: " + ", ".join(layer.param_names))
    st.caption("Also on the command line: `python -m playground run convolution --set stride_nd=2,2 --json`")
