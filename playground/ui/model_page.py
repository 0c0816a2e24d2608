"""The model page (/model): an ONNX model's nodes with their verdicts, as `python -m playground model` gives them.

An upload is kept by the server (content-addressed, as the home page's), and the page's URL names it
(`/model?onnx=DIGEST&model=FILE`), so a link reopens the same model. Every node is listed as text (a model's names
are never read as markdown); each that opens links to its layer's page with the node's configuration
(`/LAYER?onnx=DIGEST&node=NAME&model=FILE`). The first node whose reference and ONNX Runtime part ways is named
first; a run of nodes (shift-clicked on the graph, or an engine layer's fused nodes) opens as a chain.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from .. import blobs
from ..errors import ValidationError
from ..layers import LAYERS
from ..memo import Memo
from ..numbers import compact
from ..onnx import reading, whole
from ..onnx.map import opens_as
from ..stage.protocol import ENGINE_STATUS
from .messages import guarded, inert
from .models import MODEL, NODE, ONNX, REAL
from .view import presenter_on

_answers = Memo(8)  # by model digest and input: a page's reruns and revisits do not run the model again
_chains = Memo(256)  # by model digest and a run of nodes: the chain page's address, or why the run is no chain
_models = Memo(2)  # by digest: the model loaded (checked, folded) once for all its runs' chains
_HERE = Path(__file__).parents[1] / "graph"  # the graph's browser side: graph.js, graph.css, the vendored dagre
PAGE_CSS = '<style>[data-testid="stMainBlockContainer"] { padding-top: 72px; }</style>'
MAX_DRAWN = 1500  # nodes: a larger graph is listed, not drawn (its layout would hold the browser for seconds)
_component = None


def _graph_component():
    global _component
    if _component is None:  # registered once per process
        dagre = (_HERE / "dagre.esm.js").read_text(encoding="utf-8")
        js = f"const DAGRE_SOURCE = {json.dumps(dagre)};\n" + (_HERE / "graph.js").read_text(encoding="utf-8")
        _component = st.components.v2.component(
            "playground_graph", js=js, css=(_HERE / "graph.css").read_text(encoding="utf-8"), isolate_styles=False
        )
    return _component


def chain_link(digest: str, names: list[str], name: str) -> tuple[dict | None, str | None]:
    """(the chain page's URL keys for this run of the model's nodes, None) or (None, why it is no chain)."""

    def make():
        try:
            model = _models.get_or_make(digest, lambda: reading.remembered(digest))
            return whole.chain_of(model, names, name), None
        except ValidationError as exc:
            return None, str(exc)

    return _chains.get_or_make((digest, tuple(names), name), make)


def fused_groups(answer: dict, digest: str, name: str) -> list[dict]:
    """Each engine layer that computes two or more of the model's nodes: its name, type, nodes and the chain page's
    URL of its nodes (or why they are no chain)."""
    groups = []
    for layer in (answer.get("engine") or {}).get("layers", []):
        if len(layer["fuses"]) < 2:
            continue
        query, why = chain_link(digest, layer["fuses"], name)
        groups.append(
            {
                "name": layer["name"],
                "type": layer["type"],
                "nodes": layer["fuses"],
                "chain": "./chain?" + urlencode(query) if query else None,
                "why": why,
            }
        )
    return groups


def graph_data(answer: dict, digest: str, name: str) -> dict:
    """What the graph draws: a box per node (its verdict as its status, a link to its layer's page where it opens),
    an edge wherever a node reads a tensor another writes, the first node that differs, and the engine's fused
    groups."""
    producer = {t: n["name"] for n in answer["nodes"] for t in n.get("writes", [])}
    nodes, edges = [], []
    for n in answer["nodes"]:
        status = (
            "none"
            if n["layer"] is None
            else "agrees"
            if n.get("agrees") is True
            else "differs"
            if n.get("agrees") is False
            else "open"
        )
        nodes.append(
            {
                "id": n["name"],
                "label": n["name"],
                "status": status,
                "detail": _verdict(n),
                "short": f"{n['op_type']} → {opens_as(n['layer'], n.get('identity'))}" if n["layer"] else n["op_type"],
                "href": f"./{n['layer']}?" + urlencode({ONNX: digest, NODE: n["name"], MODEL: name, REAL: "1"})
                if n["layer"]
                else None,
            }
        )
        edges += [[producer[t], n["name"]] for t in n.get("reads", []) if t in producer]
    return {
        "key": f"{digest}|{name}",
        "nodes": nodes,
        "edges": edges,
        "first": whole.first_difference(answer["nodes"]),
        "groups": fused_groups(answer, digest, name),
    }


def _verdict(n: dict) -> str:
    if n["layer"] is None:
        return n["reason"] or ""
    verdict = "agrees" if n.get("agrees") else "differs" if n.get("agrees") is False else "not compared"
    if n.get("max_abs_diff") is not None:
        verdict += f", max |diff| {compact(n['max_abs_diff'])}"
    if n.get("worst"):
        from ..onnx.runtime import worst_text

        verdict += f"; {worst_text(n, compact)}"
    if n.get("rule"):
        verdict += f" (rule: {n['rule']})"
    if n.get("masked"):
        verdict += f"; {n['masked']['cells']} undefined cell(s) not compared ({n['masked']['rule']})"
    return verdict


def model_page() -> None:
    guarded(_model_page)


def _model_page() -> None:
    from .page import PRESENTER_CSS

    # the graph nearer the first screen (Streamlit's top padding is for a page without the navigation bar)
    st.html(PAGE_CSS + (PRESENTER_CSS if presenter_on() else ""))
    # the title and the model's counts beside the upload and the analysis's status, not over them: the graph is on
    # the first screen of a 1280 × 720 projector
    head, side = st.columns([3, 2])
    with head:
        st.subheader("Whole ONNX model", anchor=False)
        st.caption(
            "Every node on the tensor it really reads (ONNX Runtime runs the model once, every tensor marked as an "
            "output), its layer's reference against ONNX Runtime's output of it, and TensorRT's ONNX parser's "
            "engine for the whole model."
        )
    cap = reading.MAX_MODEL_BYTES >> 20
    upload = side.file_uploader(
        f"An ONNX model (.onnx, self-contained, at most {cap} MB)",
        type=["onnx"],
        key="model.upload",
        max_upload_size=cap,
    )
    if upload is not None:
        try:
            digest, _ = reading.remember(upload.getvalue(), upload.name)
        except ValidationError as exc:
            st.error(inert(str(exc)), icon=":material/error:")
            return
        st.query_params[ONNX], st.query_params[MODEL] = digest, upload.name[:80]
    digest = st.query_params.get(ONNX)
    if not digest:
        st.info("Upload a model, or open one from a link.", icon=":material/upload_file:")
        return
    name = str(st.query_params.get(MODEL) or "model.onnx")[:80]
    try:
        with side:
            answer = _analysis(digest, name)
    except blobs.Missing as exc:
        st.warning(inert(f"URL parameter onnx: the model {digest[:12]}… {exc}"), icon=":material/link_off:")
        return
    _draw(answer, digest, name, head)


def _analysis(digest: str, name: str) -> dict:
    """The model's analysis on its seeded input, made once per model digest (a revisit answers at once); while it
    is made, a status names the step under way."""
    key = (digest, "seeded", name)
    answer = _answers.get(key)
    if answer is not None:
        return answer
    with st.status("Opening the model", expanded=False) as status:

        def step(text: str) -> None:
            status.update(label=text + " …")
            st.text(text)

        answer = whole.analyze(reading.remembered(digest), name, progress=step)
        status.update(label=f"Analysed in {answer['seconds']} s", state="complete")
    _answers.put(key, answer)
    return answer


def _first_difference(answer: dict, digest: str, name: str, pages: dict) -> None:
    first = whole.first_difference(answer["nodes"])
    if first is None:
        return
    n = next(n for n in answer["nodes"] if n["name"] == first)
    st.error(
        inert(
            f"First node where the reference and ONNX Runtime part ways: {first} · {n['op_type']} "
            f"({_verdict(n)}). Later differences may be its echo."
        ),
        icon=":material/report:",
    )
    st.page_link(
        pages[n["layer"]],
        label=inert(f"Open {first} on its real input"),
        icon=":material/arrow_forward:",
        query_params={ONNX: digest, NODE: first, MODEL: name, REAL: "1"},
    )


def _selection(result, digest: str, name: str) -> None:
    """The run of nodes shift-clicked on the graph: a link to it as a chain, or why it is none."""
    picked = [str(n) for n in (getattr(result, "selection", None) or [])][: 2 * MAX_DRAWN]
    if not picked:
        st.caption("Shift-click consecutive nodes on the graph to open them as a chain.")
        return
    query, why = chain_link(digest, picked, name)
    if query is None:
        st.warning(inert(f"The selected nodes are no chain: {why}"), icon=":material/link_off:")
        return
    from .chain import chain_page

    st.page_link(
        st.Page(chain_page, title="Chain", url_path="chain"),
        query_params=query,
        label=f"Open the {len(picked)} selected nodes as a chain ({query['layers'].replace(',', ' → ')})",
        icon=":material/linear_scale:",
    )


def _draw(answer: dict, digest: str, name: str, head) -> None:
    """The model's counts (in `head`, beside the upload), the first difference, the graph, then what explains it."""
    from .page import layer_pages

    c = answer["counts"]
    head.text(
        f"{name}: {c['nodes']} nodes, {c['opened']} open as a layer, {c['agreeing']} agree with ONNX Runtime "
        f"on their real input"
        + (f", {c['engine_layers']} engine layers" if "engine_layers" in c else "")
        + f" ({answer['seconds']} s)"
    )
    if "onnxruntime_error" in answer:
        st.error(inert(f"ONNX Runtime could not run the model: {answer['onnxruntime_error']}"), icon=":material/error:")
    pages = layer_pages()
    _first_difference(answer, digest, name, pages)
    if len(answer["nodes"]) <= MAX_DRAWN:
        result = _graph_component()(
            key="model.graph",
            data=graph_data(answer, digest, name),
            width="stretch",
            height="content",
            on_selection_change=lambda: None,
        )
        st.caption(
            "Green: the layer agrees with ONNX Runtime on the node's real input; red: it differs; grey: no "
            "layer computes the node. A node that opens is a link to its layer's page; shift-click selects a run. "
            "A dashed outline is one engine layer (hover: its name; click: its nodes as a chain). Wheel: zoom, "
            "drag: pan."
        )
        _selection(result, digest, name)
    else:
        st.text(f"{len(answer['nodes'])} nodes: more than {MAX_DRAWN}, listed below and not drawn.")
    for note in answer["notes"]:
        st.caption(inert(note))
    for out, o in answer.get("output", {}).items():
        low, high = compact(o["min"]), compact(o["max"])
        st.text(f"output {out}: {tuple(o['shape'])}, min {low}, max {high} [ONNX Runtime, the whole model]")
    st.subheader("Nodes")
    with st.container(height=480 if len(answer["nodes"]) > 12 else "content", border=False):
        first = whole.first_difference(answer["nodes"])
        for n in sorted(answer["nodes"], key=lambda n: n["name"] != first):  # the first difference first
            text = f"{n['name']} · {n['op_type']}"
            if n["layer"] is None:
                st.text(f"{text}: {n['reason']}")
                continue
            verdict = _verdict(n)
            st.page_link(
                pages[n["layer"]],
                label=inert(f"{text} → {opens_as(LAYERS[n['layer']].title, n.get('identity'))}: {verdict}"),
                icon=":material/check_circle:" if n.get("agrees") else ":material/cancel:",
                query_params={ONNX: digest, NODE: n["name"], MODEL: name, REAL: "1"},
            )
    engine = answer.get("engine") or {}
    st.subheader("Engine (TensorRT's ONNX parser, the whole model)")
    if engine.get("status") not in ("built", "cached"):
        status = engine.get("status", "not_built")
        st.text(f"{ENGINE_STATUS.get(status, status)}: {engine.get('error') or engine.get('why') or ''}")
        return
    groups = {g["name"]: g for g in fused_groups(answer, digest, name)}
    st.dataframe(
        [
            {
                "engine layer": layer["name"],
                "type": layer["type"],
                "computes nodes": ", ".join(layer["fuses"]),
                "as a chain": groups.get(layer["name"], {}).get("chain"),
                "why not a chain": groups.get(layer["name"], {}).get("why") or "",
            }
            for layer in engine["layers"]
        ],
        column_config={"as a chain": st.column_config.LinkColumn("as a chain", display_text="open")},
        hide_index=True,
        width="stretch",
    )
    if engine["unnamed"]:
        st.text("Nodes no engine layer names (fused away or folded by TensorRT): " + ", ".join(engine["unnamed"]))
