"""A run of a model's nodes as a chain on the model's own tensor: what the model page's engine-layer outlines and
shift-clicked runs open.

    query_of(model, names, digest, model_name) → the chain page's URL keys
    fusion(model_engine, nodes, chain) → whether the chain's engine computes the nodes as the model's engine does

Each node opens as its layer (`opening.open_known`, as its own page opens it) and the chain's layers are those
layers with those raw parameters (a model's weights by reference, playground.blobs). The chain reads what the first
node reads in the model: ONNX Runtime's tensor of the model's run on its seeded inputs, named by the model's digest
and the tensor's name (`input.onnx`, `input.tensor`: `chain.Address.input` reads it through onnx.kept), so a link
is short, and one to a model this server no longer holds says so.

TensorRT sees what the model's engine saw: each node is the layer TensorRT's ONNX parser makes of it. A
BatchNormalization is the parser's Scale layer (kCHANNEL, its four constants folded into one scale and one shift
in float32: `layers/scale.py`); the parser does not fold it into the convolution before it, and neither does the
chain. What happens next is the builder's: TensorRT-RTX 1.7 computes the Scale, with the convolution's bias and a
ReLU after, in one pointwise kernel after the convolution's, for the model and the chain alike, since their networks
are the same (the same nodes with the Scale folded into the convolution's kernel by hand are another network, which
it fuses into the convolution instead: tests/test_model_chain.py).
"""

from __future__ import annotations

import numpy as np

from .. import chain as C
from ..errors import ValidationError
from ..memo import Memo
from . import opening, reading
from .opened import Known

_engines = Memo(8)  # by model digest: the model's engine layers, read once for every rerun of its chains' pages


def query_of(model, names: list[str], digest: str, model_name: str = "model.onnx") -> dict:
    """The chain page's address ({URL key: text}, as `run A+B --set KEY.NAME=VALUE` spells each parameter) of a run
    of the model's nodes, on the tensor the first reads in the model: each opens as a layer of one input and reads
    the one before's output. ValidationError naming the node and the rule where the run is not a chain."""
    from .. import blobs

    names = list(dict.fromkeys(names))
    if not names:
        raise ValidationError(C.CHAIN, "nodes", "select at least one node")
    if len(names) > C.MAX_LAYERS:
        raise ValidationError(C.CHAIN, "nodes", f"a chain holds at most {C.MAX_LAYERS} layers, not {len(names)}")
    known = Known(model)
    by_name = {reading.node_name(n, i): n for i, n in enumerate(reading.graph_nodes(model))}
    order = {name: i for i, name in enumerate(by_name)}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise ValidationError(C.CHAIN, "nodes", f"the model has no node {missing[0]!r}")
    names = sorted(names, key=order.get)
    opened, before = [], None
    for name in names:
        node = by_name[name]
        where = f"ONNX node {name!r} ({node.op_type})"
        o = opening.open_known(known, node, name, model_name, alone=False)
        reads = [i for i in node.input if i and i not in known.consts]
        if o.layer.several or len(reads) != 1:
            raise ValidationError(where, "inputs", "reads several tensors: a chain's layers read one each")
        if o.then:  # a node the parser builds as several layers (`OnnxMap.then`): the chain would hold its first
            raise ValidationError(
                where, "layers", f"TensorRT's parser builds it as {1 + len(o.then)} layers; a chain's layer is one node"
            )
        if before is not None and o.data != before.output[0]:
            raise ValidationError(
                where,
                "input",
                f"reads {o.data!r}, not the output of the node before "
                f"({before.output[0]!r}): the run must be consecutive",
            )
        opened.append(o)
        before = node
    keys = C.keys_of([o.layer.name for o in opened])
    query = {C.LAYERS_KEY: ",".join(o.layer.name for o in opened), C.SHAPE_KEY: ",".join(map(str, opened[0].shape))}
    for key, o in zip(keys, opened):
        for p in o.layer.params:
            value = o.params[p.name]
            big = isinstance(value, np.ndarray) and value.size > blobs.URL_VALUES
            query[f"{key}.{p.name}"] = blobs.weights_ref(value) if big else p.to_text(value)
    chain = C.resolve(
        query[C.LAYERS_KEY].split(","),
        {k: v for k, v in query.items() if "." in k and k != C.SHAPE_KEY},
        opened[0].shape,
    )
    for link, o, name in zip(chain.links[1:], opened[1:], names[1:]):
        if link.shapes[o.layer.inputs[0].name] != o.shape:
            raise ValidationError(
                f"ONNX node {name!r}",
                "input",
                f"its layer reads {o.shape}; the chain hands it {link.shapes[o.layer.inputs[0].name]}",
            )
    return query | C.ModelInput(digest, opened[0].data, tuple(names), model_name).query()


