"""The home page and the layer pages: one page per declared layer, made from the registry (no file per layer)."""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from .. import numbers, plots, presets, section
from ..core import Evaluation, evaluate
from ..errors import ValidationError
from ..inputs import InputError
from ..layer import PRECISION_PARAMS, Layer
from ..prefetch import neighbours
from ..layers import LAYERS, get_layer
from ..style import stage_overhead_px
from . import extras, heatmap, instrument, links, models, stage, state, widgets, workshop
from .keys import STAGE_FRAGMENT, VIEW_INSTRUMENT, control_key, figure_key, key
from .state import ViewOptions, guarded

PAGES_DIR = "app_pages"  # the home page's file; not pages/: see app.py
HOME_ICON = ":material/home:"
PRESENTER_FONT_PX = 20  # Streamlit's default is 16
# The stage: the main area starts under the page navigation and uses the whole width; the controls panel and
# the precision row are compact (no min/max ticks under sliders, tighter rows; the row's disabled scale says
# nothing more under it); the viewport probe takes no room.
STAGE_CSS = (f'<style>[data-testid="stMainBlockContainer"] {{ max-width: 100%; padding: {stage.HEADER_PX + 12}px '
             f'{stage.PADDING_X_PX}px 3rem; }} '
             '.st-key-viewport-probe { display: none; } '
             ':is([class*="-parameters"], [class*="-precision_row"]) :is([data-testid="stSliderTickBarMin"], '
             '[data-testid="stSliderTickBarMax"]) { display: none; } '
             '[class*="-precision_row"] [data-testid="stElementContainer"]:has([data-testid="stCaptionContainer"]) '
             '{ display: none; } '
             '[class*="-parameters"] [data-testid="stVerticalBlock"] { gap: 0.35rem; } '
             '[data-testid="stMain"] h3 { padding: 0; } '
             # a collapsed sidebar's controls are out of the Tab order too: the keyboard starts at the stage
             '[data-testid="stSidebar"][data-collapsed="true"] [data-testid="stSidebarContent"] '
             '{ visibility: hidden; }</style>')
# On the instrument stage an open sidebar lies over the page, a drawer, instead of narrowing it: the stage does not
# reflow (!important: Streamlit writes its position on the element itself).
DRAWER_CSS = ('<style>[data-testid="stSidebar"][data-collapsed="false"] { position: fixed !important; left: 0; '
              'top: 0; height: 100vh !important; z-index: 999990; box-shadow: 4px 0 16px rgba(0, 0, 0, 0.2); }</style>')
# Presenter mode: larger type everywhere (rem-based), black text, stronger borders on alerts and boxes.
PRESENTER_CSS = (f"<style>html {{ font-size: {PRESENTER_FONT_PX}px; }} "
                 '[data-testid="stMain"] { color: #000; } '
                 '[data-testid="stMain"] [data-testid="stCaptionContainer"] { color: #222; } '
                 '[data-testid="stMain"] .pg-caption { color: #222; opacity: 1; } '
                 '[data-testid="stMain"] [data-testid="stVerticalBlockBorderWrapper"] { border-color: #555; }</style>')


PRECISION_NAMES = tuple(p.name for p in PRECISION_PARAMS)  # drawn in the row over the figures
STATUS_TEXT = {"built": "built now", "cached": "from cache", "refused": "refused by the builder", "failed": "failed",
               "not_built": "not built"}


def page_path(name: str) -> str:
    return f"{PAGES_DIR}/{name}.py"


def layer_pages() -> dict[str, st.Page]:
    """Every declared layer's page, at /NAME: a callable page drawn by `layer_page`."""
    return {name: st.Page(functools.partial(layer_page, name), title=layer.title, icon=layer.icon, url_path=name)
            for name, layer in LAYERS.items()}


# -- layer pages ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    message: str
    param: str | None  # the parameter or input control it names, if any
    slot: Any = None  # the placeholder under that input control (a parameter's control shows its own)


def layer_page(name: str) -> None:
    guarded(lambda: _layer_page(name))


