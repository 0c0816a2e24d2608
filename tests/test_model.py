"""Whole ONNX models: `run --onnx` of several nodes runs the whole model (never one inner node on the model's input),
`--input` for an inner node is the model's input, `model` checks every node on its real input against ONNX Runtime
and maps TensorRT's parser's engine layers to the nodes, constants are folded by ONNX Runtime (ONNX's own light
models), external data is read only from beside the model, and the cells a max over padding leaves undefined are
counted and named. The models are the graphs a PyTorch export writes, built by hand with onnx.helper."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import jsonschema
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.base.errors import ValidationError  # noqa: E402
from playground.model import whole  # noqa: E402
from playground.onnx import opening, reading

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
SHAPE = (1, 3, 4, 5)


def _model(nodes, inits, shape=SHAPE, opset=17, ir=None):
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir:
        m.ir_version = ir
    return onnx.shape_inference.infer_shapes(m)


def mul_relu():
    """torch: relu(x * 2)."""
    return _model(
        [
            helper.make_node("Mul", ["x", "two"], ["m"], name="/Mul"),
            helper.make_node("Relu", ["m"], ["y"], name="/relu/Relu"),
        ],
        {"two": np.float32(2)},
    )


def neg_softmax():
    """torch: softmax(-x, dim=1)."""
    return _model(
        [
            helper.make_node("Neg", ["x"], ["n"], name="/Neg"),
            helper.make_node("Softmax", ["n"], ["y"], name="/Softmax", axis=1),
        ],
        {},
    )


def gelu_tanh():
    """torch's tanh GELU as an older export spells it: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    c = {
        "three": np.float32(3),
        "k": np.float32(0.044715),
        "s": np.float32(math.sqrt(2 / math.pi)),
        "one": np.float32(1),
        "half": np.float32(0.5),
    }
    n = helper.make_node
    return _model(
        [
            n("Pow", ["x", "three"], ["p"], name="/Pow"),
            n("Mul", ["p", "k"], ["a"], name="/Mul"),
            n("Add", ["x", "a"], ["b"], name="/Add"),
            n("Mul", ["b", "s"], ["c"], name="/Mul_1"),
            n("Tanh", ["c"], ["t"], name="/Tanh"),
            n("Add", ["t", "one"], ["u"], name="/Add_1"),
            n("Mul", ["x", "u"], ["v"], name="/Mul_2"),
            n("Mul", ["v", "half"], ["y"], name="/Mul_3"),
        ],
        c,
    )


def _x(shape=SHAPE, seed=5):
    return np.random.default_rng(seed).uniform(-3, 3, shape).astype(np.float32)


def _softmax(z, axis):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


EXPECTED = {
    "mul_relu": (mul_relu, lambda x: np.maximum(2 * x, 0)),
    "neg_softmax": (neg_softmax, lambda x: _softmax(-x, 1)),
    "gelu_tanh": (gelu_tanh, lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
}


def _cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=None if env is None else os.environ | env,
    )


def _files(tmp_path, make, x):
    path, xin = tmp_path / "m.onnx", tmp_path / "x.npy"
    onnx.save(make(), path)
    np.save(xin, x)
    return str(path), str(xin)


@pytest.mark.parametrize("case", list(EXPECTED))
def test_run_without_node_runs_the_whole_model(tmp_path, case):
    make, expected = EXPECTED[case]
    x = _x()
    path, xin = _files(tmp_path, make, x)
    out = tmp_path / "y.npy"
    ran = _cli("run", "--onnx", path, "--input", xin, "--output", str(out), "--json")
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert "whole model" in answer["output_source"] and len(answer["nodes"]) == len(make().graph.node)
    np.testing.assert_allclose(np.load(out), expected(x), rtol=1e-5, atol=1e-6)
    text = _cli("run", "--onnx", path, "--input", xin)
    assert text.returncode == 0 and "the whole model" in text.stdout and "--node" in text.stdout


def test_input_for_an_inner_node_is_the_models_input(tmp_path):
    x = _x()
    path, xin = _files(tmp_path, mul_relu, x)
    out = tmp_path / "y.npy"
    ran = _cli("run", "--onnx", path, "--node", "/relu/Relu", "--input", xin, "--output", str(out), "--json")
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["layer"] == "activation"
    np.testing.assert_allclose(np.load(out), np.maximum(2 * x, 0), rtol=1e-6)  # not relu(x): the node's real input
    assert any("model's input" in n for n in answer["onnx"]["notes"])
    assert answer["onnxruntime"]["agrees"] is True


