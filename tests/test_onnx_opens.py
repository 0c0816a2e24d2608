"""Nodes that open as the README maps them and are judged on what they compute: ONNX's comparisons (and Not, IsInf,
IsNaN) as ElementWise/Unary on their real inputs, a Gather of a constant table (an Embedding), an opset-6 PRelu's
per-channel slopes, a Div by ±0 (IEEE's ±inf, compared; only 0 / 0 masked); a stricter refusal's reason on the CLI."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.cli import main  # noqa: E402
from playground.model import whole  # noqa: E402
from playground.onnx import opening, reading

SHAPE = [1, 2, 3, 3]
n = helper.make_node


def _load(nodes, inputs, outputs, consts, opset=17):
    graph = helper.make_graph(
        nodes, "g", inputs, outputs, [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    )
    m = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))
    return reading.load_model(m.SerializeToString())


def _verdicts(model, given=None) -> dict:
    return {v["name"]: v for v in whole.analyze(model, "m.onnx", given, engine=False)["nodes"]}


def test_comparisons_open_as_elementwise_and_unary_and_agree():
    """An SE-style gate: Greater(x, 0) → Not → Cast, Equal, Less, IsNaN, IsInf, a Where on the Greater."""
    model = _load(
        [
            n("Greater", ["x", "zero"], ["g"], name="greater"),
            n("Not", ["g"], ["ng"], name="not"),
            n("Equal", ["x", "x"], ["e"], name="equal"),
            n("Less", ["x", "zero"], ["l"], name="less"),
            n("IsNaN", ["x"], ["nan"], name="isnan"),
            n("IsInf", ["x"], ["inf"], name="isinf"),
            n("Where", ["g", "x", "zero"], ["w"], name="where"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info(t, TensorProto.BOOL, None) for t in ("ng", "e", "l", "nan", "inf")]
        + [helper.make_tensor_value_info("w", TensorProto.FLOAT, None)],
        {"zero": np.float32(0)},
    )
    nodes = _verdicts(model)
    want = {"greater": "elementwise", "not": "unary", "equal": "elementwise", "less": "elementwise"}
    want |= {"isnan": "unary", "isinf": "unary", "where": "select"}
    assert {k: v["layer"] for k, v in nodes.items()} == want, {k: v["reason"] for k, v in nodes.items()}
    assert all(v["agrees"] is True for v in nodes.values()), nodes
    for name in ("greater", "not"):  # the node alone, as `run --onnx` and the badge run it
        opened = opening.open_node(model, name)
        assert opened.node_model is not None


def test_an_embedding_opens_with_its_constant_table_and_agrees(tmp_path, capsys):
    table = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    model = _load(
        [n("Gather", ["table", "ids"], ["e"], name="embed", axis=0)],
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 5])],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
        {"table": table},
    )
    ids = np.int64([[1, 3, 9, 0, 3]])
    verdict = _verdicts(model, {"ids": ids})["embed"]
    assert verdict["layer"] == "gather" and verdict["agrees"] is True, verdict
    path, given, out = tmp_path / "e.onnx", tmp_path / "ids.npy", tmp_path / "y.npy"
    onnx.save(model, path)
    np.save(given, ids)
    assert main(["run", "--onnx", str(path), "--node", "embed", "--input", str(given), "--output", str(out)]) == 0
    capsys.readouterr()
    np.testing.assert_array_equal(np.load(out), table[ids])


def test_an_opset_6_prelu_reads_a_1d_slope_per_channel():
    """PyTorch's opset-6 export of PReLU(3): slope (3,) is one per channel (axis 1), not along the last axis."""
    slope = np.float32([0.1, -0.5, 2.0])
    model = _load(
        [n("PRelu", ["x", "slope"], ["y"], name="prelu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        {"slope": slope},
        opset=6,
    )
    opened = opening.open_node(model, "prelu")
    x = np.random.default_rng(1).uniform(-2, 2, (2, 3, 4, 5)).astype(np.float32)
    y = opened.to_onnx(opened.layer.reference(opened.to_layer(x), opened.params))
    np.testing.assert_allclose(y, np.where(x >= 0, x, slope.reshape(1, 3, 1, 1) * x), rtol=1e-6)


def test_a_division_by_signed_zero_is_infinity_compared_and_only_zero_by_zero_is_masked():
    model = _load(
        [n("Div", ["x", "z"], ["y"], name="div")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        {"z": np.float32([0, -0.0, 0, -0.0]).reshape(1, 1, 1, 4)},
    )
    verdict = _verdicts(model, {"x": np.float32([[[[1, 2, -3, 0]]]])})["div"]
    assert verdict["agrees"] is True and verdict["masked"]["cells"] == 1, verdict


def test_a_stricter_refusal_keeps_its_reason_on_the_cli(capsys):
    assert main(["run", "reduce", "--set", "axes=14", "--set", "keep_dims=false"]) == 2
    err = capsys.readouterr().err
    assert "keep_dims" in err and "the stage draws tensors of rank 2 or more" in err
