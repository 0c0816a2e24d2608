"""ONNX models in and out: open a node of a model as its layer, export a configuration as a model, and ask ONNX
Runtime for a second opinion.

    load_model(bytes) → ModelProto (checked as hostile input) → list_nodes → open_node(model, name) → Opened
    export_model(layer, params, shape) → ModelProto → onnxruntime_check(model, x, reference)

A model is hostile input: a size cap, `onnx.checker`, external data only from a file beside the model (a file's
`folder`; never a path that leaves it), bounded node and initializer counts, and every tensor's declared size within
the work budget before it is read. Its constants are folded by ONNX Runtime's own graph optimizer (`fold`): the
weights an export computes (ConstantOfShape, Shape → Slice → Concat feeding Reshape or Resize) open as constants.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import blobs, budget
from ..errors import PlaygroundError, ValidationError
from ..layer import Layer
from ..layers import LAYERS, get_layer
from ..params import jsonable, same_params
from .map import OPSET, Graph, Node

MAX_MODEL_BYTES = 64 << 20  # an upload or a file: ResNet-18's weights (45 MB) fit, a language model does not
MAX_NODES = 10_000
MAX_INITIALIZERS = 10_000
META_LAYER, META_PARAMS = "playground.layer", "playground.params"  # an export's own configuration
SEED = 0  # the input of a node opened without one: the page's "random" pattern (uniform −4 … 4) from this seed


def _fail(rule: str, value=None) -> ValidationError:
    return ValidationError("onnx", "model", rule, value)


def _onnx():
    import onnx  # noqa: PLC0415 - only the commands and pages that read or write models pay for it

    return onnx


# -- reading ---------------------------------------------------------------------------------------------------
def load_model(data: bytes, name: str = "model.onnx", folder: str | None = None):
    """The model in `data`, checked, its constants folded (`fold`); ValidationError naming the rule it breaks.
    `folder`: the model file's directory, where a tensor's external data may be read (an upload has none)."""
    onnx = _onnx()
    if len(data) > MAX_MODEL_BYTES:
        raise _fail(f"{name} is {len(data):,} bytes; the cap is {MAX_MODEL_BYTES:,}")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and its kin: not a model
        raise _fail(f"{name} is not an ONNX model ({type(exc).__name__})") from None
    graph = model.graph
    if not graph.node:
        raise _fail(f"{name} has no nodes (is it an ONNX model?)")
    if len(graph.node) > MAX_NODES or len(graph.initializer) > MAX_INITIALIZERS:
        raise _fail(
            f"{name} has {len(graph.node):,} nodes and {len(graph.initializer):,} initializers; the caps are "
            f"{MAX_NODES:,} and {MAX_INITIALIZERS:,}"
        )
    external = []
    for tensor in _tensors(graph):
        over = budget.over_elements(tuple(tensor.dims), f"tensor {tensor.name!r}", "the model's tensors")
        if over:
            raise _fail(over)
        if tensor.data_location == onnx.TensorProto.EXTERNAL or tensor.external_data:
            if folder is None:
                raise _fail(
                    f"tensor {tensor.name!r} keeps its data in an external file; a model given without "
                    "its folder (an upload) must be self-contained (a path in a model is never opened)"
                )
            external.append(tensor)
    if external:
        _read_external(external, folder, len(data), name)
    if any(n.op_type in ("If", "Loop", "Scan") for n in graph.node) or graph.sparse_initializer:
        raise _fail(f"{name} has subgraphs or sparse initializers, which single layers never need")
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - the checker's ValidationError: its message says what
        raise _fail(f"{name} fails onnx.checker: {str(exc).splitlines()[0][:300]}") from None
    return fold(model)


def _read_external(tensors, folder: str, model_bytes: int, name: str) -> None:
    """Each tensor's external data read into the tensor: only a file directly in `folder` (a plain file name: no
    directory, no link that leads out of it), the bytes it names within that file, and the model with all of its
    data within the model size cap."""
    onnx = _onnx()
    total, sizes = model_bytes, {}
    for tensor in tensors:
        info = {e.key: e.value for e in tensor.external_data}
        where, what = info.get("location", ""), f"tensor {tensor.name!r}'s external data"
        if not where or where != os.path.basename(where) or where in (".", "..") or "\\" in where or "\0" in where:
            raise _fail(f"{what} is at {where!r}: only a file beside the model (a plain file name) is read")
        path = os.path.join(folder, where)
        try:
            real = os.path.realpath(path)
            if os.path.dirname(real) != os.path.realpath(folder):
                raise _fail(f"{what}: {where!r} leads out of the model's folder")
            if where not in sizes:
                st = os.stat(real)
                if not stat.S_ISREG(st.st_mode):
                    raise _fail(f"{what}: {where!r} is not a regular file")
                sizes[where] = st.st_size
            offset, length = int(info.get("offset", 0)), info.get("length")
            itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
            length = int(length) if length is not None else math.prod(tensor.dims) * itemsize
            if offset < 0 or length < 0 or offset + length > sizes[where]:
                raise _fail(
                    f"{what} names bytes {offset:,} … {offset + length:,} of {where!r}, which holds {sizes[where]:,}"
                )
            total += length
            if total > MAX_MODEL_BYTES:
                raise _fail(f"{name} and its external data are more than {MAX_MODEL_BYTES:,} bytes, the cap")
            with open(real, "rb") as f:
                f.seek(offset)
                raw = f.read(length)
        except ValidationError:
            raise
        except OSError as exc:
            raise _fail(f"{what}: {where!r}: {exc.strerror or exc}") from None
        except (ValueError, TypeError, KeyError):
            raise _fail(f"{what} has an offset or length that is not a number, or a type without a size") from None
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT
        tensor.raw_data = raw


def named(model) -> None:
    """Every node given the name it is listed under (`node_name`), in place: folding and marking outputs keep them."""
    for i, node in enumerate(_graph_nodes(model)):
        node.name = node_name(node, i)


# ONNX Runtime's basic rewrites other than constant folding: its fusions (Conv + BatchNormalization, …) would consume
# folded weights, and sharing would merge equal ones under one name (a folded value is taken by its own name).
UNFOLDING = [
    "Level1_RuleBasedTransformer",
    "CommonSubexpressionElimination",
    "ConstantSharing",
    "MatMulAddFusion",
    "ReshapeFusion",
]
FOLD_TOTAL = 16  # the model's tensors together, as folded: at most this many times the per-tensor budget


def _live(nodes, outputs: set, given: set) -> set[int]:
    """The indices of the nodes the graph's `outputs` need, where the tensors in `given` need no node."""
    needed, live = set(outputs), set()
    for i in range(len(nodes) - 1, -1, -1):
        if any(o in needed and o not in given for o in nodes[i].output if o):
            live.add(i)
            needed.update(nodes[i].input)
    return live


