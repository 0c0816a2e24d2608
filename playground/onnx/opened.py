"""What a node of an ONNX model opened as its layer is (`Opened`: its raw parameters, the shapes it runs on lifted to
the layer's rank and ONNX's own, the rules where ONNX computes it otherwise, the node alone as a model of its own),
and what opening one reads (`Known`: a model's shapes and constants, worked out once; a node's attributes and its
static input shape).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..base.errors import ValidationError
from ..base.layer import Layer
from ..base.params import jsonable, same_params
from . import reading

SEED = 0  # the input of a node opened without one: the page's "random" pattern (uniform −4 … 4) from this seed


def attributes(node) -> dict:
    onnx = reading.library()
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else list(v) if isinstance(v, (list, tuple)) else v
    out["_outputs"] = len([o for o in node.output if o])
    return out


@dataclass
class Opened:
    """A node read as its layer: the raw parameters, the input shape it runs on (lifted to the layer's rank) and
    ONNX's own shapes, and the rules where ONNX computes it otherwise."""

    model: str
    node: str
    op: str
    layer: Layer
    raw: dict
    shape: tuple
    onnx_shape: tuple
    onnx_output_shape: tuple | None
    differs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    node_model: bytes | None = None  # the node alone as a model (its constants as initializers): for ONNX Runtime
    batch_free: bool = False  # the model names its batch dimension: any N opens
    lifted: tuple = ()  # the axes added to the node's input to reach the layer's rank
    params: dict = field(default_factory=dict)  # `raw` resolved, once (a model's weights: millions of values)
    shapes: dict | None = None  # a layer of several inputs: {input name: shape} (`shape` is the first's)
    onnx_shapes: dict | None = None  # … and as the model declares them
    constants: dict = field(default_factory=dict)  # … and the inputs the model gives as constants, by input name
    tensors: tuple = ()  # … and the model's tensor each input reads, in the layer's order (an Add's may be swapped)
    # The steps TensorRT's parser builds after the layer for this node (`OnnxMap.then`), resolved: (layer, params,
    # {input name: a constant, or the name of the model's tensor it reads}); the node's output is the last step's.
    then: tuple = ()
    # … the tensors the steps read (a Sum's third input): {name: (ONNX's shape, the step's shape, the seed it opens
    # with where no model's run gives it)}
    more: dict = field(default_factory=dict)
    identity: bool = False  # the node computes nothing: it opens as `map.IDENTITY`, the copy TensorRT's parser builds
    # The model's tensors the node reads, by name, where it is fed its real inputs (`whole.node_values`): its steps'
    # operands and ONNX Runtime's feed come from them; None: the seeded patterns.
    values: dict | None = None

    @property
    def data(self) -> str | None:
        """The model's tensor the layer's first input reads (None: not known here)."""
        return self.tensors[0] if self.tensors else None

    @property
    def tensors_read(self) -> tuple[str, ...]:
        """Every tensor of the model the node reads that is not a constant, in the layer's order (a step's last)."""
        if self.shapes is None:
            return (self.data,) if self.data else ()
        own = [t for n, t in zip(self.layer.input_names, self.tensors) if n not in self.constants]
        return tuple(dict.fromkeys(own + list(self.more)))

    def stands(self, ev) -> bool:
        """`ev` is of this node as it stands: its input shape and every parameter (the data-derived quantize scale
        aside)."""
        return (
            ev.input.shape == self.shape
            and (self.shapes is None or ev.shapes == self.shapes)
            and same_params(ev.params, self.params | {"quantize_scale": ev.params["quantize_scale"]})
        )

    def describe(self) -> dict:
        return {
            "model": self.model,
            "node": self.node,
            "op_type": self.op,
            "layer": self.layer.name,
            "input_shape": list(self.onnx_shape),
            "differs": self.differs,
            "notes": self.notes,
        } | ({"then": [step_json(*step) for step in self.then]} if self.then else {})

    def finish(self, y: np.ndarray, values: dict | None = None) -> np.ndarray:
        """The node's output from the layer's: each step after it (`then`) computed by its own layer's reference, a
        tensor it reads taken from `values` (the model's run, by name; `self.values` where none are given) or seeded
        as the page's inputs are."""
        values = self.values if values is None else values
        for layer, params, operands in self.then:
            feed = {k: self.operand(v, values) for k, v in operands.items()}
            y = layer.forward({layer.input_names[0]: y} | feed, params)
        return y

    def operand(self, v, values: dict | None = None) -> np.ndarray:
        """A step's operand in the step's layout: a constant as it is, a tensor's from `values` or its seed."""
        if isinstance(v, np.ndarray):
            return v
        _, shape, seed = self.more[v]
        if values is not None:
            return np.asarray(values[v], np.float32).reshape(shape)
        from ..base.inputs import make_input

        return make_input("random", shape, seed=seed)

    def to_layer(self, x: np.ndarray):
        """The node's data input in the layer's layout; for a layer of several inputs the feed dict: the others are
        the model's constants, or seeded as the first is where none is given."""
        if self.shapes is None:
            return x.reshape(self.shape)
        from ..base.inputs import make_input

        first, *others = [n for n in self.layer.input_names if n in self.shapes]  # the node's, in order
        return {first: self.constants[first] if first in self.constants else x.reshape(self.shape)} | {
            n: self.constants[n] if n in self.constants else make_input("random", self.shapes[n], seed=SEED + i)
            for i, n in enumerate(others, 1)
        }

    def onnx_feed(self, ev):
        """The node model's inputs (in its order) from an evaluation of this node."""
        if self.shapes is None:
            return ev.input.reshape(self.onnx_shape)
        feed = {n: ev.inputs[n].reshape(s) for n, s in self.onnx_shapes.items() if n not in self.constants}
        return feed | {t: self.operand(t, self.values).reshape(s) for t, (s, _, _) in self.more.items()}  # the steps'

    def to_onnx(self, y: np.ndarray) -> np.ndarray:
        """The layer's output in ONNX's layout: the axes added to lift the node taken out again."""
        if self.onnx_output_shape is not None and math.prod(self.onnx_output_shape) == y.size:
            return y.reshape(self.onnx_output_shape)
        if y.ndim == len(self.shape) and all(y.shape[a] == 1 for a in self.lifted):
            return y.reshape(tuple(d for a, d in enumerate(y.shape) if a not in self.lifted))
        return y


class Known:
    """What a model's nodes read, worked out once per model: every tensor's shape and every constant's value, and
    the tensors something reads (a node, or the graph's outputs)."""

    def __init__(self, model):
        self.model, self.shapes, self.consts, self.opset = (
            model,
            reading.tensor_shapes(model),
            reading.constants(model),
            reading.opset_of(model),
        )
        self.read = {i for n in model.graph.node for i in n.input if i} | {o.name for o in model.graph.output}

    def outputs_read(self, node) -> tuple[bool, ...]:
        return tuple(bool(o) and o in self.read for o in node.output)


def step_json(layer: Layer, params: dict, operands: dict) -> dict:
    """A step as `--json` lists it: its layer, parameters and the model's tensors it reads."""
    reads = {k: v for k, v in operands.items() if isinstance(v, str)}
    return {"layer": layer.name, "params": jsonable(params)} | ({"reads": reads} if reads else {})


def output_shape(node, shapes: dict, batch: int | None = None) -> tuple | None:
    """The node's first output's shape as the model's shape inference states it, where every axis is a known
    length (a scalar, MatMul's dot product of two 1-D inputs, is the shape ()); None where it is not known.
    `batch`: the page's batch in place of the first axis (a model's named batch axis)."""
    shape = shapes.get(node.output[0]) if node.output else None
    if shape and batch is not None:
        shape = (batch,) + tuple(shape[1:])
    return tuple(shape) if shape is not None and all(isinstance(d, int) and d > 0 for d in shape) else None


def static_shape(where: str, data: str, shape, batch: int) -> tuple[tuple, list[str]]:
    """The data input's shape with every dimension a number: a named first dimension (a batch) is `batch`."""
    if shape is None:
        raise ValidationError(
            where,
            "input",
            f"{data!r} has no shape in the model (graph inputs, value_info) and ONNX's shape inference finds none",
        )
    notes = []
    if shape and not isinstance(shape[0], int) or shape and shape[0] == 0:
        notes.append(f"The batch dimension {shape[0]!r} is symbolic: the node opens with N = {batch}.")
        shape = (batch,) + tuple(shape[1:])
    if not all(isinstance(d, int) and d > 0 for d in shape):
        raise ValidationError(
            where,
            "input",
            f"{data!r} has a dimension that is not a number {tuple(shape)}: the layer is built for one input shape",
            tuple(shape),
        )
    return tuple(int(d) for d in shape), notes


# the inputs ONNX types BOOL, by op: the layer reads them as float32, nonzero true
BOOL_INPUTS = {"Where": (0,), "Not": (0,), "And": (0, 1), "Or": (0, 1), "Xor": (0, 1)}
# the inputs ONNX types INT64 (a gather's indices), by op: the layer reads them as float32 and casts them to INT32
INT_INPUTS = {"Gather": (1,), "GatherElements": (1,), "GatherND": (1,)}
# the ops whose output ONNX types BOOL: the layer gives it as float32 0 and 1 (its build casts it)
BOOL_OUTPUTS = {
    "Equal",
    "Greater",
    "Less",
    "GreaterOrEqual",
    "LessOrEqual",
    "Not",
    "And",
    "Or",
    "Xor",
    "IsNaN",
    "IsInf",
}


def node_model(model, node, onnx_shape: tuple, consts: dict, tensors: dict | None = None) -> bytes:
    """The node alone, its constant inputs as initializers, its data input of the shape it opens with (`tensors`:
    every input the model computes, by name, where the node has several)."""
    onnx = reading.library()
    h = onnx.helper
    tensors = tensors or {node.input[0]: onnx_shape}
    inits = [onnx.numpy_helper.from_array(consts[i], i) for i in node.input if i and i in consts and i not in tensors]
    typed = {
        node.input[i]: onnx.TensorProto.BOOL for i in BOOL_INPUTS.get(node.op_type, ()) if node.input[i] in tensors
    }
    typed |= {
        node.input[i]: onnx.TensorProto.INT64 for i in INT_INPUTS.get(node.op_type, ()) if node.input[i] in tensors
    }
    # a BOOL input (Where's condition) or an INT64 one (Gather's indices) comes in as float32, as the layer's does,
    # and is cast where the node reads it (to INT64: truncated, as the layer's cast to INT32 does)
    xs = [
        h.make_tensor_value_info(f"{t}_float" if t in typed else t, onnx.TensorProto.FLOAT, list(v))
        for t, v in tensors.items()
    ]
    casts = [h.make_node("Cast", [f"{t}_float"], [t], to=typed[t]) for t in sorted(typed)]
    out = node.output[0]
    only = h.make_node(
        node.op_type,
        list(node.input),
        [f"{out}_bool" if node.op_type in BOOL_OUTPUTS else out],
        name=node.name or "node",
    )
    only.attribute.extend(node.attribute)
    # a BOOL output (a comparison's) goes out as float32 0 and 1, as the layer's does
    after = (
        [h.make_node("Cast", [f"{out}_bool"], [out], to=onnx.TensorProto.FLOAT)] if node.op_type in BOOL_OUTPUTS else []
    )
    outputs = [h.make_tensor_value_info(out, onnx.TensorProto.FLOAT, None)]
    graph = h.make_graph([*casts, only, *after], "node", xs, outputs, inits)
    opsets = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return h.make_model(graph, opset_imports=opsets, ir_version=model.ir_version).SerializeToString()