def _layer_page(name: str) -> None:
    layer = get_layer(name)
    if _instrument_on() and links.PRESET_PARAM in st.query_params:  # ?preset=NAME on the instrument stage
        _preset_link(layer)
    node = models.node_link(layer) if _instrument_on() else None  # ?onnx=DIGEST&node=NAME: a model's node
    workshop.chosen_now(layer)  # a full run draws the input controls a spec example set anyway
    from_url = links.preset_from_url(layer)  # ?preset=NAME: writes the controls before they are drawn
    if from_url is not None:
        _focus_demonstrated(layer, from_url)
    links.check_url(layer)  # drops the URL values the layer refuses (and runs the page again)
    hide = links.hidden(layer)
    with st.sidebar:
        link_slot = None  # the instrument stage shows its own link, which it keeps as values change
        if not _instrument_on():
            with st.container(key=control_key(name, "link")):  # the label once; the stage's run writes the link
                st.markdown(":small[**Copy link** to this configuration: the box's copy icon, on hover]")
                link_slot = st.empty()
        titles = [t.capitalize() for t in links.TABS]  # the order `hide` counts on; the first not hidden opens
        shown_first = next((t for t in titles if t.lower() not in hide), titles[0])
        input_tab, view_tab = st.tabs(titles, default=shown_first)
    with input_tab, st.container(key=control_key(name, "input")):  # first: defaults and presets need the shape
        inp = widgets.input_controls(layer)
    with view_tab, st.container(key=control_key(name, "view")):
        view = widgets.view_controls(layer)
        if hide:
            st.caption("Hidden by the link (`hide`): " + ", ".join(hide))
            st.button("Show everything", key=key(name, "show_all"), on_click=links.show_all,
                      icon=":material/visibility:")
    if view.instrument:
        with st.sidebar:
            models.uploader(key(name, "onnx_upload"))
        _instrument_page(layer, inp, view, hide, node)
        return
    size = stage.viewport()
    st.html(STAGE_CSS + links.hide_css(layer, hide) + (PRESENTER_CSS if view.presenter else ""))
    if not view.presenter:  # a room needs the stage, not the title block
        with st.container(key=control_key(name, "title"), horizontal=True, vertical_alignment="center", gap="medium"):
            st.markdown(f"### {layer.title}")
            st.caption(layer.summary + " Input pattern and size, view options: the sidebar (›).")
    _link_problems(layer)
    box = stage.layout(*size, view.presenter, cell_row=layer.reads is not None)
    controls, figures = st.columns([box.controls_w, box.figures_w], gap="medium")
    # The precision row heads the figures: a presenter switches FP32 → FP16 where the room looks.
    precision_row = figures.container(key=control_key(name, "precision_row"), horizontal=True, gap="medium",
                                      vertical_alignment="top")
    with controls, st.container(key=control_key(name, "parameters"), height=box.controls_h, border=False):
        picker = st.container()  # the spec example sets every control below it; the stage draws its match
        widgets.param_controls(layer, inp.shape, places=dict.fromkeys(PRECISION_NAMES, precision_row))
    with precision_row, st.container(key=control_key(name, "compare")):
        widgets.compare_control(layer, inp.shape)
    with figures:
        _results(layer, inp, view, link_slot, box, picker)


# A control's change reruns the stage, and the controls it changes (widgets.Changed: each parameter's control is
# a fragment); the input and view controls and the title are neither rebuilt nor redrawn.
@st.fragment(key=STAGE_FRAGMENT)
def _results(layer: Layer, inp: widgets.InputForm, view: ViewOptions, link_slot, box: stage.Layout, picker) -> None:
    """The stage (the figures beside the controls panel, the spec example over it) and all below it."""
    guarded(lambda: _results_body(layer, inp, view, link_slot, box, picker))