def test_model_command_checks_every_node_on_its_real_input(tmp_path):
    x = _x()
    path, xin = _files(tmp_path, gelu_tanh, x)
    out = tmp_path / "y.npy"
    ran = _cli("model", path, "--input", f"x={xin}", "--output", str(out), "--json")
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    np.testing.assert_allclose(np.load(out), EXPECTED["gelu_tanh"][1](x), rtol=1e-5, atol=1e-6)
    nodes = {n["name"]: n for n in answer["nodes"]}
    assert list(nodes) == [n.name for n in gelu_tanh().graph.node]
    tanh = nodes["/Tanh"]
    assert tanh["layer"] == "activation" and tanh["agrees"] is True and tanh["input"] == "c"
    assert tanh["max_abs_diff"] is not None and tanh["max_abs_diff"] <= 1e-5
    for n in nodes.values():  # a node opens and agrees, or says why it does not open
        assert n["agrees"] is True if n["layer"] else n["op_type"] in n["reason"], n
    assert answer["counts"]["opened"] == sum(1 for n in nodes.values() if n["layer"]) >= 1
    assert answer["output"]["y"]["shape"] == list(SHAPE)
    engine = answer["engine"]
    if engine["status"] == "not_built":
        pytest.skip(engine["why"])
    assert engine["status"] in ("built", "cached") and engine["layers"]
    fused = {n for layer in engine["layers"] for n in layer["fuses"]}
    assert fused and fused <= set(nodes) and set(engine["unnamed"]) == set(nodes) - fused


def test_a_wrong_layer_is_caught_on_the_real_input(monkeypatch):
    """The verdict is the layer's reference against ONNX Runtime: a reference that is off by a little fails."""
    model = reading.load_model(neg_softmax().SerializeToString())
    good = whole.analyze(model, "m.onnx", engine=False)
    assert [n["agrees"] for n in good["nodes"] if n["layer"]] == [True, True]  # Neg (unary) and Softmax
    from playground.base import precision as P

    real = P.emulate
    monkeypatch.setattr(P, "emulate", lambda layer, x, p: real(layer, x, p) * 1.001)
    bad = whole.analyze(model, "m.onnx", engine=False)
    assert [n["agrees"] for n in bad["nodes"] if n["layer"]] == [False, False]


def test_identity_and_dropout_open_as_the_identity_the_parser_builds():
    """Identity, a Dropout at inference (its ratio a constant, training_mode a constant false) and one whose mask is
    written but read by nothing each open as the shuffle layer doing nothing and agree with ONNX Runtime on their
    real input; a Dropout whose mask a node reads is listed with that rule."""
    m = _model(
        [
            helper.make_node("Identity", ["x"], ["i"], name="id"),
            helper.make_node("Dropout", ["i", "ratio", "off"], ["d"], name="drop"),
            helper.make_node("Relu", ["d"], ["r"], name="relu"),
            helper.make_node("Dropout", ["r"], ["e", "unread"], name="drop_mask_unread"),
            helper.make_node("Dropout", ["e"], ["f", "mask"], name="drop_mask_read"),
            helper.make_node("Cast", ["mask"], ["mf"], name="mask_float", to=TensorProto.FLOAT),
            helper.make_node("Add", ["f", "mf"], ["y"], name="add"),
        ],
        {"ratio": np.float32(0.5), "off": np.array(False)},
        opset=13,
    )
    answer = whole.analyze(reading.load_model(m.SerializeToString()), "m.onnx", engine=False)
    nodes = {n["name"]: n for n in answer["nodes"]}
    for name in ("id", "drop", "drop_mask_unread"):
        assert nodes[name]["layer"] == "shuffle" and nodes[name]["identity"] and nodes[name]["agrees"], nodes[name]
    assert nodes["drop_mask_read"]["layer"] is None and "mask" in nodes["drop_mask_read"]["reason"]
    assert nodes["relu"]["layer"] == "activation" and nodes["add"]["layer"] == "elementwise"
    assert not nodes["relu"]["identity"] and not nodes["add"]["identity"]
    notes = opening.open_node(reading.load_model(m.SerializeToString()), "drop").notes
    assert any(n.startswith("Dropout at inference") and "identity layer" in n for n in notes), notes


def test_a_1d_matmul_an_empty_reduce_and_a_sum_of_one_open_on_their_real_inputs():
    """x (2, 3, 4) → ReduceSum, noop_with_empty_axes and no axes (the input unchanged) → Sum of one (itself) →
    MatMul by a 1-D w (a column: (2, 3)) → summed over its first axis (3,) → MatMul of that 1-D A by W (a row:
    (5,)) → MatMul by a 1-D u (a dot product: ()): each opens and agrees with ONNX Runtime on its real input."""
    m = _model(
        [
            helper.make_node("ReduceSum", ["x"], ["r"], name="noop", noop_with_empty_axes=1),
            helper.make_node("Sum", ["r"], ["s"], name="sum1"),
            helper.make_node("MatMul", ["s", "w"], ["col"], name="by_column"),
            helper.make_node("ReduceSum", ["col", "first"], ["vec"], name="over_n", keepdims=0),
            helper.make_node("MatMul", ["vec", "W"], ["row"], name="as_row"),
            helper.make_node("MatMul", ["row", "u"], ["y"], name="dot"),
        ],
        {
            "w": np.float32([1, -2, 0.5, 3]),
            "first": np.int64([0]),
            "W": np.arange(15, dtype=np.float32).reshape(3, 5) / 7 - 1,
            "u": np.float32([0.25, -1, 4, 2, -0.5]),
        },
        shape=(2, 3, 4),
        opset=13,
    )
    answer = whole.analyze(reading.load_model(m.SerializeToString()), "m.onnx", engine=False)
    nodes = {n["name"]: n for n in answer["nodes"]}
    assert {k: n["layer"] for k, n in nodes.items()} == {
        "noop": "shuffle",
        "sum1": "shuffle",
        "by_column": "matrix_multiply",
        "over_n": "reduce",
        "as_row": "matrix_multiply",
        "dot": "matrix_multiply",
    }
    assert all(n["agrees"] is True for n in nodes.values()), nodes