def fold(model):
    """The model with every tensor ONNX Runtime's constant folding computes (ORT_ENABLE_BASIC, its optimized model)
    as an initializer and the nodes that computed only those taken out; every other node as the model has it (the
    optimizer's fusions are not taken: a node listed is a node of the model). Each tensor's size, as ONNX's shape
    inference (with data propagation) finds it, within the budget before anything is computed. A model ONNX Runtime
    does not load is returned as it is (its nodes are still listed, and refused with their reasons)."""
    onnx = _onnx()
    named(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - inference is a help: the model stands without it
        inferred = model
    total = 0
    for v in inferred.graph.value_info:
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in v.type.tensor_type.shape.dim]
        over = budget.over_elements(tuple(dims), f"tensor {v.name!r}", "the model's tensors")
        if over:
            raise _fail(over)
        total += math.prod(dims)
    if total > FOLD_TOTAL * budget.max_elements():
        raise _fail(
            f"{model.graph.name or 'the model'}'s tensors hold {total:,} values together; the budget is "
            f"{FOLD_TOTAL} × {budget.max_elements():,} (PLAYGROUND_MAX_ELEMENTS)"
        )
    consts = {t.name for t in model.graph.initializer} | {
        o for n in model.graph.node if n.op_type == "Constant" for o in n.output
    }
    computed = {o for n in model.graph.node if n.op_type != "Constant" for o in n.output if o}
    if not computed:
        return model
    try:
        import onnxruntime as ort  # noqa: PLC0415
    except ImportError:
        return model
    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = os.path.join(tmp, "folded.onnx")
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        try:
            ort.InferenceSession(
                inferred.SerializeToString(),
                options,  # the shapes found: Shape nodes fold providers=["CPUExecutionProvider"],
                disabled_optimizers=UNFOLDING,
            )
            folded = onnx.load(options.optimized_model_filepath)
        except Exception:  # noqa: BLE001 - ONNX Runtime refuses the model: its nodes are read as they are
            return model
    values = {t.name: t for t in folded.graph.initializer if t.name in computed}
    if not values:
        return model
    outputs = {o.name for o in model.graph.output}
    was = _live(model.graph.node, outputs, set())
    now = _live(model.graph.node, outputs, set(values) - outputs)
    # out: the nodes folding made needless (those computing folded tensors, or only feeding them); dead ones stay
    keep = [n for i, n in enumerate(model.graph.node) if i in now or i not in was]
    read = {i for n in keep for i in n.input}
    produced = {o for n in keep for o in n.output}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(keep)
    out.graph.initializer.extend(t for name, t in values.items() if name in read and name not in produced | consts)
    out.ir_version = max(out.ir_version, 4)  # an initializer need not be a graph input (IR 3 asks it to be)
    return out