def _results_body(layer: Layer, inp: widgets.InputForm, view: ViewOptions, link_slot, box: stage.Layout,
                  picker) -> None:
    name = layer.name
    if workshop.chosen_now(layer) or links.preset_pending(layer):
        chosen = state.PageState(name).get("preset_chosen")
        if chosen:
            _focus_demonstrated(layer, presets.find(name, chosen))
        st.rerun()  # the input controls or the URL, outside this fragment, must be written again
    form, compare = widgets.param_form(layer, inp.shape), widgets.compare_choice(layer)
    with st.spinner(f"Building the TensorRT engine for this {layer.title} configuration …", show_time=True):
        current, problem = _evaluate(layer.name, form, inp, compare)
    if problem and problem.slot is not None:
        problem.slot.error(state.inert(problem.message), icon=":material/error:")
    if current is not None:
        state.remember(name, current)
    shown = current or state.last_good(name)
    preset = workshop.current_preset(layer, current)
    cmp = presets.compare(preset, current.output, current.precision_error) if preset is not None else None
    with picker:
        workshop.preset_picker(layer, preset, cmp)
    with st.container(key=control_key(name, "stage")):
        _stage(layer, shown, problem, preset, cmp, view, box)
    if shown is None:
        _link(link_slot)
        links.page_drawn(layer)
        return
    # Lazy: of the other tabs only the open one runs, so a parameter change does not rebuild (nor the browser
    # redraw) panels nobody is looking at. The explanation always runs: it holds the picked cell's index inputs,
    # which keep the cell in the share link.
    below = st.tabs(list(state.BELOW_STAGE), key=key(name, "tabs"), on_change="rerun")  # state.open_tab
    opened = dict(zip(state.BELOW_STAGE, below))
    with opened["Explanation"], st.container(key=control_key(name, "explanation")):
        for note in shown.messages:
            st.info(state.inert(note), icon=":material/info:")
        _extras(layer.name, shown, view)
    if opened[state.SPEC_TAB].open:
        with opened[state.SPEC_TAB]:
            _spec_tab(layer, preset, cmp, shown, view)
    if opened["Engine"].open:
        with opened["Engine"], st.container(key=control_key(name, "engine")):
            _engine_panel(shown)
    if opened["Downloads"].open:
        with opened["Downloads"]:
            workshop.downloads(layer, shown)
    _link(link_slot)
    links.page_drawn(layer)


def _instrument_on() -> bool:
    """The instrument stage, before the View tab's toggle is drawn: its value in this session, else the link's,
    else the default (widgets.instrument_default)."""
    value = st.session_state.get(VIEW_INSTRUMENT)
    if value is None:
        given = st.query_params.get(VIEW_INSTRUMENT, "").strip().lower()
        value = given == "true" if given in ("true", "false") else widgets.instrument_default()
    return bool(value)


def _preset_link(layer: Layer) -> None:
    """An example's link (?preset=NAME) opens it on the instrument stage: its input to the sidebar, its parameters
    to the URL the stage reads, and `preset` gone (the URL now says it all). An unknown name is named."""
    name = st.query_params[links.PRESET_PARAM]
    del st.query_params[links.PRESET_PARAM]
    try:
        preset = presets.find(layer.name, name)
    except KeyError:
        known = ", ".join(p.name for p in presets.examples(layer.name)) or "none"
        state.PageState(layer.name).setdefault("url_problems", []).append(
            f"URL parameter preset: {layer.name} has no example \"{links.quoted(name)}\" (it has: {known}) — ignored.")
        return
    widgets.write_config(layer, {}, preset.input)
    instrument.set_query(layer, layer.resolve(preset.params, preset.input_shape), preset.input_shape)


def _link_problems(layer: Layer) -> None:
    """What the link asked that the layer refuses: one box, one line per parameter."""
    problems = links.take_problems(layer)
    if problems:
        st.warning("\n".join(f"- {state.inert(m)}" for m in problems) if len(problems) > 1
                   else state.inert(problems[0]), icon=":material/link_off:")


