"""Concatenation: 2 to 4 inputs joined along one axis. Only the inputs a configuration uses reach the network, the
stage, the export and the ONNX graph; the rest stay in the sidebar, unused."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate

LAYER = get_layer("concatenation")
A = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)


def test_every_other_axis_must_be_equal_and_the_rule_names_the_input():
    ev = evaluate("concatenation", {"count": 3, "axis": 2}, {"a": A, "b": A[:, :, :1], "c": A}, run=False)
    assert ev.output.shape == (1, 1, 5, 3) and ev.output[0, 0, :, 0].tolist() == [1, 4, 1, 1, 4]
    with pytest.raises(ValidationError) as e:
        evaluate("concatenation", {"count": 3, "axis": 2}, {"a": A, "b": A, "c": A[..., :2]}, run=False)
    assert e.value.param == "input.c" and "differs from A (1, 1, 2, 3) along W (2 against 3)" in e.value.rule


def test_only_the_inputs_in_use_are_evaluated_built_and_drawn():
    from playground.serve import server

    feed = {n: np.full((1, 1, 2, 3), v, np.float32) for n, v in zip("abcd", (1, 2, 3, 4))}
    ev = evaluate("concatenation", {"count": 2}, feed, run=False)
    assert list(ev.inputs) == ["a", "b"] and ev.output.shape == (1, 2, 2, 3)
    token = server.SEATS.open("concatenation", feed)
    seat, message = server.SEATS.take(token), {"params": {"concatenation.count": "3"}}
    answer = server.answer(seat, message)["answer"]
    assert [f["which"] for f in answer["figures"]][:4] == ["input", "input.b", "input.c", "output"]
    assert list(answer["cells"]["reads"]) == ["0,0,0,0"]  # the picked cell's window: the others follow the answer
    cells = server.answer(seat, {**message, "finish": True})["finish"]["cells"]
    assert cells["also"]["input.c"]["0,2,1,2"] == [[0, 0, 1, 2]] and cells["reads"]["0,2,1,2"] == []
    assert cells["lines"]["0,2,1,2"] == "C[0, 0, 1, 2] = **3**"


def test_the_export_and_the_onnx_graph_have_the_inputs_in_use():
    from playground.network.export import export_script
    from playground.onnx import opening, reading, writing

    script = export_script("concatenation", {"count": 3, "axis": 3})
    assert "INPUT_NAMES, OUTPUT_NAME = {'a': 'inputT0', 'b': 'inputT1', 'c': 'inputT2'}" in script
    p = LAYER.resolve({"count": 3, "axis": 3}, (1, 1, 2, 3))
    model = writing.export_model(LAYER, p, (1, 1, 2, 3))
    assert [i.name for i in model.graph.input] == ["a", "b", "c"] and model.graph.node[0].op_type == "Concat"
    back = opening.open_node(reading.load_model(model.SerializeToString()))
    assert back.layer is LAYER and (back.params["count"], back.params["axis"]) == (3, 3) and len(back.shapes) == 3


def test_an_onnx_concat_of_three_opens_with_its_axis_counted_from_the_end_and_agrees():
    onnx = pytest.importorskip("onnx")
    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    h = onnx.helper
    shapes = {"X": (2, 3), "Y": (2, 1), "Z": (2, 2)}
    inputs = [h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(s)) for n, s in shapes.items()]
    node = h.make_node("Concat", list(shapes), ["O"], name="cat", axis=-1)
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("O", onnx.TensorProto.FLOAT, [2, 6])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    opened = opening.open_node(reading.load_model(model))
    assert opened.raw == {"count": 3, "axis": 1} and opened.shapes == {
        "a": (2, 3, 1, 1),
        "b": (2, 1, 1, 1),
        "c": (2, 2, 1, 1),
    }
    ev = evaluate("concatenation", opened.raw, opened.to_layer(np.ones((2, 3), np.float32)), run=False)
    assert ev.output.shape == (2, 6, 1, 1) and second_opinions(ev, opened)["onnxruntime"]["agrees"] is True


def test_the_sidebar_offers_every_input_and_a_link_sets_the_third():
    from apptest import open_page, stage_data

    at = open_page(
        "concatenation", **{"concatenation.count": "3", "concatenation.input.c.W": "5", "concatenation.axis": "3"}
    )
    figures = {f["which"]: f["tensor"]["shape"] for f in stage_data(at)["answer"]["figures"]}
    assert figures["input.c"] == [1, 1, 2, 5] and figures["output"] == [1, 1, 2, 11]
    assert "concatenation.input.d.kind" in at.session_state
