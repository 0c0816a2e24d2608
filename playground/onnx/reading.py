"""ONNX models read, as hostile input: a size cap, `onnx.checker`, external data only from a file beside the model (a
file's `folder`; never a path that leaves it), bounded node and initializer counts, and every tensor's declared size
within the work budget before it is read. Its constants are folded by ONNX Runtime's own graph optimizer (`fold`):
the weights an export computes (ConstantOfShape, Shape → Slice → Concat feeding Reshape or Resize) open as
constants. The server keeps an uploaded model (`remember`) for the links to its nodes.

    load_model(bytes) → ModelProto (checked, folded) → opening.list_nodes / opening.open_node
"""

from __future__ import annotations

import functools
import math
import os
import stat
import tempfile

import numpy as np

from ..base import blobs, budget
from ..base.errors import ValidationError

MAX_MODEL_BYTES = 64 << 20  # an upload or a file: ResNet-18's weights (45 MB) fit, a language model does not
MAX_NODES = 10_000
MAX_INITIALIZERS = 10_000


def _fail(rule: str, value=None) -> ValidationError:
    return ValidationError("onnx", "model", rule, value)


def library():
    """The onnx library: only the commands and pages that read or write models pay for its import."""
    import onnx  # noqa: PLC0415 - the library, not this package: imports are absolute

    return onnx


def load_model(data: bytes, name: str = "model.onnx", folder: str | None = None):
    """The model in `data`, checked, its constants folded (`fold`); ValidationError naming the rule it breaks.
    `folder`: the model file's directory, where a tensor's external data may be read (an upload has none). A model
    is read under the whole-model budget (`budget.whole_model`); a node opened on a stage, under the stage's."""
    with budget.whole_model():
        return _load_model(data, name, folder)


def _load_model(data: bytes, name: str, folder: str | None):
    onnx = library()
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
    for tensor, dims in _tensors(graph):
        over = budget.over_elements(dims, f"tensor {tensor.name!r}", "the model's tensors")
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
    nested = next((n for n in graph.node for a in n.attribute if a.HasField("g") or a.graphs), None)
    if nested is not None or graph.sparse_initializer:
        what = (
            f"node {nested.name or nested.op_type!r} ({nested.op_type}) holds a graph"
            if nested
            else "it has sparse initializers"
        )
        raise _fail(f"{name}: {what}; subgraphs and sparse initializers are not read (single layers never need them)")
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - the checker's ValidationError: its message says what
        raise _fail(f"{name} fails onnx.checker: {checker_words(exc)}") from None
    before = len(model.graph.node)
    out = fold(model)
    meta = {p.key: p.value for p in out.metadata_props}
    onnx.helper.set_model_props(out, meta | {FOLDED: str(before - len(out.graph.node))})
    return out


FOLDED = "playground.folded"  # kept with the loaded model (its metadata): the nodes constant folding took out


def folded_count(model) -> int:
    """The nodes constant folding took out of the model on loading (they computed its weights)."""
    value = next((p.value for p in model.metadata_props if p.key == FOLDED), "0")
    return int(value) if value.isdigit() else 0


MAX_CHECKER_WORDS = 1000  # characters of onnx.checker's refusal kept: its whole sentence, a model's text bounded