def _instrument_page(layer: Layer, inp: widgets.InputForm, view: ViewOptions, hide: list[str],
                     node: models.NodeLink | None = None) -> None:
    """The layer page on the instrument stage (playground.stage): one component owns the controls, the figures
    and the URL, and a change is answered by the server's route; this script runs when the page opens, when the
    input or the view changes, and when the stage settles on a configuration (the engine card and the downloads
    under it follow)."""
    st.html(STAGE_CSS + DRAWER_CSS + links.hide_css(layer, hide) + (PRESENTER_CSS if view.presenter else ""))
    _rerun_on_reconnect()
    _link_problems(layer)
    if inp.x is None:
        st.error(state.inert(str(inp.error)), icon=":material/error:")
        return
    backend, engines = state.backend(), state.engine_cache()

    def run(raw: dict, compare: str | None) -> Evaluation:
        return evaluate(layer.name, raw, inp.x, backend=backend, cache=engines, compare=compare)

    def example(name: str) -> None:  # the input is the sidebar's; the parameters go to the URL the stage reads
        preset = presets.find(layer.name, name)
        widgets.write_config(layer, {}, preset.input)
        instrument.set_query(layer, layer.resolve(preset.params, preset.input_shape), preset.input_shape)

    ev = instrument.stage(layer, inp.x, run, presenter=view.presenter, hide=tuple(hide), on_example=example,
                          node=node)
    # Of the tabs only the open one is drawn (on_change="rerun"): a page opens without the engine's table.
    names = (["Details"] if layer.section else []) + ["Engine", "Downloads"]
    tabs = dict(zip(names, st.tabs(names, key=key(layer.name, "instrument_tabs"), on_change="rerun")))
    if "Details" in tabs and tabs["Details"].open:  # the layer's own tables and charts, settled configuration
        with tabs["Details"], st.container(key=control_key(layer.name, "explanation")):
            context = section.Context(view.theme, functools.partial(evaluate, backend=backend, cache=engines),
                                      lambda label: st.spinner(label, show_time=True))
            extras.draw_blocks(layer.name, layer.section(ev, context), view)
    if tabs["Engine"].open:
        with tabs["Engine"], st.container(key=control_key(layer.name, "engine")):
            _engine_panel(ev)
            _second_opinions(ev, node.opened if node and node.opened.stands(ev) else None)
    if tabs["Downloads"].open:
        with tabs["Downloads"]:
            workshop.downloads(layer, ev)


@st.fragment(run_every=600)
def _rerun_on_reconnect() -> None:
    """Nothing to see. Streamlit's page runs its script again after its websocket reconnects only where a fragment
    reruns on a timer (its frontend's App.tsx: autoRerunIntervals): with this one (every 10 minutes: it costs next
    to nothing), a page whose replica was lost (a room behind a proxy) runs on the live replica it reconnects to, on
    the configuration its URL holds, and its stage gets a seat there."""
    st.empty()


def _spec_tab(layer: Layer, preset, cmp, shown: Evaluation, view: ViewOptions) -> None:
    name = layer.name
    if preset is not None and cmp is not None:
        workshop.spec_panel(layer, preset, cmp, shown)
    if preset is not None and preset.expected is not None:
        fig, stats = state.tensor_figure(preset.expected, "Spec's output (as documented)", view.shared_scale,
                                         view.presenter)
        state.chart(fig, figure_key(name, "spec"), filename=f"{name}_spec")
        st.caption("the spec's table · " + stats_text(stats))
    elif preset is None:
        st.caption("This configuration is none of the spec's examples: pick one in the “Spec example” box "
                   "above the figures to compare with the output the spec documents.")


def _focus_demonstrated(layer: Layer, preset: presets.Preset) -> None:
    """A spec example was applied: the controls panel scrolls to the parameter it demonstrates."""
    stage.focus(control_key(layer.name, workshop.demonstrated(layer, preset)))


def _stage(layer: Layer, shown: Evaluation | None, problem: Problem | None, preset, cmp, view: ViewOptions,
           box: stage.Layout) -> None:
    """The figure column: what is shown (shapes, formula, source, spec example), the heatmaps side by side, and
    the layer's own line under them (the convolution's picked cell)."""
    # The badges are one element (every element here costs each change's render passes: bench/bench_render.py).
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=key(layer.name, "headline")):
        badges = []
        if shown is not None:
            st.markdown(f"**Input {shown.input.shape} → Output {shown.output.shape}**", width="content")
            if layer.formula:
                with st.container(key=control_key(layer.name, "formula"), width="content"):
                    st.markdown(f"`{layer.formula(shown.params)}`", width="content")
            tensorrt = shown.output_source == "tensorrt"
            badges.append(state.badge(source_badge(shown), "green" if tensorrt else "orange",
                                      "bolt" if tensorrt else "calculate"))
        if preset is not None and cmp is not None:
            badges.append(workshop.verdict_badge(preset, cmp))
        if badges:
            st.markdown(" ".join(badges), width="content")
    if problem:
        where = (f" — fix **{problem.param}** beside the figures." if problem.param in layer.param_names
                 else f" — fix **{problem.param}** in the sidebar's Input tab." if problem.slot is not None
                 else "")  # the budget ("output") says what to lower
        stale = " Showing the last valid configuration." if shown is not None else ""
        st.error(state.inert(problem.message) + where + stale, icon=":material/error:")
    if shown is None:
        st.info("No valid configuration yet: fix the parameter named above to see the output.")
        return
    if shown.engine_status == "refused":  # an answer about this configuration, not a fault of the page
        st.warning(f"{state.inert(shown.error)}. The output is the NumPy reference.", icon=":material/block:")
    elif shown.error:
        st.error(f"TensorRT could not build this configuration; the output is the NumPy reference. "
                 f"TensorRT said: {state.inert(shown.error)}", icon=":material/build:")
    height = box.figure_h - (56 if problem or shown.error else 0)
    line = compare_text(shown) if shown.compared is not None else (
        precision_text(shown.precision_error, shown.gpu_agreement) if shown.precision_error is not None else None)
    if line:
        with st.container(key=control_key(layer.name, "precision_error")):
            st.markdown(line)
        height -= 32
    _tensors(layer, shown, view, box.figures_w, height)
    if layer.reads is not None:
        try:
            extras.cell_stage_line(shown, view)
        except Exception as exc:  # its own explanation below says more
            st.caption(f"(the picked cell could not be explained: {type(exc).__name__})")


