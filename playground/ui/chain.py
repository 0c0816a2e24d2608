"""The chain page (/chain): 1 to 6 layers, every tensor along them, and the engine TensorRT built for the whole.

The address is the page's state (playground.chain.Address): every control writes it, and the page draws what it
says. A refused layer is named with its rule while the last good figures stay on screen.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from .. import chain as C
from .. import chains
from ..errors import PlaygroundError
from ..layers import LAYERS
from ..numbers import compact
from ..stage.protocol import ENGINE_STATUS
from .figures import chart, table, tensor_figure
from .messages import guarded, inert
from .page import PRESENTER_CSS
from .view import presenter_on, probe_viewport, viewport

LAST_GOOD = "chain.last_good"  # session: the ChainEvaluation of the last chain that resolved
GENERATION = "chain.generation"  # session: bumped when the layers change, so their controls start afresh
PAGE_CSS = (
    '<style>[data-testid="stMainBlockContainer"] { max-width: 100%%; padding: 72px 24px 3rem; } '
    ".st-key-chain-tensors > div { flex: 1 1 %(least)dpx; min-width: %(least)dpx; max-width: %(most)dpx; }</style>"
)
TENSOR_PX = {False: (320, 440), True: (380, 560)}  # a tensor figure's least and most width, normal and presenter
# A window at least this tall opens the engine's layers under the line that says what fused: a 1920 × 1080 screen
# still shows the first line of tensors under them, where a 1280 × 720 projector keeps them folded for the tensors.
ENGINE_OPEN_PX = 900
OUTLINE_LIMIT = 400  # outlined cells per slice; past it, their bounding box
ROLE_TEXT = {"data movement": "moves data (Move, Transpose or reformat)"}


def chain_page() -> None:
    guarded(_chain_page)


def _address() -> C.Address:
    return C.from_query(st.query_params.to_dict())


def _write(address: C.Address, structural: bool = False) -> None:
    """The address into the URL (the view's keys kept); `structural`: the layers changed, their controls restart."""
    view = {k: v for k, v in st.query_params.to_dict().items() if k in C.OTHER_KEYS}
    st.query_params.from_dict(address.query() | view)
    if structural:
        st.session_state[GENERATION] = st.session_state.get(GENERATION, 0) + 1


def _chain_page() -> None:
    presenter = presenter_on()
    least, most = TENSOR_PX[presenter]
    st.html(PAGE_CSS % {"least": least, "most": most} + (PRESENTER_CSS if presenter else ""))
    address = _address()
    # one pair of columns from the top: the layer list follows the starter picker at once, however tall the note
    left, right = st.columns([1, 2], gap="medium")
    with right:
        starter = C.starter_of(address)
        if starter:
            st.info(f"**{starter.title}.** {starter.note}", icon=":material/school:")
        for problem in address.problems:
            st.warning(inert(problem), icon=":material/link_off:")
    with left:
        st.subheader("Chain: what TensorRT fuses", anchor=False)
        _starter_picker(address)
        _layer_list(address)
        result, error = _evaluate(address)
        _pick_control(address, result.chain if result and not error else None)
        _controls(address, result.chain if result and not error else None)
    with right:
        if error:
            st.error(inert(error), icon=":material/error:")
        if result is None:
            return
        if error:
            st.caption("The figures below are the last chain that resolved.")
        # what fused in one line, then the tensors: the figures are on the first screen of a 1280 × 720 projector
        _fusion(result)
        if address.model and not error:
            _from_model(address.model, result)
        _tensors(result, presenter, address.pick if not error else None)
        if not error:
            from ..chain_export import playground_command

            st.caption(
                "Up to six layers as one TensorRT network: every tensor along the chain, and the engine's "
                "layers with the chain's layers each one computes. On the command line: "
                f"`{playground_command(result.chain, result.tensors[C.INPUT])} --json`"
            )
        _engine(result)
    probe_viewport((ENGINE_OPEN_PX,))  # last, under everything: the engine's layers open by the window's height


def _starter_picker(address: C.Address) -> None:
    names = [s.name for s in chains.STARTERS]
    current = C.starter_of(address)

    def pick():
        chosen = st.session_state["chain.starter"]
        if chosen:
            _write(C.from_query({C.STARTER_KEY: chosen}), structural=True)

    st.selectbox(
        "Starter chain",
        [""] + names,
        index=names.index(current.name) + 1 if current else 0,
        format_func=lambda n: chains.find(n).title if n else "— pick one of the seeds' lessons —",
        key="chain.starter",
        on_change=pick,
    )


def _layer_list(address: C.Address) -> None:
    """The layers in order, each with move up, move down and remove; a layer to add at the end."""
    st.subheader("Layers", anchor=False)
    gen = st.session_state.get(GENERATION, 0)

    def edit(op: str, i: int) -> None:
        names, params = list(address.names), list(address.params)
        if op == "remove" and len(names) > 1:
            del names[i], params[i]
        elif op in ("up", "down"):
            j = i - 1 if op == "up" else i + 1
            names[i], names[j], params[i], params[j] = names[j], names[i], params[j], params[i]
        model = address.model and address.model.unnamed()
        _write(C.Address(names, params, address.shape, address.pattern, model=model), structural=True)

    for i, (key, name) in enumerate(zip(address.keys, address.names)):
        # one row that never wraps: the name takes what the three buttons leave (and wraps inside it, in presenter
        # type at 1280 px), so a button always sits on its layer's line
        row = st.container(horizontal=True, wrap=False, vertical_alignment="center", key=f"chain-layer-{i}")
        row.markdown(f"**{i + 1}. `{key}`** {LAYERS[name].title}", width="stretch")
        last = len(address.names) - 1
        for what, icon, words, off in (
            ("up", "arrow_upward", "Move up", i == 0),
            ("down", "arrow_downward", "Move down", i == last),
            ("remove", "close", "Remove", last == 0),
        ):
            row.button(
                f":material/{icon}:",
                key=f"chain.{gen}.{what}.{i}",
                disabled=off,
                on_click=edit,
                args=(what, i),
                help=words,
            )

    def add() -> None:
        name = st.session_state.get(f"chain.{gen}.add")
        if name and len(address.names) < C.MAX_LAYERS:
            _write(
                C.Address(
                    address.names + [name],
                    address.params + [{}],
                    address.shape,
                    address.pattern,
                    model=address.model and address.model.unnamed(),
                ),
                structural=True,
            )

    row = st.columns([5, 3], vertical_alignment="bottom")
    row[0].selectbox("Add a layer", list(LAYERS), format_func=lambda n: LAYERS[n].title, key=f"chain.{gen}.add")
    row[1].button(
        "Add",
        key=f"chain.{gen}.add_button",
        on_click=add,
        disabled=len(address.names) >= C.MAX_LAYERS,
        help=f"At most {C.MAX_LAYERS} layers",
    )


def _evaluate(address: C.Address):
    """(the evaluation to draw, the error to show): this address's, or the last good one and why this one failed."""
    from ..shared import backend, engine_cache

    try:
        with st.spinner("Building the chain's engine …"):
            result = C.evaluate(address.names, address.raw(), address.input(), backend=backend(), cache=engine_cache())
    except PlaygroundError as exc:
        return st.session_state.get(LAST_GOOD), str(exc)
    st.session_state[LAST_GOOD] = result
    return result, None


def _controls(address: C.Address, resolved: C.Chain | None) -> None:
    """Each layer's parameters (the ones its configuration uses) and sources, one tab per layer."""
    st.subheader("Parameters", anchor=False)
    gen = st.session_state.get(GENERATION, 0)
    tabs = st.tabs(list(address.keys))
    links = {link.key: link for link in resolved.links} if resolved else {}
    for i, (tab, key, name) in enumerate(zip(tabs, address.keys, address.names)):
        layer = LAYERS[name]
        link = links.get(key)
        params = link.params if link else _defaults(layer)
        with tab:
            _sources(address, i, key, layer, gen)
            for p in layer.params:
                if params is not None and not p.is_used(params):
                    continue
                _param_control(address, i, key, p, params, gen)


def _defaults(layer):
    """What a layer's controls show while the chain does not resolve: its defaults at its example's shape."""
    try:
        return layer.defaults()
    except PlaygroundError:
        return None


def _set(address: C.Address, i: int, name: str, text) -> None:
    params = [dict(p) for p in address.params]
    if text is None or text == "":
        params[i].pop(name, None)
    else:
        params[i][name] = str(text)
    _write(C.Address(address.names, params, address.shape, address.pattern, model=address.model))


def _param_control(address, i, key, p, params, gen) -> None:
    widget = f"chain.{gen}.{key}.{p.name}"
    given = address.params[i].get(p.name)
    current = params[p.name] if params is not None else None
    label, hint = f"{p.label or p.name}", p.help

    def changed():
        value = st.session_state[widget]
        _set(address, i, p.name, value if isinstance(value, str) else p.to_text(value))

    # the kind's one decision (params.Kind.widget, the stage's too); a named number and the per-axis, permutation and
    # text ones are typed here, a few values or a whole order in one text
    form = p.of.widget(p)
    number = _number(given if given is not None else current, p.of.whole) if form in ("slider", "named") else None
    if form == "choice":
        value = given if given in p.choices else current if current in p.choices else p.choices[0]
        st.selectbox(label, p.choices, index=p.choices.index(value), key=widget, on_change=changed, help=hint)
    elif form == "toggle":
        st.checkbox(label, value=_switch(p, given, current), key=widget, on_change=changed, help=hint)
    elif number is not None:  # a stepper: scrubbing redraws what follows
        whole = p.of.whole
        st.number_input(
            label,
            value=number,
            step=p.step or (1 if whole else 0.1),
            key=widget,
            on_change=changed,
            help=hint,
            format="%d" if whole else "%g",
        )
    else:
        text = given if given is not None else (p.to_text(current) if params is not None else "")
        st.text_input(label, value=text, key=widget, on_change=changed, help=hint + " (empty: the default)")


def _switch(p, given, current) -> bool:
    """A toggle's value: the link's text as the parameter reads it (a text it refuses: off, its rule named by the
    chain's resolve), else the resolved value."""
    if given is None:
        return bool(current)
    try:
        return bool(p.canonical(given, "chain", {}, ()))
    except PlaygroundError:
        return False


def _number(value, whole: bool):
    """`value` as the stepper's number, or None where it is not one (a link's text the layer's rule will name)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(v) or (whole and not v.is_integer()):
        return None
    return int(v) if whole else v


def _sources(address, i, key, layer, gen) -> None:
    """Where each input comes from: the chain's input or an earlier layer (the default: the previous one, and the
    chain's input for a layer's other inputs)."""
    if i == 0 and not layer.several:
        return
    earlier = (C.INPUT,) + address.keys[:i]
    default = C.default_sources(layer, address.keys[:i])
    for n, inp in enumerate(layer.inputs):
        name = C.FROM if n == 0 else f"{C.FROM}.{inp.name}"
        widget = f"chain.{gen}.{key}.{name}"
        given = address.params[i].get(name, default[inp.name])
        value = given if given in earlier else default[inp.name]

        def changed(widget=widget, name=name, fallback=default[inp.name]):
            chosen = st.session_state[widget]
            _set(address, i, name, None if chosen == fallback else chosen)

        st.selectbox(f"Input {inp.name} reads", earlier, index=earlier.index(value), key=widget, on_change=changed)


def _pick_control(address: C.Address, resolved: C.Chain | None) -> None:
    """A cell of one tensor to trace back through every layer to the chain's input (the cells it depends on are
    outlined on every tensor before it)."""
    if resolved is None:
        return
    gen = st.session_state.get(GENERATION, 0)
    keys = (C.INPUT,) + resolved.keys
    shapes = {C.INPUT: resolved.input_shape} | {link.key: link.output_shape for link in resolved.links}
    where, cell = address.pick if address.pick and address.pick[0] in keys else (keys[-1], None)
    if cell is None:
        cell = tuple(d // 2 for d in shapes[where])

    def changed():
        key = st.session_state[f"chain.{gen}.pick.key"]
        text = st.session_state[f"chain.{gen}.pick.cell"]
        try:
            index = tuple(int(v) for v in text.split(","))
        except ValueError:
            index = tuple(d // 2 for d in shapes[key])
        if len(index) != len(shapes[key]):
            index = tuple(d // 2 for d in shapes[key])
        _write(
            C.Address(
                address.names, address.params, address.shape, address.pattern, pick=(key, index), model=address.model
            )
        )

    def clear():
        _write(C.Address(address.names, address.params, address.shape, address.pattern, model=address.model))

    with st.expander("Trace a cell back to the input", expanded=address.pick is not None):
        row = st.columns([2, 2, 1], vertical_alignment="bottom")
        row[0].selectbox("Tensor", keys, index=keys.index(where), key=f"chain.{gen}.pick.key", on_change=changed)
        axes = ("n", "c", "h", "w") if len(shapes[where]) == 4 else ("n", "c", "d", "h", "w")
        row[1].text_input(
            f"Cell ({', '.join(axes)})", value=",".join(map(str, cell)), key=f"chain.{gen}.pick.cell", on_change=changed
        )
        row[2].button("Clear", key=f"chain.{gen}.pick.clear", on_click=clear, disabled=address.pick is None)
        if address.pick is None:
            st.caption("Pick a tensor and a cell: the cells it depends on are outlined on every tensor before it.")


def _outlined(fig, cells: list[tuple], shape: tuple):
    """A copy of `fig` with `cells` outlined on the slices that hold them."""
    import plotly.graph_objects as go

    from ..explain import drawn_cells

    out = go.Figure(fig.to_dict())
    for slice_index, found in drawn_cells(cells, shape).items():
        ref = "" if slice_index == 0 else str(slice_index + 1)
        if len(found) > OUTLINE_LIMIT:  # a shape per cell would slow the browser: their bounding box, dashed
            hs, ws = [c[0] for c in found], [c[1] for c in found]
            out.add_shape(
                type="rect",
                xref=f"x{ref}",
                yref=f"y{ref}",
                x0=min(ws) - 0.5,
                x1=max(ws) + 0.5,
                y0=min(hs) - 0.5,
                y1=max(hs) + 0.5,
                line={"color": "#000000", "width": 2.5, "dash": "dash"},
                fillcolor="rgba(0,0,0,0)",
            )
            continue
        for h, w in found:
            out.add_shape(
                type="rect",
                xref=f"x{ref}",
                yref=f"y{ref}",
                x0=w - 0.5,
                x1=w + 0.5,
                y0=h - 0.5,
                y1=h + 0.5,
                line={"color": "#000000", "width": 2.5},
                fillcolor="rgba(0,0,0,0)",
            )
    return out


def _tensors(result: C.ChainEvaluation, presenter: bool, pick=None) -> None:
    """Every tensor along the chain, in order, each with the engine layer that computes it; with a picked cell, the
    cells it depends on outlined on every tensor before it."""
    st.subheader("Tensors along the chain", anchor=False)
    field, stopped = {}, False
    if pick is not None:
        try:
            field, stopped = C.receptive_field(result.chain, *pick)
        except PlaygroundError as exc:
            st.warning(inert(exc), icon=":material/ads_click:")
        else:
            n = len(field.get(C.INPUT, []))
            st.caption(
                f"Cell {pick[1]} of {pick[0]} depends on {n} cell(s) of the chain's input"
                + (
                    f" (the trace stopped at {C.TRACE_LIMIT:,} cells of a tensor or {C.TRACE_WORK:,} cells read)"
                    if stopped
                    else ""
                )
                + "."
            )
    owners = {k: result.engine.kernels_of(k) for k in result.chain.keys}
    # the figures flow: as many on a line as keep each at its least legible width (a 3×3 tensor's numbers in
    # its cells), so a 1280 px screen puts two on a line where 1920 px puts three
    grid = st.container(horizontal=True, wrap=True, gap="medium", key="chain-tensors")
    for key, t in result.tensors.items():
        with grid.container(key=f"chain-tensor-{key}"):
            title = "input" if key == C.INPUT else key
            fig, _stats = tensor_figure(np.asarray(t), f"{title} {tuple(t.shape)}", True, presenter)
            if field.get(key):
                fig = _outlined(fig, field[key], tuple(t.shape))
            chart(fig, key=f"chain.tensor.{key}", filename=f"chain_{key}", width="stretch")
            if key != C.INPUT:
                where = owners.get(key) or []
                names = ", ".join(f"[{j}] {result.engine.layers[j]['name']}" for j in where)
                st.caption(
                    f"Computed by engine layer {names}"
                    if where
                    else "No engine layer names it"
                    if result.engine.layers
                    else "No engine"
                )


def _fusion(result: C.ChainEvaluation) -> None:
    """The engine in one line that says what fused, folded over each engine layer in order with the chain's layers
    it computes."""
    e = result.engine
    if e.report is None:
        for m in result.messages:
            st.caption(inert(m))
        return
    if e.status not in ("built", "cached"):
        st.error(inert(e.report.error or e.status), icon=":material/block:")
        return
    size = viewport()
    room = size is not None and size["height"] >= ENGINE_OPEN_PX
    # expanded= is read when an expander is first drawn: the open one is another (its own key) once the window's
    # size says there is room; the container's key is the place's, whichever it holds
    with (
        st.container(key="chain-engine"),
        st.expander(
            _fusion_line(result), expanded=room, icon=":material/memory:", key="chain-engine-open" if room else None
        ),
    ):
        computing = [layer for layer in e.layers if layer["role"] == "compute"]
        st.markdown(
            f"{len(computing)} of the {len(e.layers)} engine layer(s) computing ({e.builder}, {e.report.bytes:,} "
            f"bytes, {e.report.build_ms:.0f} ms, {ENGINE_STATUS[e.status]}; not run here):"
        )
        st.markdown(_layer_lines(e))


def _from_model(model: C.ModelInput, result: C.ChainEvaluation) -> None:
    """Where a chain opened from a model reads, and whether its engine computes the model's nodes as the model's
    engine does (onnx.as_chain.fusion), or why not."""
    from ..onnx import as_chain

    where = f"On ONNX Runtime's tensor {model.tensor!r} of the model {model.name} (its seeded inputs)"
    if not model.nodes:
        st.caption(inert(where + "."))
        return
    st.caption(inert(f"{where}: the model's nodes {', '.join(model.nodes)}. {as_chain.folded_text(model.nodes) or ''}"))
    if result.engine.status not in ("built", "cached"):
        return
    try:
        f = as_chain.fusion(as_chain.model_engine(model.digest), model.nodes, result.engine, result.chain.keys)
    except PlaygroundError as exc:
        st.warning(inert(str(exc)), icon=":material/link_off:")
        return
    if f["same"] is None:
        st.caption(inert(as_chain.fusion_text(f)))
    elif f["same"]:
        st.success(inert(as_chain.fusion_text(f)), icon=":material/join:")
    else:
        st.warning(inert(as_chain.fusion_text(f)), icon=":material/call_split:")


def _fusion_line(result: C.ChainEvaluation) -> str:
    """The engine's summary: how many layers became how many, and which chain layers one engine layer computes."""
    e = result.engine
    fused = [" + ".join(f"`{k}`" for k in layer["fuses"]) for layer in e.layers if len(layer["fuses"]) > 1]
    what = "fused: " + "; ".join(fused) if fused else "nothing fused" if len(result.chain.keys) > 1 else ""
    unnamed = f"; no engine layer names {', '.join(f'`{k}`' for k in e.absorbed)}" if e.absorbed else ""
    return (
        f"**The engine: {len(result.chain.keys)} chain layer(s) → {len(e.layers)} engine layer(s)**"
        + (f", {what}" if what else "")
        + unnamed
    )


