"""A configuration written as an ONNX model: the layer's graph (`Layer.onnx.write`, playground.base.onnx_map), in the
configuration's precision as the playground's engine computes it, with the configuration in its metadata so it
reopens exactly (playground.onnx.opening).

    export_model(layer, params, shape) → ModelProto → runtime.onnxruntime_check(model, x, reference)
"""

from __future__ import annotations

import json

import numpy as np

from ..base.layer import Layer
from ..base.onnx_map import OPSET, Graph
from .reading import library

META_LAYER, META_PARAMS = "playground.layer", "playground.params"  # an export's own configuration

# Where the playground's engine quantizes weights under INT8/FP8 (the layer's build feeds them through a Q/DQ pair
# by set_input): the op and the index of its weight input, as the layer's ONNX export writes it.
QUANTIZED_WEIGHTS = {"Conv": 1, "ConvTranspose": 1}
# The float inputs ONNX types as float32 whatever the data's type (Resize's roi and scales): no Cast under FP16/BF16.
FLOAT32_INPUTS = {"Resize": (1, 2)}


def export_model(layer: Layer, params: dict, shape, check: bool = True):
    """The configuration as an ONNX model (`shape`: the input's, or {input name: shape}): the layer's graph, one
    float32 input per input in use (named as the layer names it where it has several), float32 out, in the
    configuration's precision as the playground's engine computes it (`precision_graph`), and the configuration in
    its metadata (`playground.layer`, `playground.params`) so it reopens exactly. check=False: a model only for ONNX
    Runtime's opinion (the stage's badge, on every settled change): no onnx.checker (the tests hold every layer's
    export to it) and no metadata."""
    onnx = library()
    h = onnx.helper
    shapes = layer.shapes_of(shape)  # a layer of several inputs: one graph input per input, by its name
    used = layer.used_inputs(params)
    g = Graph(inputs=used if layer.several else None)
    xs = dict(zip(used, g.inputs))
    y = layer.onnx.write(g, xs if layer.several else g.input, params, layer.shape_arg(shapes))
    first = shapes[layer.input_names[0]]
    out_shape = layer.cost(params, layer.shape_arg(shapes))[0] if layer.cost else first

    def model_of(nodes, y, extra=()):
        nodes = [
            h.make_node(op, inputs, [out], name=f"{layer.name}_{i}", **attrs)
            for i, (op, inputs, out, attrs) in enumerate(nodes)
        ]
        inits = [onnx.numpy_helper.from_array(v, k) for k, v in g.consts.items()] + list(extra)
        graph = h.make_graph(
            nodes,
            layer.name,
            [h.make_tensor_value_info(xs[n], onnx.TensorProto.FLOAT, list(shapes[n])) for n in used],
            [h.make_tensor_value_info(y, onnx.TensorProto.FLOAT, list(out_shape))],
            inits,
        )
        return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="trt-layer-playground")

    model = model_of(g.nodes, y)
    precision = params.get("precision", "FP32")
    if precision in ("INT8", "FP8", "FP16", "BF16"):
        data = tuple(xs[i.name] for i in layer.inputs if i.name in xs and i.data)  # indices keep their values
        model = model_of(*precision_graph(g, y, precision, params["quantize_scale"], _float_tensors(model), data))
    if check:
        texts = {p.name: p.to_text(params[p.name]) for p in layer.params}
        h.set_model_props(model, {META_LAYER: layer.name, META_PARAMS: json.dumps(texts)})
        onnx.checker.check_model(model)
    return model


def _float_tensors(model) -> set[str]:
    """The names of the model's float32 tensors (ONNX's shape inference): those FP16/BF16 give the type."""
    onnx = library()
    g = onnx.shape_inference.infer_shapes(model).graph
    kinds = {v.name: v.type.tensor_type.elem_type for v in list(g.input) + list(g.value_info) + list(g.output)}
    kinds |= {t.name: t.data_type for t in g.initializer}
    return {name for name, kind in kinds.items() if kind == onnx.TensorProto.FLOAT}


def _admits(op: str, index: int, type_name: str) -> bool:
    """Whether ONNX's `op` (at the export's opset) takes a `type_name` tensor at input `index`."""
    onnx = library()
    schema = onnx.defs.get_schema(op, OPSET)
    formal = schema.inputs[min(index, len(schema.inputs) - 1)].type_str
    allowed = next((c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == formal), [formal])
    return f"tensor({type_name})" in allowed