def test_unknown_input_name_is_refused(tmp_path):
    path, xin = _files(tmp_path, mul_relu, _x())
    bad = _cli("model", path, "--input", f"nope={xin}")
    assert bad.returncode == 2 and "no input 'nope'" in bad.stderr and "x" in bad.stderr
    wrong = tmp_path / "w.npy"
    np.save(wrong, np.zeros((2, 2), np.float32))
    bad = _cli("model", path, "--input", f"x={wrong}")
    assert bad.returncode == 2 and "shape" in bad.stderr


# -- real exports: constants folded by ONNX Runtime -------------------------------------------------------------
def test_shape_chains_and_constant_of_shape_fold():
    """Conv weights from ConstantOfShape, a Reshape whose shape is Shape → Slice → Concat, as exports write them."""
    n = helper.make_node
    nodes = [
        n("ConstantOfShape", ["wshape"], ["w"], value=numpy_helper.from_array(np.array([0.5], np.float32))),
        n("Conv", ["x", "w"], ["c"], name="conv"),
        n("Shape", ["c"], ["s"], name="shape"),
        n("Slice", ["s", "zero", "two"], ["s2"], name="slice"),
        n("Concat", ["s2", "minus1"], ["target"], name="concat", axis=0),
        n("Reshape", ["c", "target"], ["y"], name="reshape"),
    ]
    m = _model(
        nodes,
        {
            "wshape": np.array([2, 3, 3, 3], np.int64),
            "zero": np.array([0], np.int64),
            "two": np.array([2], np.int64),
            "minus1": np.array([-1], np.int64),
        },
        shape=(1, 3, 6, 6),
    )
    model = reading.load_model(m.SerializeToString())
    assert [node.name for node in model.graph.node] == ["conv", "reshape"]
    answer = whole.analyze(model, "m.onnx", engine=False)
    verdicts = {v["name"]: v for v in answer["nodes"]}
    assert verdicts["conv"]["layer"] == "convolution" and verdicts["conv"]["agrees"] is True
    assert verdicts["reshape"]["layer"] == "shuffle" and verdicts["reshape"]["agrees"] is True
    assert answer["output"]["y"]["shape"] == [1, 2, 16]


def test_light_squeezenet_opens_and_agrees():
    with open(os.path.join(LIGHT, "light_squeezenet.onnx"), "rb") as f:
        model = reading.load_model(f.read(), "light_squeezenet.onnx")
    assert not [n for n in model.graph.node if n.op_type == "ConstantOfShape"]  # its weights, folded
    answer = whole.analyze(model, "light_squeezenet.onnx")
    computed = [
        n for n in answer["nodes"] if n["op_type"] in ("Conv", "Relu", "MaxPool", "GlobalAveragePool", "Softmax")
    ]
    assert computed and all(n["agrees"] is True for n in computed), [n for n in computed if not n.get("agrees")]
    assert answer["output"]["softmaxout_1"]["shape"] == [1, 1000, 1, 1]
    if answer["engine"]["status"] != "not_built":
        fused = {n for layer in answer["engine"]["layers"] for n in layer["fuses"]}
        assert {n["name"] for n in computed if n["op_type"] == "Conv"} <= fused


def test_light_shufflenet_opens_every_node_and_agrees():
    # its channel shuffle is Reshape → Transpose of five axes → Reshape, the third axis up to 136 long
    with open(os.path.join(LIGHT, "light_shufflenet.onnx"), "rb") as f:
        model = reading.load_model(f.read(), "light_shufflenet.onnx")
    answer = whole.analyze(model, "light_shufflenet.onnx", engine=False)
    assert {n["op_type"] for n in answer["nodes"]} >= {"Transpose", "Reshape", "Conv", "Sum", "Concat"}
    assert [n for n in answer["nodes"] if n.get("agrees") is not True] == []