def _layer_lines(e: C.ChainBuild) -> str:
    """Markdown: each engine layer in order with the chain's layers it computes (or that it moves data)."""
    lines = []
    for i, layer in enumerate(e.layers):
        what = (
            " + ".join(f"**{k}**" for k in layer["fuses"]) + (" (fused)" if len(layer["fuses"]) > 1 else "")
            if layer["fuses"]
            else "_" + ROLE_TEXT.get(layer["role"], layer["role"]) + "_"
        )
        lines.append(f"{i}. `{layer['name']}` ({layer['type']}): {what}")
    return "\n".join(lines) + "\n" + "".join(f"\n- no engine layer names **{k}**" for k in e.absorbed)


def _downloads(result: C.ChainEvaluation) -> None:
    """Every tensor as .npy (input.npy is what the command line's --input reads), and the chain as a script."""
    from ..chain_export import export_chain_script
    from ..inputs import to_npy_bytes

    cols = st.columns(len(result.tensors) + 1)
    for col, (key, t) in zip(cols, result.tensors.items()):
        col.download_button(
            f"{key}.npy",
            to_npy_bytes(t),
            file_name=f"{key}.npy",
            key=f"chain.download.{key}",
            icon=":material/download:",
        )
    script = export_chain_script(result.chain.names, result.chain.raw(), result.tensors[C.INPUT])
    cols[-1].download_button(
        "chain.py", script, file_name="chain.py", key="chain.download.script", icon=":material/code:"
    )