def _tensors(graph):
    yield from graph.initializer
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors


def opset_of(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _constants(model) -> dict[str, np.ndarray]:
    """Initializers and Constant nodes' values by name."""
    onnx = _onnx()
    out = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute:
            a = node.attribute[0]
            value = onnx.helper.get_attribute_value(a)
            out[node.output[0]] = onnx.numpy_helper.to_array(value) if a.name == "value" else np.asarray(value)
    return out


def _shapes(model) -> dict[str, tuple]:
    """Every tensor's shape the model declares or ONNX's shape inference finds: a dimension a number, or a name."""
    onnx = _onnx()
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference is a help, the declarations stand without it
        inferred = model
    g = inferred.graph
    out = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        if t.HasField("shape"):
            out[v.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim)
    for name, a in _constants(model).items():
        out[name] = a.shape
    return out


def _attributes(node) -> dict:
    onnx = _onnx()
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else list(v) if isinstance(v, (list, tuple)) else v
    out["_outputs"] = len([o for o in node.output if o])
    return out


def layer_for(op_type: str) -> Layer | None:
    return next((layer for layer in LAYERS.values() if layer.onnx and op_type in layer.onnx.ops), None)


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

    @property
    def data(self) -> str | None:
        """The model's tensor the layer's first input reads (None: not known here)."""
        return self.tensors[0] if self.tensors else None

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
        } | ({"then": [_step_json(*step) for step in self.then]} if self.then else {})

    def finish(self, y: np.ndarray, values: dict | None = None) -> np.ndarray:
        """The node's output from the layer's: each step after it (`then`) computed by its own layer's reference, a
        tensor it reads taken from `values` (the model's run, by name) or seeded as the page's inputs are."""
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
        from ..inputs import make_input

        return make_input("random", shape, seed=seed)

    def to_layer(self, x: np.ndarray):
        """The node's data input in the layer's layout; for a layer of several inputs the feed dict: the others are
        the model's constants, or seeded as the first is where none is given."""
        if self.shapes is None:
            return x.reshape(self.shape)
        from ..inputs import make_input

        first, *others = [n for n in self.layer.input_names if n in self.shapes]  # the node's, in order
        return {first: x.reshape(self.shape)} | {
            n: self.constants[n] if n in self.constants else make_input("random", self.shapes[n], seed=SEED + i)
            for i, n in enumerate(others, 1)
        }

    def onnx_feed(self, ev):
        """The node model's inputs (in its order) from an evaluation of this node."""
        if self.shapes is None:
            return ev.input.reshape(self.onnx_shape)
        feed = {n: ev.inputs[n].reshape(s) for n, s in self.onnx_shapes.items() if n not in self.constants}
        return feed | {t: self.operand(t).reshape(s) for t, (s, _, _) in self.more.items()}  # the steps' own

    def to_onnx(self, y: np.ndarray) -> np.ndarray:
        """The layer's output in ONNX's layout: the axes added to lift the node taken out again."""
        if self.onnx_output_shape is not None and math.prod(self.onnx_output_shape) == y.size:
            return y.reshape(self.onnx_output_shape)
        if y.ndim == len(self.shape) and all(y.shape[a] == 1 for a in self.lifted):
            return y.reshape(tuple(d for a, d in enumerate(y.shape) if a not in self.lifted))
        return y


def _graph_nodes(model) -> list:
    """The nodes a person would open: every node but Constant ones (they are weights)."""
    return [n for n in model.graph.node if n.op_type != "Constant"]