def precision_graph(
    g: Graph, y: str, precision: str, scale: float, floats: set[str], data: tuple[str, ...] | None = None
) -> tuple[list, str, list]:
    """The layer's nodes in `g` (its inputs `data`, by default every graph input; output `y`; `floats`: its float32
    tensors) in `precision`, as
    `precision.precision_input`, the layer's build and `precision_output` make the engine: (nodes, output name,
    initializers beyond `g.consts`).

    INT8/FP8: QuantizeLinear → DequantizeLinear on the input (zero point 0 of type INT8 or FLOAT8E4M3FN, the
    configuration's scale), and on the weights where the engine quantizes them (`QUANTIZED_WEIGHTS`).
    FP16/BF16: a Cast to the type on the input and on every float constant the layer reads (Resize's roi and scales
    aside, which ONNX keeps float32), every float tensor between in that type, and a Cast back to float32 on the
    output. An op ONNX defines for no such type (Conv, MaxPool, ConvTranspose take no bfloat16) reads its inputs
    cast back to float32 and its output is cast to the type again: the values the engine's are, the arithmetic
    float32 (the playground's emulation does the same)."""
    onnx = library()
    data = g.inputs if data is None else data
    if precision in ("INT8", "FP8"):
        kind = onnx.TensorProto.INT8 if precision == "INT8" else onnx.TensorProto.FLOAT8E4M3FN
        s, zero = g.const(np.float32(scale)), f"zero_{precision.lower()}"

        def qdq(name: str, tag: str) -> tuple[list, str]:
            q, dq = f"{tag}_quantized", f"{tag}_dequantized"
            return [("QuantizeLinear", [name, s, zero], q, {}), ("DequantizeLinear", [q, s, zero], dq, {})], dq

        nodes, typed = [], {}
        for i in data:
            pair, typed[i] = qdq(i, "input" if i == g.input else f"input_{i}")
            nodes += pair
        for op, inputs, o, attrs in g.nodes:
            inputs = [typed.get(i, i) for i in inputs]
            at = QUANTIZED_WEIGHTS.get(op)
            if at is not None and at < len(inputs) and inputs[at] in g.consts:
                pair, inputs[at] = qdq(inputs[at], f"{o}_weights")
                nodes += pair
            nodes.append((op, inputs, o, attrs))
        return nodes, y, [onnx.helper.make_tensor(zero, kind, [], [0])]
    to = onnx.TensorProto.FLOAT16 if precision == "FP16" else onnx.TensorProto.BFLOAT16
    type_name = "float16" if precision == "FP16" else "bfloat16"
    typed = {i: "input_typed" if i == g.input else f"input_{i}_typed" for i in data}  # float32 → typed
    nodes = [("Cast", [i], t, {"to": to}) for i, t in typed.items()]
    for op, inputs, o, attrs in g.nodes:
        inputs = list(inputs)
        kept = FLOAT32_INPUTS.get(op, ())
        for k, i in enumerate(inputs):
            if i in floats and i not in typed and i in g.consts and k not in kept:  # a weight: cast once
                typed[i] = f"{i}_typed"
                nodes.append(("Cast", [i], typed[i], {"to": to}))
        reads = [k for k, i in enumerate(inputs) if i in typed and k not in kept]
        if all(_admits(op, k, type_name) for k in reads):
            nodes.append((op, [typed[i] if k in reads else i for k, i in enumerate(inputs)], o, attrs))
            if o in floats:
                typed[o] = o
            continue
        for k in reads:  # the op has no such type in ONNX: float32 between Casts
            nodes.append(("Cast", [typed[inputs[k]]], f"{o}_in{k}_float", {"to": onnx.TensorProto.FLOAT}))
            inputs[k] = f"{o}_in{k}_float"
        nodes.append((op, inputs, o, attrs))
        if o in floats:
            typed[o] = f"{o}_typed"
            nodes.append(("Cast", [o], typed[o], {"to": to}))
    nodes.append(("Cast", [typed.get(y, y)], "output_float", {"to": onnx.TensorProto.FLOAT}))
    return nodes, "output_float", []