def _engine(result: C.ChainEvaluation) -> None:
    """The engine's layers in full (tactics, formats), the notes and TensorRT's words about fusion."""
    _downloads(result)
    e = result.engine
    for m in result.messages:
        st.caption(inert(m))
    if e.report is None or e.status not in ("built", "cached"):
        return
    rows = [
        {
            "#": i,
            "engine layer": layer["name"],
            "type": layer["type"],
            "tactic": layer["tactic"],
            "computes": ", ".join(layer["fuses"]) or ROLE_TEXT.get(layer["role"], layer["role"]),
            "input formats": "; ".join(t["format"] for t in layer["inputs"]),
            "output formats": "; ".join(t["format"] for t in layer["outputs"]),
        }
        for i, layer in enumerate(e.layers)
    ]
    table(rows, key="chain.engine_layers")
    _opinions(result)
    if st.checkbox(
        "Also build it with every intermediate marked as an output (a debugging build)",
        key="chain.marked",
        help="Marking a tensor as an output changes what TensorRT fuses "
        "(Polygraphy's accuracy-debugging guide says so); the engine above is the chain as deployed.",
    ):
        from ..shared import backend, engine_cache

        marked = C.build(result.chain, backend(), engine_cache(), marked=True)
        if marked.status in ("built", "cached"):
            st.markdown(f"**Every intermediate marked: {len(marked.layers)} engine layer(s)** (not for deployment):")
            st.markdown(_layer_lines(marked))
    if e.fusion_log:
        with st.expander("TensorRT's words about fusion (its verbose log)"):
            st.code("\n".join(e.fusion_log), language=None)


def _opinions(result: C.ChainEvaluation) -> None:
    """ONNX Runtime's and TensorRT's ONNX parser's opinions on the chain, one line each."""
    from ..onnx.chain import opinions
    from ..shared import backend, engine_cache

    o = opinions(result, backend(), engine_cache())
    ort, parser = o["onnxruntime"], o["onnx_parser"]
    if ort.get("status") != "ran":
        st.caption(inert(f"ONNX Runtime: {ort.get('status')}"))
    else:
        agrees = "agrees with" if ort["agrees"] else "differs from"
        st.caption(
            f"ONNX Runtime {ort['version']} on the chain's ONNX export {agrees} {ort['compared_to']} "
            f"(max |difference| {compact(ort['max_abs_diff'])})."
        )
    if parser and parser.get("status") in ("built", "cached"):
        same = {True: "fuses as", False: "fuses otherwise than", None: "was built beside"}[parser["same_fusion"]]
        st.caption(f"TensorRT's ONNX parser ({parser['parser']}): its engine {same} {parser['compared_to']}.")
    elif parser:
        st.caption(inert(f"TensorRT's ONNX parser: {parser.get('error') or parser.get('why') or parser['status']}"))
