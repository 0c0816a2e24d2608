"""The model page (/model): an ONNX model's nodes with their verdicts, as `python -m playground model` gives them.

An upload is kept by the server (content-addressed, as the home page's), and the page's URL names it
(`/model?onnx=DIGEST&model=FILE`), so a link reopens the same model. Every node is listed as text (a model's names
are never read as markdown); each that opens links to its layer's page with the node's configuration
(`/LAYER?onnx=DIGEST&node=NAME&model=FILE`). The first node whose reference and ONNX Runtime part ways is named
first; a run of nodes (shift-clicked on the graph, or an engine layer's fused nodes) opens as a chain on the tensor
its first node reads in the model (serve.as_chain).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from ..base import blobs
from ..base.errors import ValidationError
from ..base.memo import Memo
from ..base.numbers import compact
from ..base.onnx_map import opens_as
from ..layers import LAYERS
from ..model import kept, whole
from ..onnx import reading
from ..serve import as_chain, assets
from ..serve import graph_data as graph_data_route
from ..serve.protocol import ENGINE_STATUS, model_name
from . import model_precision, models
from .keys import MODEL, NODE, ONNX, REAL
from .messages import guarded, inert
from .stage import MODEL_DRAWN
from .view import presenter_on

_answers = Memo(8)  # by model digest and input: a page's reruns and revisits do not run the model again
_fused = Memo(8)  # by model digest, name and engine layers: their chain links (fused_groups)
_chains = Memo(256)  # by model digest and a run of nodes: the chain page's address, or why the run is no chain
_models = Memo(2)  # by digest: the model loaded (checked, folded) once for all its runs' chains
_HERE = Path(__file__).parents[1] / "graph"  # the graph's browser side: graph.css (its modules: serve.assets)
# The component's own script imports the graph's entry from the asset route (graph.js imports its neighbours, and
# starts its layout worker, by relative address: the modulepreloads of the page's HTML fetch them early, ui.entry)
# and draws once the data it names (serve.graph_data) is in. Served without the app's routes (`streamlit run
# main.py`), the graph says where it is served.
LOADER = """
export default async function (component) {
  let graph;
  try {
    graph = await import(new URL(component.data.module, window.location.href).href);
  } catch (e) {
    component.parentElement.textContent = "The graph's scripts are served beside the app by app.py (scripts/start.sh): " + e.message;
    return undefined;
  }
  return graph.default(component);
}
"""
# the graph takes the first screen: the page's height less the navigation bar, the counts' line and the graph's bar
PAGE_CSS = (
    '<style>[data-testid="stMainBlockContainer"] { padding-top: 64px; }'
    ".pg-graph { --pg-graph-height: calc(100vh - 64px - 7.5rem); }</style>"
)
LISTED = 400  # nodes: a larger model's nodes are a table (one element, on asking), not a link each
_component = None
_drawn = None
# Says the page's first view is on the screen (a frame after it is mounted): its run shows the pages' menu, held
# back until then (stage.menu_position). The graph says it itself once its first view is drawn.
_DRAWN_JS = """
export default function ({ setTriggerValue }) {
  requestAnimationFrame(() => setTimeout(() => setTriggerValue("drawn", true), 0));
}
"""


def _mark_drawn() -> None:
    st.session_state[MODEL_DRAWN] = True


def _says_drawn() -> None:
    """Where the menu waits on this page's first view: the probe that says it is drawn (a page with no graph)."""
    global _drawn
    if st.session_state.get(MODEL_DRAWN):
        return
    if _drawn is None:  # registered once per process
        _drawn = st.components.v2.component("playground_model_drawn", js=_DRAWN_JS)
    _drawn(key="model.drawn", on_drawn_change=_mark_drawn, height=0)


def _graph_component():
    global _component
    if _component is None:  # registered once per process
        _component = st.components.v2.component(
            "playground_graph", js=LOADER, css=(_HERE / "graph.css").read_text(encoding="utf-8"), isolate_styles=False
        )
    return _component


def chain_link(digest: str, names: list[str], name: str, engine: dict | None) -> tuple[dict | None, str | None]:
    """(the chain page's URL keys for this run of the model's nodes, None) or (None, why it is no chain); `engine`:
    the model's (a BatchNormalization it computes in the convolution before it is folded into it)."""

    def make():
        try:
            model = _models.get_or_make(digest, lambda: reading.remembered(digest))
            return as_chain.query_of(model, names, digest, name, engine), None
        except ValidationError as exc:
            return None, str(exc)

    return _chains.get_or_make((digest, tuple(names), name), make)