def checker_words(exc: Exception) -> str:
    """onnx.checker's refusal whole, its lines joined (it names a node on lines of their own), cut only past
    MAX_CHECKER_WORDS (a model's names can make it megabytes)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_CHECKER_WORDS else text[: MAX_CHECKER_WORDS - 1] + "…"


def _read_external(tensors, folder: str, model_bytes: int, name: str) -> None:
    """Each tensor's external data read into the tensor: only a file directly in `folder` (a plain file name: no
    directory, no link that leads out of it), the bytes it names within that file, and the model with all of its
    data within the model size cap."""
    onnx = library()
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
    """Every node given the name it is listed under, in place (folding and marking outputs keep them), unique by
    construction: its own name (the first node that bears it keeps it), or `node_name`'s OP_INDEX for a node without
    one; a second node of the same name, or a made name some node bears, qualified by its index (NAME#INDEX). Each
    node is then reached by its name alone (--node, a link, the graph)."""
    nodes = graph_nodes(model)
    given, taken = {n.name for n in nodes if n.name}, set()
    for i, node in enumerate(nodes):
        name = node_name(node, i)
        if name in taken or (not node.name and name in given):
            base, name, k = name, f"{name}#{i}", 1
            while name in taken or name in given:
                name, k = f"{base}#{i}#{k}", k + 1
        taken.add(name)
        node.name = name


# ONNX Runtime's basic rewrites other than constant folding: its fusions (Conv + BatchNormalization, …) would consume
# folded weights, and sharing would merge equal ones under one name (a folded value is taken by its own name).
UNFOLDING = [
    "Level1_RuleBasedTransformer",
    "CommonSubexpressionElimination",
    "ConstantSharing",
    "MatMulAddFusion",
    "ReshapeFusion",
]


def _grown(model, known: dict) -> None:
    """Refuse a constant folding would grow to a size shape inference cannot tell (a ConstantOfShape of a shape an
    Abs computes): ONNX Runtime's folding computes it before anything could bound it, so a constant is folded only
    where its size is known (and so held to the budget with every tensor)."""
    consts = {t.name for t in model.graph.initializer}
    for node in model.graph.node:
        if all(not i or i in consts for i in node.input):
            unknown = [o for o in node.output if o and o not in known and node.op_type != "Constant"]
            if unknown:
                raise _fail(
                    f"node {node.name or node.op_type!r} ({node.op_type}) makes a constant {unknown[0]!r} whose size "
                    "is known only once it is computed; constants are folded only where shape inference finds "
                    "their size within the budget (PLAYGROUND_MAX_ELEMENTS)"
                )
            consts.update(o for o in node.output if o)


def _live(nodes, outputs: set, given: set) -> set[int]:
    """The indices of the nodes the graph's `outputs` need, where the tensors in `given` need no node."""
    needed, live = set(outputs), set()
    for i in range(len(nodes) - 1, -1, -1):
        if any(o in needed and o not in given for o in nodes[i].output if o):
            live.add(i)
            needed.update(nodes[i].input)
    return live


def fold(model):
    """The model, folded in place (its weights are not copied), with every tensor ONNX Runtime's constant folding
    computes (ORT_ENABLE_BASIC, its optimized model) as an initializer and the nodes that computed only those taken
    out; every other node as the model has it (the optimizer's fusions are not taken: a node listed is a node of the
    model). Each tensor's size, as ONNX's shape
    inference (with data propagation) finds it, within the budget before anything is computed. A model ONNX Runtime
    does not load is returned as it is (its nodes are still listed, and refused with their reasons)."""
    onnx = library()
    named(model)
    inputs = {i for n in model.graph.node for i in n.input}
    given = {t.name for t in model.graph.initializer if t.name in inputs and not _propagated(t)}
    light = weightless(model, lambda t: t.name not in given)  # the large weights' data: the model's own, uncopied
    try:
        inferred = onnx.shape_inference.infer_shapes(light, data_prop=True)
    except Exception:  # noqa: BLE001 - inference is a help: the model stands without it
        inferred = light
    del light
    weights = {t.name: math.prod(t.dims) for t in model.graph.initializer}
    total, g, known = sum(weights.values()), inferred.graph, {}  # the weights, then the inputs and every tensor
    for v in [v for v in g.input if v.name not in weights] + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if not t.HasField("shape") or None in dims:
            continue  # its size is known once computed: a constant's is refused below (`_grown`), a run's by the arena
        known[v.name] = tuple(dims)
        over = budget.over_elements(tuple(dims), f"tensor {v.name!r}", "the model's tensors")
        if over:
            raise _fail(over)
        total += math.prod(dims)
    _grown(model, known)
    what = model.graph.name or "the model"
    over = _over_held(model, inferred) if budget.in_whole_model() else budget.over_model_total(total, what)
    if over:
        raise _fail(over)
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
        # its large tensors written to a file of their own, not inline: only those the model keeps are read back
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", "folded.data")
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        # the session is never run: its kernels' packed copies of the weights (MatMul's, Conv's) are not made
        options.add_session_config_entry("session.disable_prepacking", "1")
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        serialized = inferred.SerializeToString()  # the shapes found: Shape nodes fold
        del inferred
        arrays = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.name in given}
        held = [ort.OrtValue.ortvalue_from_numpy(a) for a in arrays.values()]  # read in place while the session lives
        if held:
            options.add_external_initializers(list(arrays), held)
        try:
            ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"], disabled_optimizers=UNFOLDING)
            del serialized, arrays, held
            folded = onnx.load(options.optimized_model_filepath, load_external_data=False)
        except Exception:  # noqa: BLE001 - ONNX Runtime refuses the model: its nodes are read as they are
            return model
        values = {t.name: t for t in folded.graph.initializer if t.name in computed}
        if not values:
            return model
        outputs = {o.name for o in model.graph.output}
        was = _live(model.graph.node, outputs, set())
        now = _live(model.graph.node, outputs, set(values) - outputs)
        # out: the nodes folding made needless (those computing folded tensors, or only feeding them); dead ones stay
        nodes = model.graph.node
        keep = [i in now or i not in was for i in range(len(nodes))]
        read = {i for n, k in zip(nodes, keep) if k for i in n.input}
        produced = {o for n, k in zip(nodes, keep) if k for o in n.output}
        for i in range(len(nodes) - 1, -1, -1):  # the model folded in place: its weights are not copied
            if not keep[i]:
                del nodes[i]
        start = len(model.graph.initializer)
        model.graph.initializer.extend(
            t for name, t in values.items() if name in read and name not in produced | consts
        )
        del folded, values
        # the kept tensors' data read in, the largest first: at most one tensor's bytes are held twice, beside the rest
        added = model.graph.initializer[start:]
        for t in sorted(added, key=lambda t: -sum(int(e.value) for e in t.external_data if e.key == "length")):
            if t.external_data:
                onnx.external_data_helper.load_external_data_for_tensor(t, tmp)
                t.ClearField("data_location")  # as ONNX Runtime writes a tensor inline: neither field set
                if not t.doc_string:
                    t.ClearField("doc_string")
    model.ir_version = max(model.ir_version, 4)  # an initializer need not be a graph input (IR 3 asks it to be)
    return model