# -- external data ------------------------------------------------------------------------------------------------
def _external(tmp_path, location="conv.onnx.data"):
    w = np.random.default_rng(2).standard_normal((4, 3, 3, 3)).astype(np.float32)
    m = _model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], {"w": w}, shape=(1, 3, 8, 8))
    path = tmp_path / "conv.onnx"
    onnx.save(m, path, save_as_external_data=True, location="conv.onnx.data", size_threshold=0)
    if location != "conv.onnx.data":
        m = onnx.load(path, load_external_data=False)
        for t in m.graph.initializer:
            for e in t.external_data:
                if e.key == "location":
                    e.value = location
        onnx.save(m, path)
    return path, w


def test_external_data_beside_the_model_opens(tmp_path):
    path, w = _external(tmp_path)
    ran = _cli("run", "--onnx", str(path), "--json")
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["layer"] == "convolution" and answer["onnxruntime"]["agrees"] is True
    model = reading.load_model(path.read_bytes(), "conv.onnx", str(tmp_path))
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]), w)
    with pytest.raises(ValidationError, match="self-contained"):  # an upload: no folder to read from
        reading.load_model(path.read_bytes(), "conv.onnx")


@pytest.mark.parametrize(
    "location,words",
    [("../conv.onnx.data", "plain file name"), ("/etc/passwd", "plain file name"), ("missing.data", "No such file")],
)
def test_external_data_outside_the_folder_is_refused(tmp_path, location, words):
    path, _ = _external(tmp_path, location)
    ran = _cli("run", "--onnx", str(path))
    assert ran.returncode == 2 and words in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr


def test_external_data_through_a_link_out_of_the_folder_is_refused(tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    path, _ = _external(inner)
    (tmp_path / "elsewhere.data").write_bytes((inner / "conv.onnx.data").read_bytes())
    (inner / "conv.onnx.data").unlink()
    (inner / "conv.onnx.data").symlink_to(tmp_path / "elsewhere.data")
    ran = _cli("run", "--onnx", str(path))
    assert ran.returncode == 2 and "leads out of the model's folder" in ran.stderr, ran.stderr


def test_external_data_within_the_size_cap(tmp_path, monkeypatch):
    path, _ = _external(tmp_path)
    monkeypatch.setattr(reading, "MAX_MODEL_BYTES", path.stat().st_size + 100)
    with pytest.raises(ValidationError, match="external data are more than"):
        reading.load_model(path.read_bytes(), "conv.onnx", str(tmp_path))


def test_folding_respects_the_element_budget(monkeypatch):
    """A model is read under the whole-model budget: a tensor over it is refused by name, a stage's budget plays no
    part; what it holds at once (at its node holding the most) is held to PLAYGROUND_MODEL_MAX_MB."""
    m = _model(
        [helper.make_node("ConstantOfShape", ["big"], ["w"]), helper.make_node("Add", ["x", "w"], ["y"])],
        {"big": np.array([100_000, 3, 4, 5], np.int64)},
    )
    monkeypatch.setenv("PLAYGROUND_MAX_ELEMENTS", "1000")  # the stage's: not the model's
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_ELEMENTS", "1000000")
    with pytest.raises(
        ValidationError, match="PLAYGROUND_MODEL_MAX_ELEMENTS. and this tensor 'w' would hold 6,000,000"
    ):
        reading.load_model(m.SerializeToString())
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_ELEMENTS", "10000000")
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "40")  # w and y alive at the Add: 12,000,000 values, 46 MiB
    with pytest.raises(
        ValidationError,
        match="node 'Add_1' .Add., its largest tensor 'w' .22.9 MiB., is where the "
        "model holds the most at once: 45.8 MiB .* 40 MiB .PLAYGROUND_MODEL_MAX_MB.",
    ):
        reading.load_model(m.SerializeToString())
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "64")
    assert "w" in {t.name for t in reading.load_model(m.SerializeToString()).graph.initializer}


def test_a_node_over_the_stages_budget_is_judged_in_its_model(monkeypatch):
    """A convolution of 6,912 multiply-adds under a stage budget of 1,000: the model judges it (its own budget), the
    node's stage refuses it with the stage's rule; under a model budget of 1,000 per node the model lists it with
    PLAYGROUND_MODEL_MAX_MACS."""
    w = np.random.default_rng(3).standard_normal((4, 3, 3, 3)).astype(np.float32)
    m = _model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])], {"w": w}, (1, 3, 8, 8))
    monkeypatch.setenv("PLAYGROUND_MAX_MACS", "1000")
    model = reading.load_model(m.SerializeToString())
    (v,) = whole.analyze(model, "m.onnx", engine=False)["nodes"]
    assert v["layer"] == "convolution" and v["agrees"] is True
    with pytest.raises(ValidationError, match="per configuration \\(PLAYGROUND_MAX_MACS\\)"):
        opening.open_node(model, "conv")
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MACS", "1000")
    (v,) = whole.analyze(model, "m.onnx", engine=False)["nodes"]
    assert v["layer"] is None and "per node (PLAYGROUND_MODEL_MAX_MACS)" in v["reason"]