def _link(slot) -> None:
    """The "Copy link" box at the top of the sidebar, written last: by then every widget has put its value
    in the URL."""
    slot.code(links.share_link(), language=None, wrap_lines=False)




def _evaluate(layer: str, form: widgets.ParamForm, inp: widgets.InputForm,
              compare: str | None = None) -> tuple[Evaluation | None, Problem | None]:
    try:
        if inp.error is not None:
            raise inp.error
        backend, engines, prefetcher = state.backend(), state.engine_cache(), state.prefetcher()
        with prefetcher.foreground():
            raw = dict(form.raw)
            if compare is not None and form.canon.get("quantize_scale") is not None:  # the scale the control shows,
                raw.setdefault("quantize_scale", form.canon["quantize_scale"])  # unused by the first precision
            ev = evaluate(layer, raw, inp.x, backend=backend, cache=engines, compare=compare)
        before = state.PageState(layer).get("last_raw")
        state.PageState(layer).set("last_raw", dict(form.raw))
        if before is not None:  # build the moved slider's next values either way while the user looks
            prefetcher.offer(layer, neighbours(get_layer(layer), before, form.raw), inp.x, backend=backend,
                             cache=engines)
        return ev, None
    except (ValidationError, InputError) as exc:  # a parameter's is also named under its control, by the control
        return None, Problem(str(exc), exc.param, inp.slot_for(exc.param))
    except Exception as exc:  # anything else is a bug, but the page must still answer, not crash
        return None, Problem(f"Unexpected error ({type(exc).__name__}): {exc}", None)


def source_badge(ev: Evaluation) -> str:
    """Where the output shown comes from, short enough for the stage (the engine tab says why)."""
    if ev.output_source == "tensorrt":
        return ev.source_label
    how = {"built": "built now", "cached": "from cache"}.get(ev.engine_status)  # the speculative builds' effect
    precision = ev.params.get("precision", "FP32")
    what = "NumPy reference" if precision == "FP32" else f"NumPy emulation of {precision}"
    return f"{what} · {ev.backend.name} engine " + (f"{how}, not run here" if how else "not built")


def precision_text(e: dict, gpu: str | None = None) -> str:
    """The precision's error as the stage states it (the numbers a test reads), and where the output is the
    emulation, how close the emulation came to a GPU's arithmetic (`precision.gpu_agreement`)."""
    c = numbers.compact
    return (f"**{e['precision']}** against FP64: max |error| **{c(e['max_abs_error'])}** · max relative error "
            f"**{c(e['max_rel_error'])}** · **{c(e['error_units'])}** {e['unit']}" + (f" · {gpu}" if gpu else ""))


def compare_text(ev: Evaluation) -> str:
    """Compare mode's line: the difference between the two outputs, then each one's error against FP64."""
    c, d = numbers.compact, ev.difference
    parts = [f"**{d['precision']}**: max |difference| **{c(d['max_abs_error'])}** · max relative "
             f"**{c(d['max_rel_error'])}**" if d else "the two outputs differ in shape"]
    for e in (ev.precision_error, ev.compared.precision_error):
        if e is not None:
            parts.append(f"{e['precision']} **{c(e['error_units'])}** {e['unit'].split(' (')[0]} from FP64")
    return " · ".join(parts)