def fused_groups(answer: dict, digest: str, name: str) -> list[dict]:
    """Each engine layer that computes two or more of the model's nodes: its name, type, nodes and the chain page's
    URL of its nodes (or why they are no chain). Made once per model and engine (the page's every run draws them:
    a model of more fused layers than `_chains` keeps would make them all again each time)."""

    layers = (answer.get("engine") or {}).get("layers", [])

    def make() -> list[dict]:
        groups = []
        for layer in layers:
            if len(layer["fuses"]) < 2:
                continue
            query, why = chain_link(digest, layer["fuses"], name, answer.get("engine"))
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

    return _fused.get_or_make((digest, name, tuple((lay["name"], tuple(lay["fuses"])) for lay in layers)), make)


def _href(n: dict, digest: str, name: str) -> str | None:
    """The node's layer page on its real input, where it opens."""
    if n["layer"] is None:
        return None
    return f"./{n['layer']}?" + urlencode({ONNX: digest, NODE: n["name"], MODEL: name, REAL: "1"})


def _dims(shape) -> str:
    return "×".join(str(d) for d in shape) if shape else "scalar"


def _attributes(attrs: dict) -> str:
    """A node's key attributes as its box says them: `k3×3 s2×2 d2×2 g32 axis 1 perm(0,2,1)`."""
    said = {"kernel_shape": "k", "strides": "s", "dilations": "d", "group": "g", "axis": "axis ", "axes": "axes "}
    out = []
    for name, value in sorted(attrs.items(), key=lambda a: list(whole.KEY_ATTRIBUTES).index(a[0])):
        if name == "perm":
            out.append("perm(" + ",".join(map(str, value)) + ")")
        elif name in ("strides", "dilations") and all(v == 1 for v in value):
            continue  # the default: nothing to say
        elif name == "group" and value == 1:
            continue
        else:
            out.append(said[name] + (_dims(value) if isinstance(value, list) else str(value)))
    return " ".join(out)


def graph_data(answer: dict, digest: str, name: str) -> dict:
    """What the graph draws: a box per node (its verdict as its status, its op and key attributes, its max |diff|,
    a link to its layer's page where it opens, else why not), the name whose scopes group it (its own, or its first
    output's where the model names no node), an edge wherever a node reads a tensor another writes ([the writer's
    index, the tensor's among its outputs, the reader's index, the tensor's shape as ONNX Runtime's run gives it]:
    indices, as 10,000 nodes' edges would send their names again and again), the first node that differs, and the
    engine's fused groups."""
    producer, shape = {}, {}  # tensor -> (its node's index, its output's index); its shape's words
    for j, n in enumerate(answer["nodes"]):
        for i, t in enumerate(n.get("writes", [])):
            producer[t] = (j, i)
            if i < len(n.get("shapes", [])):
                shape[t] = _dims(n["shapes"][i])
    nodes, edges = [], []
    for j, n in enumerate(answer["nodes"]):
        status = (
            "none"
            if n["layer"] is None
            else "agrees"
            if n.get("agrees") is True
            else "differs"
            if n.get("agrees") is False
            else "open"
        )
        op = " ".join(filter(None, [n["op_type"], _attributes(n.get("attributes", {}))]))
        writes = n.get("writes", [])
        nodes.append(
            {
                "id": n["name"],
                # scopes from the name, else (a name without any: the model's or our `Op_i`) from its output's
                "path": writes[0] if "/" not in n["name"] and writes and "/" in writes[0] else None,
                "op": n["op_type"],
                "status": status,
                "detail": _verdict(n),
                "short": f"{op} → {opens_as(n['layer'], n.get('identity'))}" if n["layer"] else op,
                "diff": _finite(n.get("max_abs_diff")),
                "shape": shape.get(writes[0]) if writes else None,
                "href": _href(n, digest, name),
            }
        )
        edges += [[*producer[t], j, shape.get(t, "")] for t in n.get("reads", []) if t in producer]
    return {
        "key": f"{digest}|{name}",
        "nodes": nodes,
        "edges": edges,
        "first": whole.first_difference(answer["nodes"]),
        "groups": fused_groups(answer, digest, name),
    }