def node_name(node, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def open_node(model, name: str | None = None, model_name: str = "model.onnx", batch: int = 1) -> Opened:
    """The node `name` (None: the model's only node, or its first that opens) as its layer; ValidationError
    naming the node, the attribute and the rule where it cannot be. `batch`: N where the model names it."""
    own = _own_configuration(model, model_name)
    if own is not None and name is None:
        return own
    nodes, known = _graph_nodes(model), _Known(model)
    named = {node_name(n, i): n for i, n in enumerate(nodes)}
    if name is not None:
        if name not in named:
            raise ValidationError(
                "onnx",
                "--node",
                f"{model_name} has no node {name!r}; it has "
                + ", ".join(list(named)[:20])
                + (" …" if len(named) > 20 else ""),
            )
        return _open(known, named[name], name, model_name, batch)
    first_problem = None
    for n, node in named.items():
        try:
            return _open(known, node, n, model_name, batch)
        except ValidationError as exc:
            first_problem = first_problem or exc
    raise first_problem


def list_nodes(model) -> list[dict]:
    """Every node: its name, op_type and the layer it opens as, or the reason it cannot."""
    out, known = [], _Known(model)
    for i, node in enumerate(_graph_nodes(model)):
        name = node_name(node, i)
        entry = {"name": name, "op_type": node.op_type, "layer": None, "reason": None}
        try:
            opened = _open(known, node, name, "", alone=False)
            entry["layer"] = opened.layer.name
            entry["differs"] = opened.differs
        except ValidationError as exc:
            entry["reason"] = str(exc)
        out.append(entry)
    return out


class _Known:
    """What a model's nodes read, worked out once per model: every tensor's shape and every constant's value."""

    def __init__(self, model):
        self.model, self.shapes, self.consts, self.opset = model, _shapes(model), _constants(model), opset_of(model)


def _open(known: _Known, node, name: str, model_name: str, batch: int = 1, alone: bool = True) -> Opened:
    """The node as its layer; alone=False: without the node as a model of its own (a listing needs none)."""
    where = f"ONNX node {name!r} ({node.op_type})"
    if node.domain not in ("", "ai.onnx"):
        raise ValidationError(where, "domain", f"{node.domain!r} is not ONNX's own: no layer here computes it")
    layer = layer_for(node.op_type)
    if layer is None:
        opens = sorted({op for layer in LAYERS.values() if layer.onnx for op in layer.onnx.ops})
        raise ValidationError(where, "op_type", f"has no layer here; the layers open {', '.join(opens)}")
    if layer.several:
        return _open_several(known, node, name, model_name, layer, where, batch, alone)
    shapes, consts = known.shapes, known.consts
    data = node.input[0] if node.input else ""
    if data in consts:
        raise ValidationError(where, "input", "is a constant: the layer's input must be a tensor the model computes")
    declared = shapes.get(data)
    onnx_shape, notes = _static(where, data, declared, batch)
    batch_free = onnx_shape != tuple(declared or ())
    low = 3 if layer.onnx.lift == "spatial" else 1  # a spatial layer needs N, C and one axis at least
    if not low <= len(onnx_shape) <= 5:
        raise ValidationError(where, "input", f"must have rank {low} … 5, not {len(onnx_shape)}", onnx_shape)
    lift = max(4 - len(onnx_shape), 0)
    shape = onnx_shape[:2] + (1,) * lift + onnx_shape[2:] if layer.onnx.lift == "spatial" else onnx_shape + (1,) * lift
    from ..inputs import InputError, validate_shape

    try:  # the page's input limits and the budget, as `run` meets them: the listing says so too
        validate_shape(shape)
    except InputError as exc:
        raise ValidationError(where, exc.param, exc.rule) from None
    view = Node(
        name,
        node.op_type,
        _attributes(node),
        [None] + [consts.get(i) if i else None for i in node.input[1:]],
        shape,
        onnx_shape,
        known.opset,
        list(node.input),
    )
    raw = layer.onnx.read(view)
    try:
        params = layer.resolve(raw, shape)
    except ValidationError as exc:  # the layer's own rule, said of the node
        raise ValidationError(where, exc.param, exc.rule, exc.value) from None
    out_shape = shapes.get(node.output[0]) if node.output else None
    if out_shape and batch_free:
        out_shape = (batch,) + tuple(out_shape[1:])
    out_shape = out_shape if out_shape and all(isinstance(d, int) and d > 0 for d in out_shape) else None
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
        _node_model(known.model, node, onnx_shape, consts) if alone else None,
        batch_free,
        tuple(range(2, 2 + lift)) if layer.onnx.lift == "spatial" else tuple(range(len(onnx_shape), 4)),
        params,
        tensors=(data,),
    )


