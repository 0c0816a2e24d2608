"""A node of an ONNX model opened as its layer: its attributes and constant inputs read by the layer's own mapping
(`Layer.onnx.read`, playground.base.onnx_map) into the layer's parameters, or the rule that stops it; the input shape
lifted to the layer's rank; and the node alone as a model of its own, for the second opinions.

    reading.load_model(bytes) → list_nodes(model) → open_node(model, name) → Opened
"""

from __future__ import annotations

import functools
import json

import numpy as np

from ..base.errors import ValidationError
from ..base.layer import Layer
from ..base.onnx_map import IDENTITY, Node
from ..layers import LAYERS, get_layer
from . import reading
from .opened import SEED, Known, Opened, attributes, node_model, output_shape, static_shape
from .several import open_several
from .writing import META_LAYER, META_PARAMS


def layer_for(op_type: str) -> Layer | None:
    return next((layer for layer in LAYERS.values() if layer.onnx and op_type in layer.onnx.ops), None)


def open_node(model, name: str | None = None, model_name: str = "model.onnx", batch: int = 1) -> Opened:
    """The node `name` (None: the model's only node, or its first that opens) as its layer; ValidationError
    naming the node, the attribute and the rule where it cannot be. `batch`: N where the model names it."""
    own = own_configuration(model, model_name)
    if own is not None and name is None:
        return own
    nodes, known = reading.graph_nodes(model), Known(model)
    named = {reading.node_name(n, i): n for i, n in enumerate(nodes)}
    if name is not None:
        if name not in named:
            raise ValidationError(
                "onnx",
                "--node",
                f"{model_name} has no node {name!r}; it has "
                + ", ".join(list(named)[:20])
                + (" …" if len(named) > 20 else ""),
            )
        return open_known(known, named[name], name, model_name, batch)
    first_problem = None
    for n, node in named.items():
        try:
            return open_known(known, node, n, model_name, batch)
        except ValidationError as exc:
            first_problem = first_problem or exc
    raise first_problem


def list_nodes(model) -> list[dict]:
    """Every node: its name, op_type and the layer it opens as, or the reason it cannot."""
    out, known = [], Known(model)
    for i, node in enumerate(reading.graph_nodes(model)):
        name = reading.node_name(node, i)
        entry = {"name": name, "op_type": node.op_type, "layer": None, "reason": None}
        try:
            opened = open_known(known, node, name, "", alone=False)
            entry["layer"] = opened.layer.name
            entry["differs"] = opened.differs
            entry["identity"] = opened.identity
        except ValidationError as exc:
            entry["reason"] = str(exc)
        out.append(entry)
    return out