# -- the cells a max over padding leaves undefined -----------------------------------------------------------------
def test_masked_cells_are_counted_and_named():
    """A MAX window of padding only: NaN in the reference, −inf in ONNX Runtime (the export pads with −inf): agrees,
    no rule, and the masked cells counted with the layer's rule."""
    from playground.network.core import evaluate
    from playground.onnx.opinions import onnxruntime_opinion

    ev = evaluate(
        "pooling",
        {"type": "MAX", "window_size_nd": "2,2", "stride_nd": "1,1", "pre_padding": "3,0", "post_padding": "0,0"},
        np.ones((1, 1, 3, 3), np.float32),
        run=False,
        build=False,
    )
    undefined = int(np.isnan(ev.reference).sum())
    assert undefined > 0
    verdict = onnxruntime_opinion(ev)
    assert verdict["agrees"] is True and verdict["rule"] is None, verdict
    assert verdict["masked"]["cells"] == undefined and verdict["masked"]["rule"].startswith("pooling:")
    assert "-inf" in verdict["masked"]["onnxruntime_gives"]


def test_a_named_batch_takes_the_inputs_n_and_the_engine_is_built_for_it():
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="a"),
            helper.make_node("Softmax", ["r"], ["y"], name="b", axis=-1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 7])],
    )
    model = reading.load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    seeded = whole.analyze(model, "m.onnx", engine=False)
    assert seeded["inputs"] == {"x": [1, 7]} and any("symbolic" in n for n in seeded["notes"])
    x = _x((3, 7))
    answer = whole.analyze(model, "m.onnx", {"x": x})
    assert [n["agrees"] for n in answer["nodes"]] == [True, True] and answer["output"]["y"]["shape"] == [3, 7]
    if answer["engine"]["status"] != "not_built":
        assert answer["engine"]["output_shape"] == [3, 7], answer["engine"]
        assert {n for layer in answer["engine"]["layers"] for n in layer["fuses"]} == {"a", "b"}


def test_a_shape_chain_feeding_resize_sizes_folds():
    """Upsampling as exports write it: sizes = Concat(Shape(x)[0:2], [8, 10])."""
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["s"], name="shape"),
        n("Slice", ["s", "zero", "two"], ["nc"], name="slice"),
        n("Concat", ["nc", "hw"], ["sizes"], name="concat", axis=0),
        n("Resize", ["x", "", "", "sizes"], ["y"], name="resize", mode="nearest"),
    ]
    m = _model(
        nodes,
        {"zero": np.array([0], np.int64), "two": np.array([2], np.int64), "hw": np.array([8, 10], np.int64)},
        opset=13,
    )
    model = reading.load_model(m.SerializeToString())
    assert [node.name for node in model.graph.node] == ["resize"]
    [verdict] = whole.analyze(model, "m.onnx", engine=False)["nodes"]
    assert verdict["layer"] == "resize" and verdict["agrees"] is True and verdict["output_shape"] == [1, 3, 8, 10]


def test_a_disagreement_names_the_documented_rule():
    """Clip with min > max inside a model: the node differs from ONNX Runtime on its real input, and says which rule."""
    n = helper.make_node
    m = _model(
        [n("Neg", ["x"], ["n"], name="neg"), n("Clip", ["n", "lo", "hi"], ["y"], name="clip")],
        {"lo": np.float32(1.0), "hi": np.float32(-1.0)},
    )
    verdicts = {
        v["name"]: v for v in whole.analyze(reading.load_model(m.SerializeToString()), "m.onnx", engine=False)["nodes"]
    }
    clip = verdicts["clip"]
    assert clip["layer"] == "activation" and clip["agrees"] is False and clip["rule"].startswith("Clip with min > max")


@pytest.mark.parametrize(
    "layer_name,expected",
    [
        ("n0_myl0_1", ["n0"]),  # TensorRT for RTX: one node's name and its graph's suffix
        ("n0 + n1", ["n0", "n1"]),  # full TensorRT: a fusion's nodes joined
        ("/conv/Conv + /relu/Relu [reformat]", ["/conv/Conv", "/relu/Relu"]),
        ("__myl_CorrMulAddRelu_myl0_3", []),  # a generated name holds none: the parser's metadata says which
    ],
)
def test_engine_layer_names_map_to_nodes(layer_name, expected):
    assert whole.named_in(layer_name, {"n0", "n1", "/conv/Conv", "/relu/Relu"}) == expected


