"""ONNX models on the pages: an upload lists its nodes (each a link to its layer page), and a link
`/LAYER?onnx=DIGEST&node=NAME&model=FILE` opens that node on the stage with every parameter set."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import streamlit as st

from ..base import blobs
from ..base.errors import ValidationError
from ..base.layer import Layer
from ..base.onnx_map import opens_as
from ..layers import LAYERS
from ..onnx import opening, reading
from ..onnx.opened import SEED, Opened
from ..serve import protocol
from ..serve.protocol import model_name
from . import widgets
from .keys import MODEL, NODE, ONNX, REAL, key_selector
from .messages import inert

CAP_MIB = reading.MAX_MODEL_BYTES >> 20
# The widget's own cap, in the megabytes Streamlit's browser side counts (10^6 bytes; 1024² on some systems),
# rounded up: a model of exactly the cap passes it, and onnx.reading's check in bytes is the one boundary.
WIDGET_MB = -(-reading.MAX_MODEL_BYTES // 10**6)


@dataclass(frozen=True)
class NodeLink:
    opened: Opened
    base: dict[str, str]  # the node's configuration as URL texts: the stage's defaults (a link writes what differs)
    source: dict  # what the stage says of it: model, node, op, the rules where ONNX differs
    # the tensors the node reads in its model (a link's real=1), in the layer's shapes: one array, or the feed dict
    real: np.ndarray | dict | None = None
    origins: tuple = ()  # ((figure, where its tensor comes from), …): the inputs `real` feeds, said on their figures

    def source_of(self, x) -> dict:
        """What the stage says of the node: with each input figure's origin while that input is the real tensor (a
        pattern the user picks after is theirs, and said as nothing more)."""
        if self.real is None:
            return self.source
        real = self.real if isinstance(self.real, dict) else {None: self.real}
        given = x if isinstance(x, dict) else {None: x}
        same = all(np.shape(given.get(n)) == v.shape and np.array_equal(given.get(n), v) for n, v in real.items())
        return self.source | {"inputs": [list(o) for o in self.origins]} if same else self.source


@functools.lru_cache(maxsize=64)
def origin(digest: str, tensor: str) -> str:
    """Where a tensor of the model comes from, as an input figure says it: "A = NODE's output, by ONNX Runtime"
    without its "A = " (the node that writes it), or the model's input (its seeded pattern)."""
    model = reading.remembered(digest)
    for i, n in enumerate(reading.graph_nodes(model)):
        if tensor in n.output:
            return f"{reading.node_name(n, i)}'s output, by ONNX Runtime"
    return f"the model's input {tensor} (its seeded pattern)"


@functools.lru_cache(maxsize=8)
def _real_values(digest: str, tensors: tuple[str, ...]) -> dict[str, np.ndarray]:
    from ..model import kept

    return kept.real_values(reading.remembered(digest), tensors, digest)


def node_input(inp, node: NodeLink | None):
    """The page's input form with the node's real tensors as its inputs, while the controls still hold what the link
    wrote (the node's shapes, the seeded patterns): a pattern the user picks after is theirs (input by input, for a
    layer of several)."""
    if node is None or node.real is None:
        return inp
    seeded = node.opened.to_layer(opening.seeded_input(node.opened))
    if isinstance(node.real, dict):
        if not isinstance(inp.x, dict):
            return inp
        x = dict(inp.x)
        for n, real in node.real.items():
            mine = x.get(n)
            if isinstance(mine, np.ndarray) and mine.shape == real.shape and np.array_equal(mine, seeded[n]):
                x[n] = real
        return dataclasses.replace(inp, x=x)
    if not isinstance(inp.x, np.ndarray) or inp.x.shape != node.real.shape:
        return inp
    if not np.array_equal(inp.x, seeded.reshape(inp.x.shape)):
        return inp
    return dataclasses.replace(inp, x=node.real)


def uploader_widget(key: str, label: str):
    """An .onnx file uploader whose label (`label`, then the cap) says the cap once, in MiB: the widget's own line (in
    the megabytes it counts, a larger number: it lets a model of exactly the cap through) is not shown."""
    hide = f"{key_selector(key)} [data-testid='stFileUploaderDropzoneInstructions'] span {{ display: none; }}"
    st.html(f"<style>{hide}</style>")
    return st.file_uploader(f"{label}, at most {CAP_MIB} MiB)", type=["onnx"], key=key, max_upload_size=WIDGET_MB)


