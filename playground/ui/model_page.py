"""The model page (/model): an ONNX model's nodes with their verdicts, as `python -m playground model` gives them.

An upload is kept by the server (content-addressed, as the home page's), and the page's URL names it
(`/model?onnx=DIGEST&model=FILE`), so a link reopens the same model. Every node is listed as text (a model's names
are never read as markdown); each that opens links to its layer's page with the node's configuration
(`/LAYER?onnx=DIGEST&node=NAME&model=FILE`).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from .. import blobs, onnxio
from .. import model as whole
from ..errors import ValidationError
from ..layers import LAYERS
from ..memo import Memo
from . import state
from .models import MODEL, NODE, ONNX, REAL

_answers = Memo(8)  # by model digest: a page's reruns (a click, a resize) do not run the model again
_HERE = Path(__file__).parents[1] / "graph"  # the graph's browser side: graph.js, graph.css, the vendored dagre
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


def graph_data(answer: dict, digest: str, name: str) -> dict:
    """What the graph draws: a box per node (its verdict as its status, a link to its layer's page where it opens)
    and an edge wherever a node reads a tensor another writes."""
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
                "short": f"{n['op_type']} → {n['layer']}" if n["layer"] else n["op_type"],
                "href": f"./{n['layer']}?" + urlencode({ONNX: digest, NODE: n["name"], MODEL: name, REAL: "1"})
                if n["layer"]
                else None,
            }
        )
        edges += [[producer[t], n["name"]] for t in n.get("reads", []) if t in producer]
    return {"key": f"{digest}|{name}", "nodes": nodes, "edges": edges}


def _verdict(n: dict) -> str:
    if n["layer"] is None:
        return n["reason"] or ""
    verdict = "agrees" if n.get("agrees") else "differs" if n.get("agrees") is False else "not compared"
    if n.get("max_abs_diff") is not None:
        verdict += f", max |diff| {n['max_abs_diff']:.3g}"
    if n.get("rule"):
        verdict += f" (rule: {n['rule']})"
    if n.get("masked"):
        verdict += f"; {n['masked']['cells']} undefined cell(s) not compared ({n['masked']['rule']})"
    return verdict


def model_page() -> None:
    state.guarded(_model_page)


def _model_page() -> None:
    st.title("Whole ONNX model")
    st.caption(
        "Every node on the tensor it really reads (ONNX Runtime runs the model once, every tensor marked as an "
        "output), its layer's reference against ONNX Runtime's output of it, and TensorRT's ONNX parser's "
        "engine for the whole model."
    )
    cap = onnxio.MAX_MODEL_BYTES >> 20
    upload = st.file_uploader(
        f"An ONNX model (.onnx, self-contained, at most {cap} MB)",
        type=["onnx"],
        key="model.upload",
        max_upload_size=cap,
    )
    if upload is not None:
        try:
            digest, _ = onnxio.remember(upload.getvalue(), upload.name)
        except ValidationError as exc:
            st.error(state.inert(str(exc)), icon=":material/error:")
            return
        st.query_params[ONNX], st.query_params[MODEL] = digest, upload.name[:80]
    digest = st.query_params.get(ONNX)
    if not digest:
        st.info("Upload a model, or open one from a link.", icon=":material/upload_file:")
        return
    name = str(st.query_params.get(MODEL) or "model.onnx")[:80]
    try:
        answer = _answers.get_or_make((digest, name), lambda: whole.analyze(onnxio._remembered(digest), name))
    except blobs.Missing as exc:
        st.warning(state.inert(f"URL parameter onnx: the model {digest[:12]}… {exc}"), icon=":material/link_off:")
        return
    _draw(answer, digest, name)


def _draw(answer: dict, digest: str, name: str) -> None:
    from .page import layer_pages

    c = answer["counts"]
    st.text(
        f"{name}: {c['nodes']} nodes, {c['opened']} open as a layer, {c['agreeing']} agree with ONNX Runtime "
        f"on their real input"
        + (f", {c['engine_layers']} engine layers" if "engine_layers" in c else "")
        + f" ({answer['seconds']} s)"
    )
    for note in answer["notes"]:
        st.caption(state.inert(note))
    if "onnxruntime_error" in answer:
        st.error(
            state.inert(f"ONNX Runtime could not run the model: {answer['onnxruntime_error']}"), icon=":material/error:"
        )
    for out, o in answer.get("output", {}).items():
        st.text(f"output {out}: {tuple(o['shape'])}, min {o['min']}, max {o['max']} [ONNX Runtime, the whole model]")
    pages = layer_pages()
    st.subheader("Graph")
    if len(answer["nodes"]) <= MAX_DRAWN:
        st.caption(
            "Green: the layer agrees with ONNX Runtime on the node's real input; red: it differs; grey: no "
            "layer computes the node. A node that opens is a link to its layer's page."
        )
        _graph_component()(key="model.graph", data=graph_data(answer, digest, name), width="stretch", height="content")
    else:
        st.text(f"{len(answer['nodes'])} nodes: more than {MAX_DRAWN}, listed below and not drawn.")
    st.subheader("Nodes")
    with st.container(height=480 if len(answer["nodes"]) > 12 else "content", border=False):
        for n in answer["nodes"]:
            text = f"{n['name']} · {n['op_type']}"
            if n["layer"] is None:
                st.text(f"{text}: {n['reason']}")
                continue
            verdict = _verdict(n)
            st.page_link(
                pages[n["layer"]],
                label=state.inert(f"{text} → {LAYERS[n['layer']].title}: {verdict}"),
                icon=":material/check_circle:" if n.get("agrees") else ":material/cancel:",
                query_params={ONNX: digest, NODE: n["name"], MODEL: name, REAL: "1"},
            )
    engine = answer.get("engine") or {}
    st.subheader("Engine (TensorRT's ONNX parser, the whole model)")
    if engine.get("status") not in ("built", "cached"):
        st.text(f"{engine.get('status', 'not built')}: {engine.get('error') or engine.get('why') or ''}")
        return
    st.dataframe(
        [
            {"engine layer": layer["name"], "type": layer["type"], "computes nodes": ", ".join(layer["fuses"])}
            for layer in engine["layers"]
        ],
        hide_index=True,
        width="stretch",
    )
    if engine["unnamed"]:
        st.text("Nodes no engine layer names (fused away or folded by TensorRT): " + ", ".join(engine["unnamed"]))
