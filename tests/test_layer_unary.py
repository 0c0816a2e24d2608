"""Unary: every UnaryOperation, declared from TensorRT's enum; BOOL in and out where TensorRT needs it; the domain
each function leaves undefined; ONNX's one-input math ops."""

import numpy as np

from playground.layers import get_layer
from playground.layers.unary import ONNX_OPS, OPERATIONS
from playground.network.core import evaluate

LAYER = get_layer("unary")
X = np.float32([-2, -1, -0.5, 0, 0.5, 1, 2.5, np.inf, np.nan]).reshape(1, 1, 3, 3)


def run(op, x=X, **raw):
    return evaluate("unary", {"operation": op, **raw}, x, run=False).reference.ravel().tolist()


def test_every_operation_of_tensorrts_enum_has_a_function_and_an_onnx_op():
    import tensorrt_rtx as trt

    assert set(OPERATIONS) == set(trt.UnaryOperation.__members__) == set(ONNX_OPS)


def test_functions_by_hand_including_bool_results_and_round_half_to_even():
    assert run("ROUND")[:7] == [-2, -1, -0.0, 0, 0, 1, 2]  # −0.5 → −0, 0.5 → 0, 2.5 → 2
    assert run("NOT")[:7] == [0, 0, 0, 1, 0, 0, 0] and run("ISINF")[7:8] == [1] and run("ISNAN")[8:] == [1]
    assert run("SIGN")[:6] == [-1, -1, -1, 0, 1, 1] and run("RECIP")[:3] == [-0.5, -1, -2]


def test_undefined_cells_are_exactly_the_functions_domain():
    x = np.float32([-1, 0, 0.5, 1, 2, 3, -3, 4, 0.25]).reshape(1, 1, 3, 3)
    p = lambda op: LAYER.resolve({"operation": op}, x.shape)  # noqa: E731
    assert LAYER.undefined(x, p("LOG")).ravel().tolist() == [True, True] + [False] * 4 + [True, False, False]
    assert LAYER.undefined(x, p("ACOSH")).ravel().tolist() == [True, True, True, False, False, False, True, False, True]
    assert not LAYER.undefined(x, p("EXP")).any()


def test_fp16_rounds_the_input_before_the_function():
    x = np.full((1, 1, 1, 1), 2049.0, np.float32)  # FP16 holds 2048 or 2050 there: 2048, to even
    assert run("SQRT", x, precision="FP16") == [np.float32(np.float16(np.sqrt(2048.0)))]


def test_onnx_math_nodes_open_and_agree_with_onnxruntime():
    from onnx_cases import node_model

    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    for op, name in (("Sign", "SIGN"), ("Round", "ROUND"), ("Erf", "ERF")):
        opened = opening.open_node(reading.load_model(node_model(op, (2, 3)).SerializeToString()))
        assert opened.raw == {"operation": name}
        ev = evaluate("unary", opened.raw, opened.to_layer(np.float32([[0.5, 1.5, np.nan], [-2.5, 0, 3]])), run=False)
        assert second_opinions(ev, opened)["onnxruntime"]["agrees"] is True, op


def test_the_exports_of_the_bool_functions_cast_and_agree():
    from playground.onnx.opinions import second_opinions

    for op in ("NOT", "ISINF", "ISNAN"):
        o = second_opinions(evaluate("unary", {"operation": op}, X, run=False))
        assert o["onnxruntime"]["agrees"] is True, (op, o["onnxruntime"])
