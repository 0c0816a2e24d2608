"""Select (ONNX Where): the condition a float input whose nonzero cells are true, cast to BOOL in the network and
touched by no precision; the three inputs broadcast as ElementWise's do."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate

LAYER = get_layer("select")
THEN = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
ELSE = -THEN


def run(condition, then=THEN, other=ELSE, **raw):
    return evaluate("select", raw, {"condition": np.float32(condition), "then": then, "else": other}, run=False)


def test_nonzero_is_true_and_zero_false():
    ev = run(np.float32([[1, 0, -2], [0, 0.5, 0]]).reshape(1, 1, 2, 3))
    assert ev.output.ravel().tolist() == [1, -2, 3, -4, 5, -6]


def test_a_row_condition_and_a_constant_else_broadcast():
    ev = run(np.float32([1, 0, 1]).reshape(1, 1, 1, 3), other=np.zeros((1, 1, 1, 1), np.float32))
    assert ev.output.ravel().tolist() == [1, 0, 3, 4, 0, 6]
    c = LAYER.cell(ev.inputs, ev.params, (0, 0, 1, 1), ev.reference)
    assert "0: false" in c.notes[0] and "broadcasts" in c.notes[1]


def test_shapes_that_do_not_broadcast_are_refused_naming_the_input():
    with pytest.raises(ValidationError) as e:
        run(np.ones((1, 1, 2, 3)), other=np.zeros((1, 1, 2, 2), np.float32))
    assert e.value.param == "input.else" and "axis W is 2" in e.value.rule


@pytest.mark.parametrize("precision", ["INT8", "FP16"])
def test_no_precision_touches_the_condition(precision):
    """0.001 would quantize to 0 with the data's scale (amax 6 / 127): the condition keeps it true."""
    ev = run(np.full((1, 1, 2, 3), 0.001, np.float32), precision=precision, quantize_scale=0)
    assert ev.output.ravel().tolist() == pytest.approx([1, 2, 3, 4, 5, 6], abs=0.05)


def test_the_engine_builds_it():
    from playground.trt import engine as eng
    from playground.trt.backend import detect

    backend = detect("tensorrt_rtx")
    if not backend.can_build:
        pytest.skip("TensorRT for RTX cannot build here")
    shapes = {"condition": (1, 1, 1, 3), "then": (1, 1, 2, 3), "else": (1, 1, 1, 1)}
    report = eng.build_engine(backend, LAYER, LAYER.resolve({}, shapes), shapes)
    assert report.status == "built" and tuple(report.output_shape) == (1, 1, 2, 3), report.error


def _leaky_by_where():
    """x > 0 ? x : 0.1·x (a leaky ReLU by Where): the Where node reads the Greater's BOOL tensor."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["c"], name="gt"),
        helper.make_node("Mul", ["x", "tenth"], ["s"], name="mul"),
        helper.make_node("Where", ["c", "x", "s"], ["y"], name="where"),
    ]
    inits = [numpy_helper.from_array(np.float32(0), "zero"), numpy_helper.from_array(np.float32(0.1), "tenth")]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 4])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    return m


def test_an_onnx_where_opens_in_a_model_and_agrees_with_onnxruntime():
    from playground.model import whole
    from playground.onnx import reading

    model = reading.load_model(_leaky_by_where().SerializeToString())
    answer = whole.analyze(model, "where.onnx", engine=False)
    where = next(n for n in answer["nodes"] if n["name"] == "where")
    assert where["layer"] == "select" and where["agrees"] is True, where


def test_run_onnx_of_a_where_node_feeds_its_bool_condition_as_float_and_onnxruntime_agrees(tmp_path, capsys):
    """The node alone as a model: its BOOL condition comes in as float32 and is cast where Where reads it."""
    import json

    from playground import cli

    path = tmp_path / "where.onnx"
    path.write_bytes(_leaky_by_where().SerializeToString())
    np.save(tmp_path / "x.npy", np.linspace(-3, 3, 24, dtype=np.float32).reshape(1, 2, 3, 4))
    assert cli.main(["run", "--onnx", str(path), "--node", "where", "--input", str(tmp_path / "x.npy"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["onnxruntime"]["status"] == "ran" and out["onnxruntime"]["agrees"] is True, out["onnxruntime"]