COMMUTATIVE = {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"}  # ONNX's: operands swap freely
VARIADIC = {"Sum", "Max", "Min", "Mean"}  # ONNX's ops of 1 … n inputs


def _open_several(
    known: _Known, node, name: str, model_name: str, layer: Layer, where: str, batch: int, alone: bool
) -> Opened:
    """A node of a layer of several inputs (ElementWise's Add): each input a tensor the model computes, or a constant
    where the layer's input may be one (`Input.constant`); ranks aligned as ONNX broadcasts (1s before the shorter),
    then 1s appended up to rank 4."""
    shapes, consts, given = known.shapes, known.consts, list(node.input[: len(layer.inputs)])
    swapped = (
        node.op_type in COMMUTATIVE
        and len(given) == 2
        and given[0] in consts
        and given[1] not in consts
        and not layer.inputs[0].constant
    )
    if swapped:  # a · b = b · a: the constant (PyTorch's 0.5 · x) becomes the input that may be one
        given.reverse()
    required = sum(i.used_when is None for i in layer.inputs)  # the rest: a concatenation's third and fourth
    if node.op_type in VARIADIC and len([t for t in node.input if t]) == 1:
        raise ValidationError(
            where, "inputs", f"{node.op_type} of one input is an identity: TensorRT's parser adds no layer for it", 1
        )
    if len(given) < required or "" in given:  # more inputs (Gemm's C) are the mapping's to judge
        most = f" … {len(layer.inputs)}" if required < len(layer.inputs) else ""
        raise ValidationError(
            where,
            "inputs",
            f"has {len([i for i in given if i])} inputs; {layer.name} takes {required}{most}",
            len(given),
        )
    onnx_shapes, constants = {}, {}
    notes = (
        [f"{node.op_type} commutes: its constant first operand is the layer's input {layer.inputs[1].name.upper()}."]
        if swapped
        else []
    )
    for i, t in zip(layer.inputs, given):
        if t in consts:
            if not i.constant:
                raise ValidationError(
                    where,
                    "input",
                    f"{i.name} ({t!r}) is a constant: the layer's input {i.name} must be a tensor the model computes",
                )
            constants[i.name] = np.asarray(consts[t], np.float32)
            onnx_shapes[i.name] = tuple(int(d) for d in constants[i.name].shape)
        else:
            onnx_shapes[i.name], more = _static(where, t, shapes.get(t), batch)
            notes += more
    if known.opset < 7 and node.op_type in LEGACY_BROADCAST:  # B's axes where `axis` puts them, before any lift
        big, small = [i.name for i in layer.inputs[:2]][:: -1 if swapped else 1]
        was = onnx_shapes[small]
        onnx_shapes[small] = _legacy_broadcast(where, _attributes(node), onnx_shapes[big], onnx_shapes[small])
        if onnx_shapes[small] != was:
            notes.append(f"Opset {known.opset}'s broadcast rule puts B {was} along A's axes as {onnx_shapes[small]}.")
    rank = max(len(v) for v in onnx_shapes.values())
    if not 1 <= rank <= 4:
        raise ValidationError(where, "input", f"must have rank 1 … 4, not {rank}", rank)
    align = layer.onnx.align or (lambda op, n, v, r: (1,) * (r - len(v)) + tuple(v))  # as ONNX broadcasts
    after = 4 - rank if layer.onnx.lift == "trailing" else 0  # "leading": every 1 before

    def lift(n: str, v: tuple) -> tuple:
        if layer.onnx.lift_each:
            return layer.onnx.lift_each(node.op_type, n, v)
        return (1,) * (4 - rank - after) + align(node.op_type, n, v, rank) + (1,) * after

    lifted = {n: lift(n, v) for n, v in onnx_shapes.items()}
    constants = {n: a.reshape(lifted[n]) for n, a in constants.items()}
    first = layer.input_names[0]
    view = Node(
        name,
        node.op_type,
        _attributes(node),
        [consts.get(t) for t in given] + [consts.get(t) if t else None for t in node.input[len(given) :]],
        lifted[first],
        onnx_shapes[first],
        known.opset,
        given + list(node.input[len(given) :]),
        list(onnx_shapes.values()),
    )
    raw = layer.onnx.read(view)
    try:
        params = layer.resolve(raw, lifted)
    except ValidationError as exc:  # the layer's own rule, said of the node
        raise ValidationError(where, exc.param, exc.rule, exc.value) from None
    step_tensors: dict = {}  # the tensors the steps read: `Opened.more`

    def operand(i: int, step_input: str):
        """The node's input i, read by a step: its constant lifted as the step's input, or the model's tensor."""
        t = node.input[i]
        if t in consts:
            c = np.asarray(consts[t], np.float32)
            if c.ndim > rank:
                raise ValidationError(
                    where, "inputs", f"input {i} ({t!r}) has rank {c.ndim}, over the first two's {rank}"
                )
            return c.reshape(lift(step_input, tuple(c.shape)))
        if t in given or t in step_tensors:
            raise ValidationError(where, "inputs", f"reads {t!r} twice: each tensor it reads opens as one input here")
        v, more_notes = _static(where, t, shapes.get(t), batch)
        if len(v) > rank:
            raise ValidationError(where, "inputs", f"input {i} ({t!r}) has rank {len(v)}, over the first two's {rank}")
        notes.extend(m for m in more_notes if m not in notes)
        step_tensors[t] = (v, lift(step_input, v), SEED + i)
        return t

    then = _steps(
        layer, params, lifted, layer.onnx.then(view, raw) if layer.onnx.then else [], where, operand, step_tensors
    )
    if then:
        notes.append(
            f"{node.op_type} opens as TensorRT's ONNX parser builds it: {layer.name}, then "
            + ", then ".join(f"{s.name} {p.get('operation', '')}".strip() for s, p, _ in then)
            + "; the node's output (and ONNX Runtime's comparison) is after the last."
        )
    out_shape = shapes.get(node.output[0]) if node.output else None
    out_shape = out_shape if out_shape and all(isinstance(d, int) and d > 0 for d in out_shape) else None
    tensors = {t: onnx_shapes[i.name] for i, t in zip(layer.inputs, given) if t not in consts}
    tensors |= {t: v for t, (v, _, _) in step_tensors.items()}  # the steps' (a Sum's third): inputs of the node's model
    return Opened(
        model_name,
        name,
        node.op_type,
        layer,
        raw,
        lifted[first],
        onnx_shapes[first],
        out_shape,
        layer.onnx.differs(view, raw) if layer.onnx.differs else [],
        notes,
        _node_model(known.model, node, onnx_shapes[first], consts, tensors) if alone else None,
        any(isinstance(d, str) for t in tensors for d in (shapes.get(t) or ())[:1]),
        tuple(range(rank, 4)) if after else tuple(range(4 - rank)),
        params,
        lifted,
        onnx_shapes,
        constants,
        tuple(given),
        then,
        step_tensors,
    )


# ops with `broadcast` and `axis` attributes before opset 7
LEGACY_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}