def test_a_models_references_share_one_work_budget(monkeypatch):
    """Three Relus of 60 values each under a model budget of 100 multiply-adds: the first is computed, the later ones
    are listed with the budget's rule."""
    n = helper.make_node
    m = _model(
        [n("Relu", ["x"], ["a"], name="r1"), n("Relu", ["a"], ["b"], name="r2"), n("Relu", ["b"], ["y"], name="r3")], {}
    )
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MACS", "100")
    monkeypatch.setattr(whole, "MODEL_WORK", 1)
    verdicts = whole.analyze(reading.load_model(m.SerializeToString()), "m.onnx", engine=False)["nodes"]
    assert verdicts[0]["agrees"] is True
    assert all(v["agrees"] is None and "work budget" in v["why"] for v in verdicts[1:]), verdicts


def test_the_badge_counts_the_masked_cells_and_names_the_rule():
    from playground.network.core import evaluate
    from playground.serve.protocol import onnxruntime_badge

    ev = evaluate(
        "pooling",
        {"type": "MAX", "window_size_nd": "2,2", "stride_nd": "1,1", "pre_padding": "3,0", "post_padding": "0,0"},
        np.ones((1, 1, 3, 3), np.float32),
        run=False,
        build=False,
    )
    cells = int(np.isnan(ev.reference).sum())
    badge = onnxruntime_badge(ev)
    assert badge["agrees"] is True and f"({cells} undefined)" in badge["text"]
    assert (
        f"{cells} cell(s) not compared" in badge["title"] and "pooling:" in badge["title"] and "-inf" in badge["title"]
    )


# -- opsets ONNX Runtime has no kernels for, and what folding took out -------------------------------------------
BACKEND = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def _old_opset(op: str, opset: int, **attrs):
    """One node at an opset ONNX Runtime's CPU kernels start after (they start at 7): AveragePool-1, Mul-6."""
    inputs = ["x", "y"] if op == "Mul" else ["x"]
    graph = helper.make_graph(
        [helper.make_node(op, inputs, ["z"], name=op.lower(), **attrs)],
        "g",
        [helper.make_tensor_value_info(i, TensorProto.FLOAT, [1, 2, 5, 5]) for i in inputs],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2, 4, 4] if op == "AveragePool" else [1, 2, 5, 5])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=3)


@pytest.mark.parametrize(
    "make,op",
    [
        (lambda: _old_opset("AveragePool", 1, kernel_shape=[2, 2]), "AveragePool-1"),
        (lambda: _old_opset("Mul", 6), "Mul-6"),
    ],
)
def test_an_opset_onnxruntime_has_no_kernel_for_is_converted_and_said(make, op):
    model = reading.load_model(make().SerializeToString(), "old.onnx")
    answer = whole.analyze(model, "old.onnx", engine=False)
    said = f"no kernel for {op}: it runs the model converted to opset 7 by onnx.version_converter"
    assert any(said in n for n in answer["notes"]), answer["notes"]
    assert "onnxruntime_error" not in answer and answer["counts"]["agreeing"] == 1
    assert reading.opset_of(model) == int(op.split("-")[1])  # the nodes are read at the model's own opset


def test_onnxs_own_opset_6_model_is_converted_by_the_cli(tmp_path):
    """pytorch-operator/test_operator_basic: Add-6, Mul-6, Tanh, Sigmoid, Neg; ONNX Runtime refused it (exit 1
    before)."""
    path = os.path.join(BACKEND, "pytorch-operator", "test_operator_basic", "model.onnx")
    ran = _cli("model", path, "--no-engine")
    assert ran.returncode == 0, ran.stderr
    assert "5 nodes, 5 opened as layers, 5 agreeing" in ran.stdout
    assert "no kernel for Add-6: it runs the model converted to opset 7" in ran.stdout


def test_a_model_no_conversion_mends_is_refused_with_exit_2(tmp_path):
    """A Dropout-6 that trains (is_test 0): ONNX Runtime has no Dropout-6 kernel and the converter refuses is_test 0;
    the node is listed with its own reason, the model refused naming the op and the converter's rule."""
    from onnx_cases import node_model

    path = tmp_path / "old.onnx"
    path.write_bytes(node_model("Dropout", (1, 2, 3), opset=6, is_test=0).SerializeToString())
    ran = _cli("model", str(path), "--no-engine")
    assert ran.returncode == 2, ran.stderr
    assert "is_test: must be 1 before opset 7" in ran.stdout
    assert "the model is opset 6 and ONNX Runtime has no kernel for Dropout-6" in ran.stderr
    assert "Attribute is_test must not have value 0" in ran.stderr


def test_counts_name_the_nodes_folding_took_out():
    """light_squeezenet: 105 nodes in the file, its 39 ConstantOfShape weights folded, 66 listed."""
    path = os.path.join(LIGHT, "light_squeezenet.onnx")
    assert len(onnx.load(path).graph.node) == 105
    ran = _cli("model", path, "--no-engine")
    assert "66 nodes (39 constant nodes folded), 66 opened as layers, 66 agreeing" in ran.stdout, ran.stdout[-500:]