def open_known(known: Known, node, name: str, model_name: str, batch: int = 1, alone: bool = True) -> Opened:
    """The node as its layer; alone=False: without the node as a model of its own (a listing needs none)."""
    where = f"ONNX node {name!r} ({node.op_type})"
    if node.domain not in ("", "ai.onnx"):
        raise ValidationError(where, "domain", f"{node.domain!r} is not ONNX's own: no layer here computes it")
    layer = layer_for(node.op_type)
    if layer is None:
        opens = sorted({op for layer in LAYERS.values() if layer.onnx for op in layer.onnx.ops})
        raise ValidationError(where, "op_type", f"has no layer here; the layers open {', '.join(opens)}")
    shapes, consts = known.shapes, known.consts
    consts_of = [None] + [consts.get(i) if i else None for i in node.input[1:]]
    read = known.outputs_read(node)
    probe = Node(name, node.op_type, attributes(node), consts_of, (), (), known.opset, list(node.input), read=read)
    identity = layer.onnx.identity(probe) if layer.onnx.identity else None
    if identity:  # TensorRT's parser builds an IIdentityLayer: the shuffle layer doing nothing is that copy
        layer = get_layer(IDENTITY[0])
    if layer.several:
        return open_several(known, node, name, model_name, layer, where, batch, alone)
    data = node.input[0] if node.input else ""
    if data in consts:
        raise ValidationError(where, "input", "is a constant: the layer's input must be a tensor the model computes")
    declared = shapes.get(data)
    onnx_shape, notes = static_shape(where, data, declared, batch)
    batch_free = onnx_shape != tuple(declared or ())
    low = 3 if layer.onnx.lift == "spatial" else 1  # a spatial layer needs N, C and one axis at least
    if not low <= len(onnx_shape) <= 5:
        raise ValidationError(where, "input", f"must have rank {low} … 5, not {len(onnx_shape)}", onnx_shape)
    lift = max(4 - len(onnx_shape), 0)
    shape = onnx_shape[:2] + (1,) * lift + onnx_shape[2:] if layer.onnx.lift == "spatial" else onnx_shape + (1,) * lift
    from ..base.inputs import InputError, validate_shape

    try:  # the page's input limits and the budget, as `run` meets them: the listing says so too
        validate_shape(shape)
    except InputError as exc:
        raise ValidationError(where, exc.param, exc.rule) from None
    view = Node(
        name,
        node.op_type,
        attributes(node),
        [None] + [consts.get(i) if i else None for i in node.input[1:]],
        shape,
        onnx_shape,
        known.opset,
        list(node.input),
        read=read,
    )
    raw = dict(IDENTITY[1]) if identity else layer.onnx.read(view)
    if identity:
        notes.append(
            f"{identity}: TensorRT's ONNX parser builds an identity layer for it; it opens as the shuffle layer "
            "doing nothing (no transpose, no reshape), the same copy."
        )
    try:
        params = layer.resolve(raw, shape)
    except ValidationError as exc:  # the layer's own rule, said of the node
        raise ValidationError(where, exc.param, exc.rule, exc.value) from None
    out_shape = output_shape(node, shapes, batch if batch_free else None) or None  # a lone input's: never a scalar
    return Opened(
        model_name,
        name,
        node.op_type,
        layer,
        raw,
        shape,
        onnx_shape,
        out_shape,
        layer.onnx.differs(view, raw) if layer.onnx.differs else [],
        notes,
        node_model(known.model, node, onnx_shape, consts) if alone else None,
        batch_free,
        tuple(range(2, 2 + lift)) if layer.onnx.lift == "spatial" else tuple(range(len(onnx_shape), 4)),
        params,
        tensors=(data,),
        identity=bool(identity),
    )


def own_configuration(model, model_name: str) -> Opened | None:
    """A model this playground exported: the configuration its metadata records, exactly (a construction ONNX
    spells as several nodes, e.g. the leaky ReLU's, reopens as the layer it came from)."""
    meta = {p.key: p.value for p in model.metadata_props}
    if META_LAYER not in meta or meta[META_LAYER] not in LAYERS:
        return None
    layer = get_layer(meta[META_LAYER])
    try:
        raw = json.loads(meta.get(META_PARAMS, "{}"))
        declared = reading.tensor_shapes(model)
        shapes = {n: tuple(int(d) for d in declared[i.name]) for n, i in zip(layer.input_names, model.graph.input)}
        shape = shapes[layer.input_names[0]]
        params = layer.resolve(raw, shapes)
    except (ValueError, KeyError, TypeError, IndexError):
        return None  # metadata that does not resolve: the nodes are read as any model's
    return Opened(
        model_name,
        f"{layer.name} (playground export)",
        "",
        layer,
        raw,
        shape,
        shape,
        None,
        node_model=model.SerializeToString(),
        params=params,
        shapes=shapes if layer.several else None,
        onnx_shapes=shapes if layer.several else None,
    )  # an export's inputs are the layer's own


def seeded_input(opened: Opened) -> np.ndarray:
    """The input a node opens with where none is given, in ONNX's layout: what its page's input pattern draws."""
    from ..base.inputs import make_input

    return make_input("random", opened.shape, seed=SEED).reshape(opened.onnx_shape)


@functools.lru_cache(maxsize=16)
def open_remembered(digest: str, node: str | None, model_name: str) -> Opened:
    """The node of a model this server keeps (a link's `onnx=DIGEST&node=NAME`); blobs.Missing where it does not
    hold it. The same object on every run of the page, so its configuration is resolved once."""
    return open_node(reading.remembered(digest), node or None, model_name)