def stats_text(stats: dict) -> str:
    """The numbers a heatmap shows, as text (from its cached figure's stats, so a revisit computes nothing):
    shape, range, mean, non-finite counts, decimation."""
    parts = [f"shape {stats['shape']}"]
    if stats["zmin"] is not None:
        c = numbers.compact
        parts += [f"min {c(stats['zmin'])}", f"max {c(stats['zmax'])}", f"mean {c(stats['mean'])}"]
    bad = [(stats["nan"], "NaN"), (stats["posinf"], "+Inf"), (stats["neginf"], "−Inf")]
    parts.append(" · ".join(f"{n} {tag}" for n, tag in bad if n) or "no NaN or Inf")
    if stats["decimated"] > 1:
        d = stats["decimated"]
        parts.append(f"drawn every {d}th cell ({d}×{d} blocks; NaN/Inf in a block still shown)")
    return " · ".join(parts)


def _tensors(layer: Layer, ev: Evaluation, view: ViewOptions, width: int, height: int) -> None:
    """Input, the layer's own stage tensors (the kernel) and output side by side, sized to fit the stage, with
    what the layer's section outlines on them."""
    other = ev.compared if ev.compared is not None and ev.compared.output.shape == ev.output.shape else None
    outputs = [ev.output] + ([other.output] if other is not None else [])
    zrange = plots.color_range([ev.input, *outputs], shared=True)[0] if view.shared_scale else None
    marks = _marks(ev)
    figs = [(ev.input, "Input", "input", marks.input, zrange)]
    figs += [(t, title, title.lower(), {}, None) for title, t in (layer.stage_tensors(ev.params) if layer.stage_tensors else [])]
    figs.append((ev.output, output_title(ev, named=other is not None), "output", marks.output, zrange))
    if other is not None:  # compare mode: the second output and the difference map
        figs.append((other.output, output_title(other, named=True), "compared", {}, zrange))
        d = ev.difference["log_error"]
        figs.append((d, f"log₁₀ |{ev.difference['precision']}|", "difference", {}, plots.magnitude_range(d)))
    elif ev.precision_error is not None:  # the error map
        e = ev.precision_error["log_error"]
        figs.append((e, "log₁₀ |error|", "error", {}, plots.magnitude_range(e)))
    maps = {"error": ev.precision_error, "difference": ev.difference}
    th = view.theme

    def overhead(t: np.ndarray) -> int:  # gaps between slices side by side, and their own colour bars (plots)
        bars = 0 if view.shared_scale else th.stage_colorbar_room_px
        return stage_overhead_px(th) + (stage.slices_across(t) - 1) * (th.gap_px + bars)

    rows = stage.figure_rows([f[0] for f in figs], width, height, overhead=[overhead(f[0]) for f in figs],
                             v_overhead=th.stage_margin["t"] + th.stage_margin["b"] + round(th.subtitle_size * 1.6))
    for row in rows:
        with st.container(horizontal=True, wrap=False, gap="small"):
            for i, fig_box in row:
                t, title, which, outlines, shared = figs[i]
                spec, stats = state.tensor_heatmap(t, title, view.shared_scale, view.presenter, shared, box=fig_box,
                                                   **outlines)
                output = which == "output"
                caption = (_map_caption(title, maps[which]) if which in maps else "") + stats_text(stats)
                heatmap.heatmap(spec, figure_key(ev.layer, which), f"{ev.layer}_{which}", caption=caption,
                                link=figure_key(ev.layer, "input") if output else None,
                                on_pick=marks.on_pick if output else None)


def _map_caption(title: str, e: dict) -> str:
    """An error or difference map's caption head: what it draws, and where its exact cells are drawn."""
    exact = e["exact_cells"]
    where = f"{exact} exact cells (|error| 0) drawn at {numbers.compact(e['exact_at'])} · " if exact else ""
    return f"{title} · {where}"


def output_title(ev: Evaluation, named: bool = False) -> str:
    """"Output (TensorRT)", "Output (reference)", "Output (FP16, emulated)": the precision named below FP32, or
    always (`named`, compare mode)."""
    precision = ev.params.get("precision", "FP32")
    how = "TensorRT" if ev.output_source == "tensorrt" else "reference" if precision == "FP32" else "emulated"
    return f"Output ({precision}, {how})" if named or precision != "FP32" else f"Output ({how})"