# -- Model Explorer's node data ---------------------------------------------------------------------------------
# The JSON Model Explorer's node data provider reads, as its node_data_builder.py declares it (ModelNodeData: graph
# id → GraphNodeData; its `results`: node id → NodeDataResult, a numeric `value` and optional CSS colours).
NODE_DATA_SCHEMA = {
    "type": "object",
    "minProperties": 1,
    "additionalProperties": {
        "type": "object",
        "required": ["results"],
        "properties": {
            "results": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["value"],
                    "properties": {
                        "value": {"type": "number"},
                        "bgColor": {"type": "string"},
                        "textColor": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
            },
            "thresholds": {"type": "array"},
            "gradient": {"type": "array"},
        },
        "additionalProperties": False,
    },
}


def test_node_data_for_model_explorer_holds_each_nodes_max_diff(tmp_path):
    x = _x()
    path, xin = _files(tmp_path, gelu_tanh, x)
    out = tmp_path / "nodes.json"
    ran = _cli("model", path, "--input", f"x={xin}", "--no-engine", "--json", "--node-data", str(out))
    assert ran.returncode == 0, ran.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, NODE_DATA_SCHEMA)
    answer = json.loads(ran.stdout)
    (graph,) = data
    assert graph == gelu_tanh().graph.name
    compared = {n["name"]: n["max_abs_diff"] for n in answer["nodes"] if n["layer"] and n["agrees"] is not None}
    assert compared and {k: v["value"] for k, v in data[graph]["results"].items()} == compared
    assert {v["bgColor"] for v in data[graph]["results"].values()} == {"#c8e6c9"}  # all agree: green
    bad = _cli("model", path, "--no-engine", "--node-data", str(tmp_path / "nodes.txt"))
    assert bad.returncode == 2 and "--node-data" in bad.stderr and ".json" in bad.stderr


def test_node_data_colours_a_difference_red(monkeypatch):
    from playground.base import precision as P
    from playground.model.node_data import node_data

    real = P.emulate
    monkeypatch.setattr(P, "emulate", lambda layer, x, p: real(layer, x, p) * 1.001)
    answer = whole.analyze(reading.load_model(neg_softmax().SerializeToString()), "m.onnx", engine=False)
    data = node_data(answer)
    jsonschema.validate(data, NODE_DATA_SCHEMA)
    results = data["g"]["results"]
    assert set(results) == {"/Neg", "/Softmax"} and {r["bgColor"] for r in results.values()} == {"#ffcdd2"}
    assert all(r["value"] > 0 for r in results.values())


# -- kept per model digest ------------------------------------------------------------------------------------------
def _kept(tmp_path, monkeypatch):
    from playground.model import kept

    monkeypatch.setenv("PLAYGROUND_ENGINE_CACHE", str(tmp_path / "cache"))
    data = gelu_tanh().SerializeToString()
    return kept, data, __import__("hashlib").sha256(data).hexdigest()


def test_a_second_open_reads_the_kept_answer_and_loads_nothing(tmp_path, monkeypatch):
    kept, data, digest = _kept(tmp_path, monkeypatch)
    first = kept.analysis(digest, "a.onnx", lambda: reading.load_model(data), engine=False)
    assert first["cache"]["status"] == "analysed" and first["cache"]["tensors_kept"] is True

    def never():
        raise AssertionError("a kept answer loads no model")

    outputs = {}
    second = kept.analysis(digest, "b.onnx", never, engine=False, outputs=outputs)
    assert second["cache"]["status"] == "cached" and second["model"] == "b.onnx"
    assert second["nodes"] == first["nodes"] and second["counts"] == first["counts"]
    assert second["cache"]["first_seconds"] == first["seconds"]
    (y,) = outputs.values()  # the model's output, from the kept tensors of its run
    np.testing.assert_allclose(y, EXPECTED["gelu_tanh"][1](whole.feeds(gelu_tanh())[0]["x"]), rtol=1e-5, atol=1e-6)
    # another input, another answer; the node's real input is read from the kept run
    other = kept.analysis(digest, "a.onnx", lambda: reading.load_model(data), {"x": _x()}, engine=False)
    assert other["cache"]["status"] == "analysed"
    model = reading.load_model(data)
    want = whole.run_all(model, whole.feeds(model)[0])["c"]
    monkeypatch.setattr(whole, "run_all", lambda *a, **k: pytest.fail("the kept run is read, not run again"))
    np.testing.assert_array_equal(kept.real_values(model, ("c",), digest)["c"], want)