def _finite(value):
    """A number JSON can carry (its data is strict JSON): an infinite difference as None (its verdict says it)."""
    return value if value is None or math.isfinite(value) else None


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

    st.html(PAGE_CSS + (PRESENTER_CSS if presenter_on() else ""))
    # an open model's graph comes first, the page's height: its counts one line above it, the upload below it
    head, body, side = st.container(), st.container(), st.container()
    opened = bool(st.query_params.get(ONNX))
    with side:
        upload = models.uploader_widget(
            "model.upload", ("Open another ONNX model" if opened else "An ONNX model") + " (.onnx, self-contained"
        )
    if upload is not None:
        try:
            digest, _ = reading.remember(upload.getvalue(), upload.name)
        except ValidationError as exc:
            side.error(inert(str(exc)), icon=":material/error:")
            return
        st.query_params[ONNX], st.query_params[MODEL] = digest, upload.name[:80]
    digest = st.query_params.get(ONNX)
    if not digest:
        with head:
            st.subheader("Whole ONNX model", anchor=False)
            st.caption(
                "Every node on the tensor it really reads (ONNX Runtime runs the model a segment at a time, every "
                "tensor marked as an output), its layer's reference against ONNX Runtime's output of it, and TensorRT's ONNX parser's "
                "engine for the whole model."
            )
            st.info("Upload a model, or open one from a link.", icon=":material/upload_file:")
        _says_drawn()
        return
    name = model_name(st.query_params.get(MODEL))
    try:
        with side:
            answer = _analysis(digest, name)
    except blobs.Missing as exc:
        head.warning(inert(f"URL parameter onnx: the model {digest[:12]}… {exc}"), icon=":material/link_off:")
        _says_drawn()
        return
    with body:
        _draw(answer, digest, name, head)


@dataclass
class _Job:
    """One model's analysis under way in a thread of its own: the step it is at and the share of nodes judged (what
    the page polls), then its answer or the exception that stopped it."""

    step: str | None = None
    done: float = 0.0
    answer: dict | None = None
    error: BaseException | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    def progress(self, step: str, done: float | None = None) -> None:
        self.step, self.done = step, self.done if done is None else done


_jobs: dict[str, _Job] = {}  # by model digest: a page that reloads, or a second visitor, joins the one
_jobs_lock = threading.Lock()
POLL_S = 0.25


def _job(digest: str, name: str) -> _Job:
    """The analysis of this model (whatever its name), started in the background where none is under way."""
    key = digest
    with _jobs_lock:
        job = _jobs.get(key)
        if job is None:
            job = _jobs[key] = _Job()

            def run() -> None:
                try:
                    job.answer = kept.analysis(digest, name, lambda: reading.remembered(digest), progress=job.progress)
                except BaseException as exc:  # noqa: BLE001 - handed to the page that waits, which shows it
                    job.error = exc
                finally:
                    with _jobs_lock:
                        _jobs.pop(key, None)
                    job.finished.set()

            threading.Thread(target=run, name=f"model-analysis-{digest[:12]}", daemon=True).start()
    return job


def _analysis(digest: str, name: str) -> dict:
    """The model's analysis on its seeded input, made once per model digest, whatever name a link gives it, and kept
    in the engine cache's store (model.kept: a revisit, the same model under another `model=`, or anyone in the room
    opening it, reads it). It runs in the background (a page left, or reloaded, while it runs does not stop it, and
    every page waiting on the model shares it); the page waiting shows a status naming the step under way and a bar
    the share of nodes judged."""
    key = (digest, "seeded")
    answer = _answers.get(key)
    if answer is not None:
        return answer | {"model": name}
    with st.status("Opening the model", expanded=False) as status:
        bar, shown, job = st.progress(0.0), [None, -1], _job(digest, name)
        _says_drawn()  # the menu while the analysis runs (its run rejoins the job)
        while True:
            finished = job.finished.wait(POLL_S)
            step, done = job.step, job.done
            if step is not None and step != shown[0]:
                shown[0] = step
                status.update(label=step + " …")
                st.text(step)
            if int(done * 100) != shown[1]:  # a message per percent, not per node
                shown[1] = int(done * 100)
                bar.progress(min(done, 1.0), text=f"{shown[1]} % of the nodes judged")
            if finished:
                break
        if job.error is not None:
            raise job.error
        answer = job.answer
        bar.progress(1.0)
        cache = answer.get("cache", {})
        status.update(
            label=f"Read from the cache in {answer['seconds']} s (its first analysis took {cache['first_seconds']} s)"
            if cache.get("status") == "cached"
            else f"Analysed in {answer['seconds']} s",
            state="complete",
        )
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


def _selection(result, answer: dict, digest: str, name: str, precision: str = "FP32") -> None:
    """The run of nodes shift-clicked on the graph: a link to it as a chain, or why it is none."""
    picked = [str(n) for n in (getattr(result, "selection", None) or [])][:64]
    if not picked:
        st.caption("Shift-click consecutive nodes on the graph to open them as a chain.")
        return
    query, why = chain_link(digest, picked, name, answer.get("engine"))
    if query is None:
        st.warning(inert(f"The selected nodes are no chain: {why}"), icon=":material/link_off:")
        return
    query = as_chain.in_precision(query, precision)  # each layer in the page's precision
    from .chain import chain_page

    st.page_link(
        st.Page(chain_page, title="Chain", url_path="chain"),
        query_params=query,
        label=f"Open the {len(picked)} selected nodes as a chain ({query['layers'].replace(',', ' → ')})",
        icon=":material/linear_scale:",
    )