def _legacy_broadcast(where: str, attrs: dict, a: tuple, b: tuple) -> tuple:
    """B's shape at A's rank by ONNX's rule before opset 7: `broadcast` 0, B is A's shape; 1, B's shape is a
    contiguous run of A's, from `axis` (none: at the end, as later opsets align), 1s elsewhere."""
    if not attrs.get("broadcast", 0):
        if tuple(b) != tuple(a):
            raise ValidationError(
                where, "broadcast", f"is 0 (opset < 7): B must have A's shape {a}, not {b}", attrs.get("broadcast", 0)
            )
        return tuple(b)
    axis = attrs.get("axis", len(a) - len(b))
    if not 0 <= axis <= len(a) - len(b):
        raise ValidationError(
            where,
            "axis",
            f"must be 0 … {len(a) - len(b)}: B {b} is aligned with A {a} from that axis (opset < 7)",
            axis,
        )
    for k, (m, n) in enumerate(zip(a[axis:], b), axis):
        if n not in (m, 1):
            raise ValidationError(
                where, "axis", f"puts B {b} at A {a}'s axis {axis}: its axis {k} is {n} against {m} (opset < 7)", axis
            )
    return (1,) * axis + tuple(b) + (1,) * (len(a) - axis - len(b))


def _steps(layer: Layer, params: dict, shapes: dict, steps: list, where: str, operand=None, more=None) -> tuple:
    """The steps after the layer (`OnnxMap.then`), each resolved on the shape before it: (layer, params,
    operands: a constant, or the name of the model's tensor it reads, `more`'s, which `operand(index, input name)`
    gives for the node's input of that index); ValidationError naming the node and the step's rule."""
    out, shape = [], layer.cost(params, shapes)[0] if layer.cost else shapes[layer.input_names[0]]
    for name, raw, operands in steps:
        step = get_layer(name)
        constants = {k: operand(v, k) if isinstance(v, int) else np.asarray(v, np.float32) for k, v in operands.items()}
        feed = {step.input_names[0]: tuple(shape)} | {
            k: v.shape if isinstance(v, np.ndarray) else more[v][1] for k, v in constants.items()
        }
        try:
            p = step.resolve(raw, feed if step.several else feed[step.input_names[0]])
        except ValidationError as exc:
            raise ValidationError(where, exc.param, f"{name} after {layer.name}: {exc.rule}", exc.value) from None
        out.append((step, p, constants))
        shape = step.cost(p, feed if step.several else feed[step.input_names[0]])[0] if step.cost else shape
    return tuple(out)


def _step_json(layer: Layer, params: dict, operands: dict) -> dict:
    """A step as `--json` lists it: its layer, parameters and the model's tensors it reads."""
    reads = {k: v for k, v in operands.items() if isinstance(v, str)}
    return {"layer": layer.name, "params": jsonable(params)} | ({"reads": reads} if reads else {})


def _static(where: str, data: str, shape, batch: int) -> tuple[tuple, list[str]]:
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


BOOL_INPUTS = {"Where": (0,)}  # the inputs ONNX types BOOL, by op: the layer reads them as float32, nonzero true