def uploader(key: str, pages: dict, model_page=None) -> None:
    """An .onnx upload and its nodes, as `python -m playground onnx` lists them: a link for each that opens (to
    its layer's page in `pages`, by layer name), and one to the whole model on `model_page` (the model page's
    st.Page or file) where given."""
    upload = uploader_widget(key, "Open an ONNX model (.onnx")
    if upload is None:
        return
    try:
        digest, model = reading.remember(upload.getvalue(), upload.name)
    except ValidationError as exc:
        st.error(inert(str(exc)), icon=":material/error:")
        return
    nodes = opening.list_nodes(model)
    opens = sum(n["layer"] is not None for n in nodes)
    st.caption(f"**{inert(upload.name)}**: {len(nodes)} node(s), {opens} open as a layer.")
    if model_page is not None:
        st.page_link(
            model_page,
            label=inert(f"The whole model: {upload.name[:80]} on the Model page (its graph, verdicts and engine)"),
            icon=":material/account_tree:",
            query_params={ONNX: digest, MODEL: upload.name[:80]},
        )
    with st.container(height=320 if len(nodes) > 8 else "content", border=False):
        for n in nodes:
            if n["layer"]:
                st.page_link(
                    pages[n["layer"]],  # a node's name is the model's text: shown as given, never markdown
                    label=inert(
                        f"{n['name']} · {n['op_type']} → {opens_as(LAYERS[n['layer']].title, n.get('identity'))}"
                    ),
                    icon=LAYERS[n["layer"]].icon,
                    query_params={ONNX: digest, NODE: n["name"], MODEL: upload.name[:80]},
                )
            else:
                st.caption(inert(f"{n['name']} · {n['op_type']}: {n['reason']}"))


def node_link(layer: Layer) -> NodeLink | None:
    """The node the link names, opened (the model kept by this server); on the first run of a session the page's
    input is set to the node's (its shape, the seeded pattern `run --onnx` uses). A link this server cannot follow
    says why, and the page opens as without it."""
    digest = st.query_params.get(ONNX)
    if not digest:
        return None
    name, model = st.query_params.get(NODE), model_name(st.query_params.get(MODEL))
    try:
        opened = opening.open_remembered(digest, name, model)
        if opened.layer is not layer:
            raise ValidationError("onnx", NODE, f"{opened.node} opens as {opened.layer.title}, not {layer.title}")
        params = opened.params
    except (ValidationError, blobs.Missing) as exc:
        what = f"the model {digest[:12]}… {exc}" if isinstance(exc, blobs.Missing) else str(exc)
        st.warning(inert(f"URL parameter onnx: {what}"), icon=":material/link_off:")
        return None
    applied = f"_onnx_applied.{layer.name}"
    if st.session_state.get(applied) != (digest, opened.node):
        st.session_state[applied] = (digest, opened.node)
        widgets.write_input(
            layer, {"kind": "random", "shape": opened.shape, "seed": SEED, "low": -4.0, "high": 4.0}
        )  # opening.seeded_input's pattern
    source = {"model": model, "node": opened.node, "op": opened.op, "differs": opened.differs, "notes": opened.notes}
    real, origins = None, ()
    if st.query_params.get(REAL) == "1" and opened.tensors_read:
        try:
            from ..model import whole

            values = _real_values(digest, opened.tensors_read)
            opened = dataclasses.replace(opened, values=values)  # its steps' operands and ONNX Runtime's feed too
            real = whole.real_feed(opened, values)
            fed = (
                [(n, t) for n, t in zip(layer.input_names, opened.tensors) if n not in opened.constants]
                if isinstance(real, dict)
                else [(layer.input_names[0], opened.data)]
            )
            origins = tuple((protocol.input_figure(layer, n), origin(digest, t)) for n, t in fed)
            source = source | {
                "notes": [
                    *opened.notes,
                    "Every input is the tensor the node reads when the model runs on its seeded input (ONNX Runtime).",
                ]
            }
        except Exception as exc:  # noqa: BLE001 - ONNX Runtime could not run the model: the seeded input, said
            st.warning(
                inert(f"URL parameter real: the model could not be run ({exc}); the node opens on the seeded input"),
                icon=":material/warning:",
            )
    return NodeLink(opened, protocol.query_of(layer, params, opened.shape), source, real, origins)