@pytest.mark.parametrize("suffix", [".answer", ".tensors"])
@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_damaged_cache_file_is_refused_and_made_again(tmp_path, monkeypatch, suffix, damage):
    kept, data, digest = _kept(tmp_path, monkeypatch)
    first = kept.analysis(digest, "a.onnx", lambda: reading.load_model(data), engine=False)
    (f,) = (tmp_path / "cache" / "models").glob(f"*{suffix}")
    raw = bytearray(f.read_bytes())
    if damage == "flip":
        raw[-3] ^= 0xFF  # in the last part's bytes: its SHA-256 no longer matches
    f.write_bytes(bytes(raw[: len(raw) // 2]) if damage == "truncate" else b"\x00" * 64 if damage == "garbage" else raw)
    if suffix == ".tensors":
        names = ["x"] + [o for n in gelu_tanh().graph.node for o in n.output]
        assert any(kept.tensor(digest, n) is None for n in names) and not f.exists()  # refused, deleted: never trusted
        return
    again = kept.analysis(digest, "a.onnx", lambda: reading.load_model(data), engine=False)
    assert again["cache"]["status"] == "analysed" and again["nodes"] == first["nodes"]
    assert any("unreadable" in n and "redone" in n for n in again["cache"]["notes"]), again["cache"]
    assert kept.analysis(digest, "a.onnx", None, engine=False)["cache"]["status"] == "cached"  # kept anew


def test_the_cli_says_a_second_open_came_from_the_cache(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(gelu_tanh(), path)
    env = {"PLAYGROUND_ENGINE_CACHE": str(tmp_path / "cache")}
    first, second = (_cli("model", str(path), "--no-engine", env=env) for _ in range(2))
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "kept in the cache" not in first.stdout and "(kept in the cache: its first analysis took" in second.stdout
    lines = lambda out: [line for line in out.splitlines() if line.startswith("/")]  # noqa: E731 - the node lines
    assert lines(first.stdout) == lines(second.stdout) and lines(first.stdout)


# -- ONNX sequences and an output that cannot be written -----------------------------------------------------------
def _sequence_model():
    """x, y → SequenceConstruct → SequenceAt(…, 1) → Relu: the nodes of a sequence are listed, the Relu opens."""
    graph = helper.make_graph(
        [
            helper.make_node("SequenceConstruct", ["x", "y"], ["s"], name="construct"),
            helper.make_node("SequenceAt", ["s", "one"], ["t"], name="at"),
            helper.make_node("Relu", ["t"], ["z"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(SHAPE)) for n in ("x", "y")],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.int64(1), "one")],
    )
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_a_sequence_model_is_listed_not_a_traceback(tmp_path):
    path = tmp_path / "seq.onnx"
    onnx.save(_sequence_model(), path)
    ran = _cli("model", str(path), "--no-engine", "--json")
    assert ran.returncode == 0, ran.stderr
    nodes = {n["name"]: n for n in json.loads(ran.stdout)["nodes"]}
    for name in ("construct", "at"):
        assert nodes[name]["layer"] is None and "sequence" in nodes[name]["reason"], nodes[name]
    assert nodes["relu"]["layer"] == "activation" and nodes["relu"]["agrees"] is True


def test_model_output_that_onnx_runtime_cannot_give_exits_non_zero(tmp_path):
    """A model whose only output is a sequence: ONNX Runtime gives no tensor to write, so the answer is printed,
    the exit status is 1 and the message names --output."""
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "y"], ["s"], name="construct")],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(SHAPE)) for n in ("x", "y")],
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)],
    )
    path, out = tmp_path / "s.onnx", tmp_path / "y.npy"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    ran = _cli("model", str(path), "--no-engine", "--output", str(out))
    assert ran.returncode == 1 and "--output" in ran.stderr and "not written" in ran.stderr, ran.stderr
    assert "construct" in ran.stdout and not out.exists()


def test_a_double_input_is_fed_in_its_own_type():
    """x (float64) → Cast → Relu: the seeded pattern goes in as float64, the model runs and the Relu agrees."""
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["x"], ["c"], name="cast", to=TensorProto.FLOAT),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    answer = whole.analyze(reading.load_model(m.SerializeToString()), "m.onnx", engine=False)
    assert "onnxruntime_error" not in answer, answer["onnxruntime_error"]
    assert {n["name"]: n.get("agrees") for n in answer["nodes"]}["relu"] is True


def test_a_whole_models_engine_beyond_the_engine_caches_cap_is_said_to_be_kept_in_memory_only(tmp_path, monkeypatch):
    from playground.onnx import opinions
    from playground.trt.backend import detect
    from playground.trt.cache import EngineCache

    if not detect().can_build:
        pytest.skip("no TensorRT builder here")
    tiny = EngineCache(tmp_path, cap_bytes=1024)  # far below any engine
    monkeypatch.setattr(opinions, "default_cache", lambda: tiny)
    model = reading.load_model(_model([helper.make_node("Relu", ["x"], ["y"], name="r")], {}).SerializeToString())
    engine = whole.engine_layers(model, ["r"])
    assert engine["status"] == "built" and not tiny.entries()
    assert any("PLAYGROUND_ENGINE_CACHE_MB" in n and "memory only" in n for n in engine["notes"])
