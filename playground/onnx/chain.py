"""A chain as an ONNX model, and the two second opinions on it: ONNX Runtime computes it (CPU), and TensorRT's own
ONNX parser builds it, its engine layers mapped onto the chain as the chain's own build is.

The model is each layer's ONNX export (`Layer.onnx.write`) wired as the chain is, its nodes named `KEY_i`. ONNX
models compute in float32: the model is of the chain's FP32 configuration, and is compared with that reference.
"""

from __future__ import annotations

import re

from ..base.errors import ValidationError
from ..base.onnx_map import OPSET, Graph
from ..network import chain as C


def fp32(chain: C.Chain) -> C.Chain:
    """The chain with every layer in FP32 (what an ONNX model computes)."""
    links = tuple(C.Link(**{**link.__dict__, "params": {**link.params, "precision": "FP32"}}) for link in chain.links)
    return C.Chain(links, chain.input_shape)


def export_chain_model(chain: C.Chain, check: bool = True):
    """The chain's FP32 configuration as an ONNX model; ValidationError naming the first layer that has no export."""
    import onnx

    h = onnx.helper
    for link in chain.links:
        if link.layer.onnx is None:
            raise ValidationError(
                link.key, "onnx", f"{link.layer.name} has no ONNX export in a chain yet, so neither has this chain"
            )
    g = Graph()
    tensors, names = {C.INPUT: g.input}, []
    for link in fp32(chain).links:
        before = len(g.nodes)
        xs = {n: tensors[s] for n, s in link.sources.items()}  # each input by name, as the layer's write reads it
        arg = xs if link.layer.several else xs[link.layer.input_names[0]]
        tensors[link.key] = link.layer.onnx.write(g, arg, link.params, link.layer.shape_arg(link.shapes))
        names += [f"{link.key}_{i}" for i in range(len(g.nodes) - before)]
    nodes = [
        h.make_node(op, inputs, [out], name=name, **attrs) for name, (op, inputs, out, attrs) in zip(names, g.nodes)
    ]
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in g.consts.items()]
    graph = h.make_graph(
        nodes,
        "+".join(chain.names),
        [h.make_tensor_value_info(g.input, onnx.TensorProto.FLOAT, list(chain.input_shape))],
        [h.make_tensor_value_info(tensors[chain.keys[-1]], onnx.TensorProto.FLOAT, list(chain.output_shape))],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="trt-layer-playground")
    if check:
        onnx.checker.check_model(model)
    return model


_NODE = re.compile(r"^(?P<key>.+)_\d+$")


def parser_fuses(layer: dict, keys: tuple[str, ...]) -> list[str]:
    """The chain's layers an engine layer of the parser's build computes: the ONNX nodes its metadata names
    (`[ONNX Layer: KEY_i]`), by key."""
    named = set()
    for token in re.findall(r"\[([^\[\]]+)\]", layer.get("metadata") or ""):
        m = _NODE.match(token.split(":")[-1].strip())
        if m:
            named.add(m["key"])
    return [k for k in keys if k in named]


def opinions(result: C.ChainEvaluation, backend=None, cache=None) -> dict:
    """{"onnxruntime": …, "onnx_parser": …} for the chain, or where it has no ONNX export, why not."""
    from ..trt.backend import detect
    from . import runtime

    try:
        model = export_chain_model(result.chain, check=False).SerializeToString()
    except ValidationError as exc:
        return {"onnxruntime": {"status": str(exc)}, "onnx_parser": None}
    except ImportError as exc:
        return {"onnxruntime": {"status": f"not installed ({exc.name})"}, "onnx_parser": None}
    x = result.tensors[C.INPUT]
    reference = C.compute(fp32(result.chain), x)[result.chain.keys[-1]]
    ort = runtime.onnxruntime_check(model, x, reference, None, compared_to="the chain's FP32 reference")
    backend = backend or detect()
    if not backend.can_build:
        return {"onnxruntime": ort, "onnx_parser": {"status": "not_built", "why": backend.why_not_run}}
    from .opinions import parser_build

    report, status = parser_build(backend, model, cache)
    parser = {
        "status": status,
        "parser": f"{backend.name} OnnxParser",
        "output_shape": report.output_shape,
        "error": report.error,
        "layers": [
            {"name": layer["name"], "type": layer["type"], "fuses": parser_fuses(layer, result.chain.keys)}
            for layer in report.layers
        ],
    }
    plain = fp32(result.chain)
    same = all(a.params == b.params for a, b in zip(plain.links, result.chain.links))
    engine = result.engine if same else C.build(plain, backend, cache)  # the model is the FP32 configuration
    parser["compared_to"] = "the chain's build" if same else "the chain's FP32 build (an ONNX model is FP32)"
    own = [(layer["type"], layer["fuses"]) for layer in engine.layers]
    theirs = [(layer["type"], layer["fuses"]) for layer in parser["layers"]]
    parser["same_fusion"] = (theirs == own) if report.status == "built" and engine.layers else None
    return {"onnxruntime": ort, "onnx_parser": parser}
