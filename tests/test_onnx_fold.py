"""Loading folds a model's constants in place, ONNX Runtime writing its large folded tensors to a file of their own
and only those the model keeps read back: the loaded model is byte for byte the one the plain way makes (ONNX
Runtime's optimized model read whole, every tensor inline, and the output a copy of the model), kept here as the
reference. ONNX's light models compute their weights in the graph (ConstantOfShape), so folding makes them.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.onnx import reading  # noqa: E402

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _plain_fold(model):
    """The fold as first written: the shape-inferred model serialized for ONNX Runtime, its optimized model read
    whole, and the output a copy of the model with the folded tensors it reads added."""
    reading.named(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 - as the fold: inference is a help
        inferred = model
    consts = {t.name for t in model.graph.initializer} | {
        o for n in model.graph.node if n.op_type == "Constant" for o in n.output
    }
    computed = {o for n in model.graph.node if n.op_type != "Constant" for o in n.output if o}
    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = os.path.join(tmp, "folded.onnx")
        options.log_severity_level = 3
        ort.InferenceSession(
            inferred.SerializeToString(),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=reading.UNFOLDING,
        )
        folded = onnx.load(options.optimized_model_filepath)
    values = {t.name: t for t in folded.graph.initializer if t.name in computed}
    outputs = {o.name for o in model.graph.output}
    was = reading._live(model.graph.node, outputs, set())
    now = reading._live(model.graph.node, outputs, set(values) - outputs)
    keep = [n for i, n in enumerate(model.graph.node) if i in now or i not in was]
    read = {i for n in keep for i in n.input}
    produced = {o for n in keep for o in n.output}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(keep)
    out.graph.initializer.extend(t for name, t in values.items() if name in read and name not in produced | consts)
    out.ir_version = max(out.ir_version, 4)
    return out


def _plain_load(data: bytes):
    model = onnx.load_model_from_string(data)
    before = len(model.graph.node)
    out = _plain_fold(model)
    onnx.helper.set_model_props(out, {reading.FOLDED: str(before - len(out.graph.node))})
    return out


def _same(loaded, plain) -> None:
    """Byte for byte: each initializer (name, type, dims, data, in order), then the rest of the model (nodes, inputs,
    outputs, metadata, opsets, IR version)."""
    assert [t.name for t in loaded.graph.initializer] == [t.name for t in plain.graph.initializer]
    for a, b in zip(loaded.graph.initializer, plain.graph.initializer):
        assert a.SerializeToString() == b.SerializeToString(), a.name
    del loaded.graph.initializer[:], plain.graph.initializer[:]
    assert loaded.SerializeToString() == plain.SerializeToString()


@pytest.mark.parametrize("case", ["light_squeezenet", "light_resnet50", "light_densenet121", "light_vgg19"])
def test_a_light_model_loads_as_the_plain_fold_makes_it(case):
    with open(os.path.join(LIGHT, f"{case}.onnx"), "rb") as f:
        data = f.read()
    plain = _plain_load(data)
    loaded = reading.load_model(data, f"{case}.onnx")
    assert reading.folded_count(loaded) > 0 and len(loaded.graph.initializer) > 0  # folding made its weights
    _same(loaded, plain)


def _given_and_folded(ir: int) -> bytes:
    """A convolution of a given weight (past the size ONNX Runtime writes to its file, and past the size kept in the
    model shape inference and the session read: their data handed over as arrays) transposed by a node folding
    computes, a ConstantOfShape weight large and one small (inline in ONNX Runtime's model), a Reshape of a shape
    chain, Gathers from a large integer table data propagation reads (a ConstantOfShape's shape: folded only where
    its size is known, `_grown`); its weights graph inputs too (IR 3) or not."""
    n = helper.make_node
    rng = np.random.default_rng(0)
    given = rng.standard_normal((3, 64, 3, 3)).astype(np.float32)  # 1,728 values
    nodes = [
        n("Transpose", ["given"], ["given_t"], name="transpose", perm=[1, 0, 2, 3]),
        n("Conv", ["x", "given_t"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        n("ConstantOfShape", ["bigshape"], ["big"], value=numpy_helper.from_array(np.array([0.25], np.float32))),
        n("Conv", ["c", "big"], ["d"], name="conv2", pads=[1, 1, 1, 1]),
        n("ConstantOfShape", ["smallshape"], ["small"], value=numpy_helper.from_array(np.array([2.0], np.float32))),
        n("Add", ["d", "small"], ["e"], name="add"),
        n("Shape", ["e"], ["s"], name="shape"),
        n("Slice", ["s", "zero", "two"], ["s2"], name="slice"),
        n("Concat", ["s2", "minus1"], ["target"], name="concat", axis=0),
        n("Reshape", ["e", "target"], ["r"], name="reshape"),
        n("Shape", ["r"], ["rs"], name="shape2"),
        n("Gather", ["table", "rs"], ["back"], name="gather", axis=0),
        n("Reshape", ["r", "back"], ["r2"], name="reshape2"),
        n("Gather", ["table", "ones"], ["oneshape"], name="gather2", axis=0),
        n("ConstantOfShape", ["oneshape"], ["one"], value=numpy_helper.from_array(np.array([1.0], np.float32))),
        n("Mul", ["r2", "one"], ["y"], name="mul"),
    ]
    inits = {
        "given": given,
        "bigshape": np.array([32, 64, 3, 3], np.int64),  # 18,432 values
        "smallshape": np.array([1, 32, 1, 1], np.int64),  # 32 values, 128 bytes
        "zero": np.array([0], np.int64),
        "two": np.array([2], np.int64),
        "minus1": np.array([-1], np.int64),
        "table": np.arange(2000, dtype=np.int64),  # 2,000 values: table[i] = i, the Reshape a no-op
        "ones": np.array([1, 1], np.int64),  # one's shape (1, 1): known by data propagation through the table alone
    }
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    if ir == 3:
        graph.input.extend(
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for k, v in inits.items()
        )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = ir
    data = onnx.shape_inference.infer_shapes(model).SerializeToString()
    return data


@pytest.mark.parametrize("ir", [3, 8])
def test_weights_given_large_and_small_and_folded_large_and_small_load_as_the_plain_fold_makes_them(ir):
    """`_given_and_folded`'s model: its given weights kept, its folded ones added, as the plain fold does."""
    data = _given_and_folded(ir)
    plain, loaded = _plain_load(data), reading.load_model(data)
    assert [x.name for x in loaded.graph.node] == ["conv", "conv2", "add", "reshape", "reshape2", "mul"]
    names = {t.name for t in loaded.graph.initializer}
    assert {"given", "given_t", "big", "small", "target", "back", "one"} <= names
    original = next(t for t in onnx.load_model_from_string(data).graph.initializer if t.name == "given")
    assert next(t for t in loaded.graph.initializer if t.name == "given") == original  # its data kept whole
    _same(loaded, plain)


def _plain_shapes(model) -> dict:
    """Every tensor's shape as first found: shape inference on the whole model, each constant's array's shape."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - as tensor_shapes: inference is a help
        inferred = model
    g, out = inferred.graph, {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        if t.HasField("shape"):
            out[v.name] = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim)
    return out | {name: a.shape for name, a in reading.constants(model).items()}


@pytest.mark.parametrize("case", ["light_squeezenet", "given"])
def test_tensor_shapes_are_those_the_whole_models_inference_finds(case):
    """`tensor_shapes` infers on the model without its large weights' data: every tensor's shape (the folded weights'
    too, and the table a Gather reads) the same, in the same order, as inference on the whole model gives."""
    if case == "given":
        data = _given_and_folded(8)
    else:
        with open(os.path.join(LIGHT, f"{case}.onnx"), "rb") as f:
            data = f.read()
    model = reading.load_model(data)
    assert any(not reading.small(t) for t in model.graph.initializer)  # some weight's data is left out
    shapes = reading.tensor_shapes(model)
    assert list(shapes.items()) == list(_plain_shapes(model).items())