EXTERNAL = "weights handed to the session"  # a weight's location, never a file: its data is given as an array
SHAPE_SIZED = 1024  # a weight of at most this many values stays in the model (a Reshape's shape is read)


def small(tensor) -> bool:
    return math.prod(tensor.dims) <= SHAPE_SIZED


def weightless(model, kept=small):
    """The model with its weights' data left out but for those `kept` keeps (small ones: a shape a Reshape reads),
    their types and dimensions kept: shape inference, an extraction and ONNX Runtime's session then copy no large
    weight (the session is handed each as an array on the model's own bytes: `add_external_initializers`)."""
    onnx = library()
    out = onnx.ModelProto()
    out.ir_version, out.producer_name = model.ir_version, model.producer_name
    out.opset_import.extend(model.opset_import)
    out.functions.extend(model.functions)
    g, src = out.graph, model.graph
    g.name = src.name
    for field in ("node", "input", "output", "value_info", "sparse_initializer", "quantization_annotation"):
        getattr(g, field).extend(getattr(src, field))
    for t in src.initializer:
        if kept(t):
            g.initializer.append(t)
        else:
            stub = g.initializer.add(name=t.name, dims=t.dims, data_type=t.data_type)
            stub.data_location = onnx.TensorProto.EXTERNAL  # ONNX Runtime takes its data as an external initializer
            stub.external_data.add(key="location", value=EXTERNAL)
    return out


def _propagated(tensor) -> bool:
    """A weight whose values shape inference reads: a small one (a Reshape's shape), or any integer one of one axis
    at most (data propagation reads it whatever its size: a Gather from it may be a shape)."""
    onnx = library()
    ints = {onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64}
    ints |= {onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}
    return small(tensor) or (len(tensor.dims) <= 1 and tensor.data_type in ints)


