"""A run of a model's nodes as a chain on the model's own tensor: what the model page's engine-layer outlines and
shift-clicked runs open.

    query_of(model, names, digest, model_name, engine) → the chain page's URL keys
    in_precision(query, "FP16") → the same with each layer in the model page's precision
    fusion(model_engine, nodes, chain) → whether the chain's engine computes the nodes as the model's engine does

Each node opens as its layer (`opening.open_known`, as its own page opens it) and the chain's layers are those
layers with those raw parameters (a model's weights by reference, playground.base.blobs). The chain reads what the first
node reads in the model: ONNX Runtime's tensor of the model's run on its seeded inputs, named by the model's digest
and the tensor's name (`input.onnx`, `input.tensor`: `chain_address.Address.input` reads it through model.kept), so a
link is short, and one to a model this server no longer holds says so.

TensorRT sees what the model's engine saw: each node is the layer TensorRT's ONNX parser makes of it. A
BatchNormalization is the parser's Scale layer (kCHANNEL, its four constants folded into one scale and one shift
in float32: `layers/scale.py`); what happens next is the builder's, and it depends on the network around. TensorRT-RTX
1.7 computes an inner Conv → Scale → ReLU in one engine layer (a correlation kernel with the Scale and the ReLU), but
a convolution whose block ends the network in a layer of its own, the Scale (with the convolution's bias) and the ReLU
in a pointwise kernel after it. A chain's last tensor is always its network's output, so where the model's engine
computes the BatchNormalization in the convolution's layer (`folds`), the chain computes it there too: folded into
the convolution's kernel and bias, which TensorRT-RTX fuses with the ReLU into one layer, as in the model; elsewhere
it stays the parser's Scale layer, whose network fuses as the model's end (tests/test_model_chain.py measures both).
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import numpy as np

from ..base.errors import ValidationError
from ..base.memo import Memo
from ..network import chain as C
from ..onnx import opening, reading
from ..onnx.opened import Known
from . import chain_address as A

_engines = Memo(8)  # by model digest: the model's engine layers, read once for every rerun of its chains' pages


def query_of(model, names: list[str], digest: str, model_name: str = "model.onnx", engine: dict | None = None) -> dict:
    """The chain page's address ({URL key: text}, as `run A+B --set KEY.NAME=VALUE` spells each parameter) of a run
    of the model's nodes, on the tensor the first reads in the model: each opens as a layer of one input and reads
    the one before's output; a BatchNormalization after a convolution is folded into it where the model's `engine`
    computes the two in one engine layer (`folds`). ValidationError naming the node and the rule where the run is not
    a chain."""
    from ..base import blobs

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
    layers = _layers(opened, engine)  # [(the layer, its parameters, the nodes it is, the node it reads as)]
    keys = C.keys_of([layer.name for layer, *_ in layers])
    query = {
        A.LAYERS_KEY: ",".join(layer.name for layer, *_ in layers),
        A.SHAPE_KEY: ",".join(map(str, opened[0].shape)),
    }
    for key, (layer, params, _, _) in zip(keys, layers):
        for p in layer.params:
            value = params[p.name]
            big = isinstance(value, np.ndarray) and value.size > blobs.URL_VALUES
            query[f"{key}.{p.name}"] = blobs.weights_ref(value) if big else p.to_text(value)
    chain = C.resolve(
        query[A.LAYERS_KEY].split(","),
        {k: v for k, v in query.items() if "." in k and k != A.SHAPE_KEY},
        opened[0].shape,
    )
    for link, (layer, _, nodes, o) in zip(chain.links[1:], layers[1:]):
        if link.shapes[layer.inputs[0].name] != o.shape:
            raise ValidationError(
                f"ONNX node {nodes[0]!r}",
                "input",
                f"its layer reads {o.shape}; the chain hands it {link.shapes[layer.inputs[0].name]}",
            )
    spelled = ["+".join(nodes) for *_, nodes, _ in layers]
    if any("," in n or "+" in n for n in names):  # no spelling of the nodes by layer: not compared with the model's
        spelled = []
    return query | A.ModelInput(digest, opened[0].data, tuple(spelled), model_name).query()


def in_precision(query: dict, precision: str) -> dict:
    """The chain page's address `query` with each of its layers in `precision`, the model page's choice, as a node's
    page opens in it (`precision_model.page_params`: under INT8/FP8 each layer's scale from its data). FP32: the
    address as it is."""
    if precision == "FP32":
        return query
    from ..model.precision_model import page_params

    out = dict(query)
    for key in C.keys_of(query[A.LAYERS_KEY].split(",")):
        out |= {f"{key}.{name}": value for name, value in page_params(precision).items()}
    return out


def link_in_precision(link: str | None, precision: str) -> str | None:
    """A chain page's link (`./chain?…`, an engine outline's) with its layers in `precision` (`in_precision`)."""
    if not link or precision == "FP32":
        return link
    path, _, text = link.partition("?")
    return path + "?" + urlencode(in_precision(dict(parse_qsl(text, keep_blank_values=True)), precision))


def folds(conv: str, bn: str, engine: dict | None) -> bool:
    """Whether the model's engine computes the BatchNormalization `bn` in the convolution `conv`'s kernel: every engine
    layer that names the convolution names the BatchNormalization too (TensorRT fused the parser's Scale into it).
    TensorRT-RTX keeps a convolution whose block ends the network in a kernel of its own (and moves its bias add into
    the pointwise kernel after it, which names both): there the Scale stays a layer."""
    if not engine or engine.get("status") not in ("built", "cached"):
        return False  # not known: the network the parser gives
    naming = [set(layer["fuses"]) for layer in engine.get("layers", []) if conv in layer["fuses"]]
    return bool(naming) and all(bn in fused for fused in naming)


def _layers(opened: list, engine: dict | None) -> list[tuple]:
    """The chain's layers of the opened nodes: each node its layer, but a BatchNormalization the model's engine
    computes in the convolution before it (`folds`), which goes into the convolution's kernel and bias, in float32:
    kernel · s and bias · s + t per output map, s and t the Scale's (the parser's fold of the four constants)."""
    out = []
    for o in opened:
        last = out[-1] if out else None
        if (
            last is not None
            and o.op == "BatchNormalization"
            and last[0].name == "convolution"
            and o.params["mode"] == "CHANNEL"
            and o.params["channel_axis"] == 1
            and np.all(o.params["power"] == 1)
            and folds(last[2][-1], o.node, engine)
        ):
            conv, s, t = last[1], o.params["scale"], o.params["shift"]
            kernel = conv["kernel"] * s.reshape((-1,) + (1,) * (conv["kernel"].ndim - 1))
            folded = conv | {"kernel": kernel.astype(np.float32), "bias": (conv["bias"] * s + t).astype(np.float32)}
            out[-1] = (last[0], folded, last[2] + [o.node], last[3])
            continue
        out.append((o.layer, o.params, [o.node], o))
    return out


def model_engine(digest: str) -> dict:
    """The engine TensorRT's parser builds of the whole model (`whole.engine_layers`): from the model's kept
    analysis, else built (or read from the engine cache). ValidationError naming input.onnx where this server no
    longer holds the model."""
    return _engines.get_or_make(digest, lambda: _model_engine(digest))


def _model_engine(digest: str) -> dict:
    from ..base import blobs
    from ..model import kept, whole

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
        from ..trt.engine import ENGINE_STATUS

        status = model_engine.get("status", "not_built")
        why = model_engine.get("error") or model_engine.get("why") or ENGINE_STATUS.get(status, status)
        return {"model": None, "chain": None, "same": None, "why": [f"the model's engine is not at hand: {why}"]}
    node_of = {k: n.split("+") for k, n in zip(keys, nodes)}  # a folded BatchNormalization's layer is two nodes
    ours = [sorted(n for k in layer["fuses"] for n in node_of[k]) for layer in chain.layers if layer["fuses"]]
    wanted = {n for k in keys for n in node_of[k]}
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
    unnamed = [n for n in sorted(wanted) if not any(n in f for f in theirs)]
    if unnamed:
        out["why"].append(f"no engine layer of the model names {', '.join(unnamed)} (fused away or folded)")
    if not out["why"]:
        out["why"].append(
            "the chain's last tensor is its engine's output, while in the model it feeds the nodes after: "
            "TensorRT chose its kernels for each network as a whole"
        )
    return out


def folded_text(nodes: tuple[str, ...]) -> str | None:
    """What a chain layer of two nodes (`conv+bn`) is, in words; None where no layer is."""
    pairs = [n.split("+") for n in nodes if "+" in n]
    if not pairs:
        return None
    return (
        "Folded: "
        + ", ".join(f"{bn} into {conv}'s kernel and bias" for conv, bn in pairs)
        + " (TensorRT's parser makes a BatchNormalization a Scale layer; the model's engine computes it in the "
        "convolution's engine layer, so the chain's convolution computes it too)."
    )


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