def _marks(ev: Evaluation) -> extras.Marks:
    """The layer section's outlines for the heatmaps; none if it fails (its own section says why)."""
    try:
        return extras.cell_marks(ev) if get_layer(ev.layer).reads else extras.Marks()
    except Exception:
        return extras.Marks()


def _extras(layer: str, ev: Evaluation, view: ViewOptions) -> None:
    """The layer's explanations, section and picked cell (ui.extras); a failure there is one warning, not a
    broken page."""
    try:
        extras.layer_section(ev, view)
    except Exception as exc:
        st.warning(state.inert(f"The {layer} explanation failed: {type(exc).__name__}: {exc}"))


def _engine_panel(ev: Evaluation) -> None:
    b, s = ev.backend, ev.engine_summary()
    with st.expander("Engine", expanded=True, icon=":material/memory:"):
        st.markdown(f"**{b.name} {b.version or ''}** · device: **{b.device}** · "
                    f"can build: **{'yes' if b.can_build else 'no'}** · can run: **{'yes' if b.can_run else 'no'}**")
        st.markdown(f"Output shown: **{ev.source_label}**")
        _passed_over(b)
        diff = "not run" if ev.max_abs_diff is None else numbers.compact(ev.max_abs_diff)
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
                         "tactic": l["tactic"]} for l in layers], key(ev.layer, "engine_layers"), width="stretch")
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
    from ..opinions import second_opinions

    o = second_opinions(ev, opened)
    ort, parser = o["onnxruntime"], o["onnx_parser"]
    st.markdown(f"**Second opinions** on {ort.get('model', 'the configuration')} (ONNX, float32)")
    if ort.get("agrees"):
        st.success(f"ONNX Runtime {ort['version']} agrees with {ort['compared_to']}: max |difference| "
                   f"{numbers.shortest(ort['max_abs_diff'])}.", icon=":material/check_circle:")
    else:
        why = ort.get("rule") or ort.get("why") or ort.get("error") or "no known rule explains it"
        st.warning(state.inert(f"ONNX Runtime {ort.get('version') or ''} differs from {ort.get('compared_to')}: "
                               f"{why}."), icon=":material/difference:")
    if parser is None or parser.get("status") == "not_built":
        st.caption(state.inert(f"TensorRT's ONNX parser: not built ({(parser or {}).get('why', 'no parser')})."))
        return
    if parser.get("error"):
        st.warning(state.inert(f"{parser['parser']}: {parser['error']}"), icon=":material/error:")
        return
    same = "the same output shape" if parser["same_output_shape"] else "another output shape"
    layers = ("the same engine layers" if parser["same_layers"] else parser.get("difference", "other engine layers"))
    st.markdown(state.inert(f"{parser['parser']} built the model ({STATUS_TEXT.get(parser['status'], parser['status'])}): "
                            f"output {tuple(parser['output_shape'] or ())}, {same} as the layer's build, {layers}."))
    pairs = itertools.zip_longest(parser["layers"], parser.get("layer_build", []), fillvalue="")
    state.table([{"parser's network": a, "layer's build": b} for a, b in pairs], key=key(ev.layer, "parser_layers"))


def _passed_over(b) -> None:
    """Why a TensorRT that is installed is not the one in use (full TensorRT with no GPU it can use)."""
    for why in b.passed_over:
        st.text(f"Not used: {why}.")  # TensorRT's words, shown as they are (no markdown)


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
        _passed_over(b)
    with st.container(border=True):
        st.subheader("Your model's layers", anchor=False)
        st.caption("Upload an ONNX model: each node opens on its layer's page with every attribute set and its "
                   "weights, beside ONNX Runtime's answer and TensorRT's ONNX parser (also on the command line: "
                   "`python -m playground onnx model.onnx`).")
        models.uploader("home.onnx_upload")
    st.subheader("Layers", anchor=False)
    cols, pages = st.columns(3), layer_pages()
    for i, (name, layer) in enumerate(LAYERS.items()):
        with cols[i % 3].container(border=True, height="stretch"):
            st.page_link(pages[name], label=layer.title, icon=layer.icon)
            st.markdown(layer.summary)
            st.caption("Parameters: " + ", ".join(layer.param_names))
    st.caption("Also on the command line: `python -m playground run convolution --set stride_nd=2,2 --json`")