def _node_model(model, node, onnx_shape: tuple, consts: dict, tensors: dict | None = None) -> bytes:
    """The node alone, its constant inputs as initializers, its data input of the shape it opens with (`tensors`:
    every input the model computes, by name, where the node has several)."""
    onnx = _onnx()
    h = onnx.helper
    tensors = tensors or {node.input[0]: onnx_shape}
    inits = [onnx.numpy_helper.from_array(consts[i], i) for i in node.input if i and i in consts and i not in tensors]
    boolean = {node.input[i] for i in BOOL_INPUTS.get(node.op_type, ()) if node.input[i] in tensors}
    # a BOOL input (Where's condition) comes in as float32, as the layer's does, and is cast where the node reads it
    xs = [
        h.make_tensor_value_info(f"{t}_float" if t in boolean else t, onnx.TensorProto.FLOAT, list(v))
        for t, v in tensors.items()
    ]
    casts = [h.make_node("Cast", [f"{t}_float"], [t], to=onnx.TensorProto.BOOL) for t in sorted(boolean)]
    outputs = [h.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in node.output[:1]]
    only = h.make_node(node.op_type, list(node.input), list(node.output[:1]), name=node.name or "node")
    only.attribute.extend(node.attribute)
    graph = h.make_graph([*casts, only], "node", xs, outputs, inits)
    opsets = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return h.make_model(graph, opset_imports=opsets, ir_version=model.ir_version).SerializeToString()


def _own_configuration(model, model_name: str) -> Opened | None:
    """A model this playground exported: the configuration its metadata records, exactly (a construction ONNX
    spells as several nodes, e.g. the leaky ReLU's, reopens as the layer it came from)."""
    meta = {p.key: p.value for p in model.metadata_props}
    if META_LAYER not in meta or meta[META_LAYER] not in LAYERS:
        return None
    layer = get_layer(meta[META_LAYER])
    try:
        raw = json.loads(meta.get(META_PARAMS, "{}"))
        declared = _shapes(model)
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
    from ..inputs import make_input

    return make_input("random", opened.shape, seed=SEED).reshape(opened.onnx_shape)


# -- kept by the server: an upload, and the links to its nodes ----------------------------------------------------
def remember(data: bytes, name: str):
    """Check the model in `data` and keep it (playground.blobs): (its digest, the model)."""
    model = load_model(data, name)
    return blobs.store().put(data, ".onnx"), model


@functools.lru_cache(maxsize=8)
def _remembered(digest: str):
    return load_model(blobs.store().get(digest, ".onnx", MAX_MODEL_BYTES))


@functools.lru_cache(maxsize=16)
def open_remembered(digest: str, node: str | None, model_name: str) -> Opened:
    """The node of a model this server keeps (a link's `onnx=DIGEST&node=NAME`); blobs.Missing where it does not
    hold it. The same object on every run of the page, so its configuration is resolved once."""
    return open_node(_remembered(digest), node or None, model_name)


# -- writing ---------------------------------------------------------------------------------------------------
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
    onnx = _onnx()
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


# Where the playground's engine quantizes weights under INT8/FP8 (the layer's build feeds them through a Q/DQ pair
# by set_input): the op and the index of its weight input, as the layer's ONNX export writes it.
QUANTIZED_WEIGHTS = {"Conv": 1, "ConvTranspose": 1}
# The float inputs ONNX types as float32 whatever the data's type (Resize's roi and scales): no Cast under FP16/BF16.
FLOAT32_INPUTS = {"Resize": (1, 2)}


def _float_tensors(model) -> set[str]:
    """The names of the model's float32 tensors (ONNX's shape inference): those FP16/BF16 give the type."""
    onnx = _onnx()
    g = onnx.shape_inference.infer_shapes(model).graph
    kinds = {v.name: v.type.tensor_type.elem_type for v in list(g.input) + list(g.value_info) + list(g.output)}
    kinds |= {t.name: t.data_type for t in g.initializer}
    return {name for name, kind in kinds.items() if kind == onnx.TensorProto.FLOAT}


def _admits(op: str, index: int, type_name: str) -> bool:
    """Whether ONNX's `op` (at the export's opset) takes a `type_name` tensor at input `index`."""
    onnx = _onnx()
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
    onnx = _onnx()
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


# -- a second opinion ------------------------------------------------------------------------------------------
class OnnxRuntimeMissing(PlaygroundError):
    pass


def magnitude(layer: Layer, x, params: dict) -> float:
    """The largest output of the layer on |x| (every input's, where `x` is a feed dict) with its weights' |values|:
    what a float32 sum's rounding scales with (a sum that cancels to 0 from terms of 10⁵ is still rounded at
    10⁵)."""
    absolute = {
        k: np.abs(v) if isinstance(v, np.ndarray) and layer.param(k).is_weight(params) else v for k, v in params.items()
    }
    xs = x if isinstance(x, dict) else {layer.input_names[0]: x}
    try:
        with np.errstate(all="ignore"):
            m = np.abs(np.asarray(layer.forward({n: np.abs(a) for n, a in xs.items()}, absolute), np.float64))
    except Exception:  # noqa: BLE001 - a layer whose reference needs signed weights: the input's size then
        return float(max(np.abs(a).max(initial=0.0) for a in xs.values()))
    m = m[np.isfinite(m)]
    return float(m.max(initial=0.0))