def model_engine(digest: str) -> dict:
    """The engine TensorRT's parser builds of the whole model (`whole.engine_layers`): from the model's kept
    analysis, else built (or read from the engine cache). ValidationError naming input.onnx where this server no
    longer holds the model."""
    return _engines.get_or_make(digest, lambda: _model_engine(digest))


def _model_engine(digest: str) -> dict:
    from .. import blobs
    from . import kept, whole

    answer = kept.kept_answer(digest)
    if answer is not None and answer.get("engine"):
        return answer["engine"]
    try:
        model = reading.remembered(digest)
    except blobs.Missing as exc:
        raise ValidationError("input", "onnx", f"the model {digest[:12]}… {exc}") from None
    return whole.engine_layers(model, [reading.node_name(n, i) for i, n in enumerate(reading.graph_nodes(model))])


def fusion(model_engine: dict, nodes: tuple[str, ...], chain: C.ChainBuild, keys: tuple[str, ...]) -> dict:
    """The chain's engine against the model's for the chain's nodes: the engine layers of each that compute them
    (a layer's `fuses`, by node; layers that only move data name none and are left out of both), whether they are
    the same, and where not, why as far as the two engines tell it."""
    if model_engine.get("status") not in ("built", "cached"):
        why = model_engine.get("error") or model_engine.get("why") or model_engine.get("status", "not built")
        return {"model": None, "chain": None, "same": None, "why": [f"the model's engine is not at hand: {why}"]}
    node_of = dict(zip(keys, nodes))
    ours = [sorted(node_of[k] for k in layer["fuses"]) for layer in chain.layers if layer["fuses"]]
    wanted = set(nodes)
    theirs = [sorted(layer["fuses"]) for layer in model_engine.get("layers", []) if wanted & set(layer["fuses"])]
    out = {"model": theirs, "chain": ours, "same": sorted(ours) == sorted(theirs), "why": []}
    if out["same"]:
        return out
    for fused in theirs:
        beyond = [n for n in fused if n not in wanted]
        if beyond:
            out["why"].append(
                f"in the model, the engine layer computing {', '.join(n for n in fused if n in wanted)} also "
                f"computes {', '.join(beyond)}, outside the chain"
            )
    unnamed = [n for n in nodes if not any(n in f for f in theirs)]
    if unnamed:
        out["why"].append(f"no engine layer of the model names {', '.join(unnamed)} (fused away or folded)")
    if not out["why"]:
        out["why"].append(
            "the chain's last tensor is its engine's output, while in the model it feeds the nodes after: "
            "TensorRT chose its kernels for each network as a whole"
        )
    return out


def fusion_text(f: dict) -> str:
    """`fusion` in words: each engine layer as the nodes it computes, the chain's against the model's."""

    def said(groups):
        return "; ".join(" + ".join(g) for g in groups) or "none"

    if f["same"] is None:
        return f"Not compared with the model's engine: {f['why'][0]}."

    split = sorted({n for g in f["chain"] for n in g if sum(n in h for h in f["chain"]) > 1})
    shared = (
        f" TensorRT names {', '.join(split)} in more than one engine layer: it splits the node's work between them "
        "(a convolution's bias add may go into the pointwise kernel after it)."
        if split
        else ""
    )
    if f["same"]:
        return f"The chain's engine computes these nodes as the model's engine does: {said(f['chain'])}.{shared}"
    return (
        f"The chain's engine computes these nodes otherwise than the model's engine: the chain's {said(f['chain'])}; "
        f"the model's {said(f['model'])}. Why: {'; '.join(f['why'])}."
    )