def _over_held(model, inferred) -> str | None:
    """The rule a whole model breaks where what its run holds at once (`held.peak`: its weights, the tensors alive at
    a node and that node's outputs, bytes by element type) is past the whole-model budget, naming the node and its
    largest tensor; None where it fits."""
    from . import held

    size, weights = held.sizes(inferred), held.weight_bytes(model.graph)
    peak, at, alive = held.peak(model.graph, size)
    node = model.graph.node[at] if model.graph.node else None
    own = {t: size.get(t, weights.get(t, 0)) for t in (*node.input, *node.output) if t} if node else {}
    largest = max(own, key=own.get, default=None)
    what = (
        f"node {node.name or node.op_type!r} ({node.op_type}), its largest tensor {largest!r} "
        f"({own[largest] / 2**20:,.1f} MiB),"
        if node is not None and largest
        else "the model"
    )
    return budget.over_model_held(sum(weights.values()), alive, peak - alive, what)


def _tensors(graph):
    """Every tensor the graph holds, with the shape it stands for: initializers, sparse ones (their values and
    indices, each of the dense shape's size at most), attributes' tensors of every node of any domain, and those of
    the graphs nested in attributes (If, Loop, Scan, or another domain's): each is a tensor whose data may be
    external, so each goes through the same rule."""

    def sparse(s):
        yield s.values, tuple(s.dims)
        yield s.indices, tuple(s.indices.dims)

    for t in graph.initializer:
        yield t, tuple(t.dims)
    for s in graph.sparse_initializer:
        yield from sparse(s)
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t, tuple(a.t.dims)
            for t in a.tensors:
                yield t, tuple(t.dims)
            if a.HasField("sparse_tensor"):
                yield from sparse(a.sparse_tensor)
            for s in a.sparse_tensors:
                yield from sparse(s)
            if a.HasField("g"):
                yield from _tensors(a.g)
            for g in a.graphs:
                yield from _tensors(g)


def opset_of(model) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def constants(model) -> dict[str, np.ndarray]:
    """Initializers and Constant nodes' values by name."""
    onnx = library()
    return {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer} | _constant_nodes(model)


def _constant_nodes(model) -> dict[str, np.ndarray]:
    onnx = library()
    out = {}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute:
            a = node.attribute[0]
            value = onnx.helper.get_attribute_value(a)
            out[node.output[0]] = onnx.numpy_helper.to_array(value) if a.name == "value" else np.asarray(value)
    return out


def tensor_shapes(model) -> dict[str, tuple]:
    """Every tensor's shape the model declares or ONNX's shape inference finds: a dimension a number, or a name.
    Inferred on the model without its large weights' data (`weightless`): no weight is copied."""
    onnx = library()
    try:
        inferred = onnx.shape_inference.infer_shapes(weightless(model, _propagated))
    except Exception:  # noqa: BLE001 - inference is a help, the declarations stand without it
        inferred = model
    g = inferred.graph
    out = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        if t.HasField("shape"):
            out[v.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim)
    out.update((t.name, tuple(t.dims)) for t in model.graph.initializer)  # a weight's shape is its dimensions
    out.update((name, a.shape) for name, a in _constant_nodes(model).items())
    return out


def graph_nodes(model) -> list:
    """The nodes a person would open: every node but Constant ones (they are weights)."""
    return [n for n in model.graph.node if n.op_type != "Constant"]


def node_name(node, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


# -- kept by the server: an upload, and the links to its nodes ----------------------------------------------------
def remember(data: bytes, name: str):
    """Check the model in `data` and keep it (playground.base.blobs): (its digest, the model)."""
    model = load_model(data, name)
    return blobs.store().put(data, ".onnx"), model


@functools.lru_cache(maxsize=8)
def remembered(digest: str):
    return load_model(blobs.store().get(digest, ".onnx", MAX_MODEL_BYTES))