def _ort_words(exc: Exception) -> str:
    """ONNX Runtime's message without its source paths and C++ signatures: "Pad should be smaller than kernel."."""
    text = " ".join(str(exc).split())
    text = text.split("Status Message: ")[-1]
    text = re.sub(
        r"\[ONNXRuntimeError\] : \d+ : \w+ : |\S+\.(?:h|cc):\d+ |onnxruntime::\S+\(.*?\) (?:\[with .*?\] )?", "", text
    )
    return text.strip()[:300]


def session(model_bytes: bytes):
    """ONNX Runtime's CPU session on the model, one thread, its own log quiet (its refusals are answers)."""
    import onnxruntime as ort  # noqa: PLC0415

    ort.set_default_logger_severity(3)  # its refusals are reported in the answer, not on the server's stderr
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one request's work stays on one core of a shared server
    options.log_severity_level = 3
    return ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])


def onnxruntime_check(
    model_bytes: bytes,
    x,
    reference: np.ndarray,
    scale: Callable[[], float],
    differs=(),
    undefined: np.ndarray | None = None,
    compared_to: str = "the reference",
    undefined_rule: str | None = None,
    rtol: float = 1e-5,
) -> dict:
    """ONNX Runtime (CPU) on the model: its version, and `compare`'s verdict on its output against `reference`."""
    try:
        import onnxruntime as ort  # noqa: PLC0415
    except ImportError:
        return {"version": None, "agrees": None, "status": "not installed (pip install onnxruntime)"}
    out = {"version": ort.__version__, "compared_to": compared_to}
    try:
        s = session(model_bytes)
        given = list(x.values()) if isinstance(x, dict) else [x]  # several inputs: in the model's input order
        y = s.run(None, {i.name: np.ascontiguousarray(a, np.float32) for i, a in zip(s.get_inputs(), given)})[0]
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime refused or failed the model: its words are the answer
        return out | {"status": "refused", "agrees": False, "error": _ort_words(exc)}
    return out | {"status": "ran"} | compare(y, reference, scale, differs, undefined, undefined_rule, rtol)


def undefined_rule(layer: Layer) -> str | None:
    """The layer's rule for the output cells it leaves undefined: its `undefined`'s own first sentence."""
    doc = (layer.undefined.__doc__ or "") if layer.undefined else ""
    return f"{layer.name}: {' '.join(doc.split())}" if doc else None


def compare(
    y: np.ndarray,
    reference: np.ndarray,
    scale: Callable[[], float],
    differs=(),
    undefined: np.ndarray | None = None,
    rule_undefined: str | None = None,
    rtol: float = 1e-5,
) -> dict:
    """ONNX Runtime's output `y` against the layer's `reference`: the largest |difference|, whether they agree
    (within `rtol` (10⁻⁵) of the output's largest magnitude or, where that is not enough, of `scale()`, the `magnitude` of
    the terms summed: a second reference, worked out only then; and NaN/Inf where the reference has them), and
    where they do not, the rule in play that says why (`differs`), or that no known rule does. The cells the
    layer leaves `undefined` (a max over padding only: NaN in the reference, −inf in ONNX Runtime) are not compared:
    `masked` counts them and names the rule (`rule_undefined`)."""
    reference = np.asarray(reference, np.float32)
    if y.shape != reference.shape:
        return {
            "agrees": False,
            "output_shape": list(y.shape),
            "max_abs_diff": None,
            "rule": differs[0] if differs else None,
            "why": f"output shape {tuple(y.shape)} where the layer gives {tuple(reference.shape)}",
        }
    undefined = undefined if undefined is not None and undefined.shape == y.shape else np.zeros(y.shape, bool)
    defined = ~undefined
    both = defined & np.isfinite(reference) & np.isfinite(y)
    diff = float(np.abs(y[both].astype(np.float64) - reference[both]).max()) if both.any() else 0.0
    same_nonfinite = bool(np.array_equal(np.isfinite(y[defined]), np.isfinite(reference[defined])))
    largest = float(np.abs(reference[both]).max()) if both.any() else 0.0
    agrees = same_nonfinite and (diff <= rtol * max(1.0, largest) or diff <= rtol * max(1.0, scale()))
    out = {
        "agrees": agrees,
        "output_shape": list(y.shape),
        "max_abs_diff": diff,
        "rule": None if agrees else (differs[0] if differs else None),
    }
    if undefined.any():
        theirs = sorted({str(v) for v in np.unique(y[undefined])})[:4]
        out["masked"] = {
            "cells": int(undefined.sum()),
            "rule": rule_undefined or "the layer leaves these cells undefined",
            "onnxruntime_gives": theirs,
        }
    return out
