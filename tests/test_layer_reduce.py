"""Reduce: SUM, PROD, MAX, MIN and AVG over the axes a bitmask names, shown as the axes' names; keep_dims; the cells
an output gathers; ONNX's Reduce* with axes as attribute or input."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.serve import protocol

LAYER = get_layer("reduce")
X = np.arange(1, 13, dtype=np.float32).reshape(1, 2, 2, 3)


def run(**raw):
    return evaluate("reduce", raw, X, run=False)


def test_each_operation_over_c_and_w_by_hand():
    want = {
        "SUM": [1 + 2 + 3 + 7 + 8 + 9, 4 + 5 + 6 + 10 + 11 + 12],
        "PROD": [1 * 2 * 3 * 7 * 8 * 9, 4 * 5 * 6 * 10 * 11 * 12],
        "MAX": [9, 12],
        "MIN": [1, 4],
        "AVG": [5, 8],
    }
    for op, values in want.items():
        y = run(operation=op, axes=2 | 8).reference
        assert y.shape == (1, 1, 2, 1) and y.ravel().tolist() == values, op


def test_the_bitmask_is_offered_by_the_axes_names_and_its_rules_name_it():
    control = next(c for c in protocol.controls(LAYER, LAYER.defaults(), (1, 2, 2, 3)) if c["name"] == "axes")
    assert (
        control["offered"][:4] == [1, 2, 3, 4]
        and dict(zip(control["offered"], control["names"]))[11] == "N, C, W (axes = 11)"
    )
    with pytest.raises(ValidationError, match="names axis 4, but the input has rank 4"):
        run(axes=16)
    with pytest.raises(ValidationError) as e:
        run(axes=14, keep_dims=False)
    assert e.value.param == "keep_dims" and e.value.stricter  # TensorRT builds it: the stage's limit, said so
    assert run(axes=12, keep_dims=False).reference.shape == (1, 2)


def test_an_output_cell_gathers_its_line_and_says_so():
    p = LAYER.resolve({"operation": "MAX", "axes": 4, "keep_dims": False}, X.shape)
    assert LAYER.reads(p, X.shape, (0, 1, 2)) == [(0, 1, 0, 2), (0, 1, 1, 2)]
    assert LAYER.cell(X, p, (0, 1, 2), LAYER.reference(X, p)).line == "max(9, 12) = **12**"


def test_onnx_reduce_nodes_open_with_axes_from_attribute_or_input():
    from onnx_cases import node_model

    from playground.onnx import opening, reading

    def opened(model):
        return opening.open_node(reading.load_model(model.SerializeToString()))

    old = opened(node_model("ReduceMax", (2, 3, 4), axes=[-1], keepdims=0, opset=13))
    assert old.raw == {"operation": "MAX", "axes": 4, "keep_dims": False} and old.shape == (2, 3, 4, 1)
    new = opened(node_model("ReduceSum", (2, 3, 4), {"axes": np.int64([0, 2])}, opset=13))
    assert new.raw == {"operation": "SUM", "axes": 5, "keep_dims": True}
    every = opened(node_model("ReduceMean", (2, 3), opset=13))
    assert every.raw["axes"] == 3  # no axes: all of them (the lifted 1s stay)
    # noop_with_empty_axes with no axes: ONNX returns the input, TensorRT's parser an identity; with axes, it reduces
    noop = opened(node_model("ReduceSum", (2, 3), opset=13, noop_with_empty_axes=1))
    assert noop.layer.name == "shuffle" and noop.raw == {} and "noop_with_empty_axes" in noop.notes[-1]
    some = opened(node_model("ReduceSum", (2, 3), {"axes": np.int64([1])}, opset=13, noop_with_empty_axes=1))
    assert some.layer.name == "reduce" and some.raw["axes"] == 2
    with pytest.raises(ValidationError) as e:  # axes the model computes: not known when it is built
        opened(_axes_computed())
    assert e.value.param == "axes" and "constant" in e.value.rule


def _axes_computed():
    import onnx
    from onnx import helper

    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    axes = helper.make_tensor_value_info("axes", onnx.TensorProto.INT64, [1])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["a", "b"])
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="r", noop_with_empty_axes=1)
    model = helper.make_model(
        helper.make_graph([node], "g", [x, axes], [y]), opset_imports=[helper.make_opsetid("", 13)]
    )
    return model


def test_a_page_of_a_lower_rank_output_draws_and_picks_its_cells():
    from apptest import open_page, stage_data

    answer = stage_data(open_page("reduce", preset="max_c"))["answer"]
    assert {f["which"]: f["tensor"]["shape"] for f in answer["figures"]}["output"] == [1, 2, 3]
    assert answer["cells"]["axes"] == ["c", "h", "w"] and answer["cells"]["lines"]["0,1,2"] == "max(6, 12) = **12**"