def _draw(answer: dict, digest: str, name: str, head) -> None:
    """The model's counts (in `head`, over the graph), the graph, then the first difference and what explains it."""
    from .page import layer_pages

    c = answer["counts"]
    counts, choice = head.columns([5, 1], vertical_alignment="center")  # one line over the graph
    counts.text(
        f"Whole ONNX model {name}: {c['nodes']} nodes, {c['opened']} open as a layer, {c['agreeing']} agree with ONNX Runtime "
        f"on their real input" + whole.engine_words(answer) + f" ({answer['seconds']} s)"
    )
    if "onnxruntime_error" in answer:
        st.error(inert(f"ONNX Runtime could not run the model: {answer['onnxruntime_error']}"), icon=":material/error:")
    pages = layer_pages()
    with choice:
        precision = model_precision.chosen()
    graph_box = st.container()  # the graph first; what the precision found under it
    low = None if precision == "FP32" else model_precision.analysis(digest, name, precision)
    by = None
    if low is not None:
        model_precision.summary(low, digest, name, pages)
        by = model_precision.which()

    def make() -> dict:
        data = graph_data(answer, digest, name)
        return data if low is None else model_precision.recolour(data, low, by)

    # what the graph draws, by its address: made (and gzipped) once per model, analysis and colouring
    url = graph_data_route.address(
        (digest, name, answer["seconds"], low is not None and precision, by),
        make,
        link=(digest, name) if low is None else None,  # what a link's page fetches early (ui.entry): its FP32 view
    )
    with graph_box:
        result = _graph_component()(
            key="model.graph",
            data={
                "key": url,  # a new address, a new graph (the same one, on a rerun, stays as it is)
                "url": url,
                "module": assets.url(assets.GRAPH_ENTRY, assets.GRAPH),
                "says_drawn": not st.session_state.get(MODEL_DRAWN),
            },
            width="stretch",
            height="content",
            on_selection_change=lambda: None,
            on_drawn_change=_mark_drawn,
        )
    st.caption(
        (
            "Green: the layer agrees with ONNX Runtime on the node's real input; red: it differs; grey: no layer "
            "computes the node (click: why)."
            if low is None
            else f"Green: the node's error in {precision} (as toggled) holds the policy; red: it crosses it "
            "(hover: both errors); grey: ONNX Runtime computes the node (click: why)."
        )
        + " A stack is a group of nodes from their names' scopes, or alike blocks "
        "folded (click: open it; its name's −: close it). A node that opens is a link to its layer's page; "
        "shift-click selects a run. A dashed outline is one engine layer (click: its nodes as a chain). Drag: pan; "
        "Ctrl + wheel, or the wheel after a click into the graph: zoom."
    )
    _selection(result, answer, digest, name, precision)
    if low is None:
        _first_difference(answer, digest, name, pages)
    for note in answer["notes"]:
        st.caption(inert(note))
    for out, o in answer.get("output", {}).items():
        low, high = compact(o["min"]), compact(o["max"])
        st.text(f"output {out}: {tuple(o['shape'])}, min {low}, max {high} [ONNX Runtime, the whole model]")
    st.subheader("Nodes")
    first = whole.first_difference(answer["nodes"])
    ordered = sorted(answer["nodes"], key=lambda n: n["name"] != first)  # the first difference first
    if len(ordered) > LISTED:  # one table, not an element per node, once asked for: the graph first finds a node
        if not st.toggle(f"List all {len(ordered):,} nodes", key="model.list"):
            return _engine(answer, digest, name)
        st.dataframe(
            [
                {
                    "node": n["name"],
                    "op": n["op_type"],
                    "opens as": opens_as(LAYERS[n["layer"]].title, n.get("identity")) if n["layer"] else "",
                    "verdict": _verdict(n) if n["layer"] else n["reason"],
                    "open": _href(n, digest, name),
                }
                for n in ordered
            ],
            column_config={"open": st.column_config.LinkColumn("open", display_text="open")},
            hide_index=True,
            width="stretch",
        )
    else:
        with st.container(height=480 if len(ordered) > 12 else "content", border=False):
            for n in ordered:
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
    _engine(answer, digest, name)


def _engine(answer: dict, digest: str, name: str) -> None:
    """The parser's engine layers, each with the model's nodes it computes (and its chain page where they are one)."""
    engine = answer.get("engine") or {}
    st.subheader("Engine (TensorRT's ONNX parser, the whole model)")
    if engine.get("status") not in ("built", "cached"):
        status = engine.get("status", "not_built")
        st.text(f"{ENGINE_STATUS.get(status, status)}: {engine.get('error') or engine.get('why') or ''}")
        return
    for note in engine.get("notes", []):
        st.caption(note)
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
