"""MatrixMultiply: products over the last two axes, each input read NONE, TRANSPOSE or VECTOR, batch axes broadcast;
the read map names A's row and B's column; ONNX's MatMul and Gemm."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate

LAYER = get_layer("matrix_multiply")
A = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)


def run(a, b, **raw):
    return evaluate("matrix_multiply", raw, {"a": a, "b": b}, run=False)


def test_the_three_ways_of_reading_an_input_by_hand():
    b = np.float32([[1, 0], [0, 1], [1, 1]]).reshape(1, 1, 3, 2)
    assert run(A, b).reference.reshape(2, 2).tolist() == [[4, 5], [10, 11]]
    bt = np.float32([[1, 0, 1], [0, 1, 1]]).reshape(1, 1, 2, 3)  # the same B, given transposed
    assert run(A, bt, op1="TRANSPOSE").reference.reshape(2, 2).tolist() == [[4, 5], [10, 11]]
    dots = run(A, np.ones((1, 1, 2, 3), np.float32), op0="VECTOR", op1="VECTOR").reference
    assert dots.shape == (1, 1, 2) and dots.ravel().tolist() == [6, 15]


def test_batch_axes_broadcast_and_the_rules_name_what_breaks():
    b = np.ones((2, 1, 3, 4), np.float32)
    assert run(np.ones((1, 3, 2, 3), np.float32), b).reference.shape == (2, 3, 2, 4)
    with pytest.raises(ValidationError) as e:
        run(A, np.ones((1, 1, 2, 2), np.float32))
    assert e.value.param == "input.b" and "A's rows have 3 values and B's columns 2" in e.value.rule
    with pytest.raises(ValidationError) as e:
        run(A, np.ones((1, 1, 3, 2), np.float32), op1="VECTOR")
    assert e.value.param == "op1" and "VECTOR on one input only" in e.value.rule


def test_the_read_map_is_as_row_and_bs_column():
    shapes = {"a": (1, 2, 2, 3), "b": (1, 1, 3, 2)}
    p = LAYER.resolve({}, shapes)
    cells = LAYER.reads(p, shapes, (0, 1, 1, 0))
    assert cells == {"a": [(0, 1, 1, 0), (0, 1, 1, 1), (0, 1, 1, 2)], "b": [(0, 0, 0, 0), (0, 0, 1, 0), (0, 0, 2, 0)]}
    ev = run(A, np.float32([[1, 0], [0, 1], [1, 1]]).reshape(1, 1, 3, 2))
    assert LAYER.cell(ev.inputs, ev.params, (0, 0, 1, 1), ev.reference).line == "4·0 + 5·1 + 6·1 = **11**"


def test_fp16_rounds_both_inputs_and_the_output():
    big = np.full((1, 1, 1, 2), 300.0, np.float32)
    ev = run(big, big, op0="VECTOR", op1="VECTOR", precision="FP16")
    assert ev.truth.ravel().tolist() == [180000.0] and np.isinf(ev.reference).all()  # past 65504: inf in FP16


def _model(op, a_shape, b_shape, **attrs):
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    inputs = [h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(s)) for n, s in (("A", a_shape), ("B", b_shape))]
    node = h.make_node(op, ["A", "B"], ["Y"], name="mm", **attrs)
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(model).SerializeToString()  # the output's shape, as the checker wants


def test_onnx_matmul_and_gemm_open_as_batched_products_and_agree_with_onnxruntime():
    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    opened = opening.open_node(reading.load_model(_model("MatMul", (3, 2, 4), (4, 5))))
    assert opened.shapes == {"a": (1, 3, 2, 4), "b": (1, 1, 4, 5)}  # 1s before: batch axes
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype(np.float32)
    ev = evaluate("matrix_multiply", opened.raw, opened.to_layer(x), run=False)
    assert ev.output.shape == (1, 3, 2, 5) and second_opinions(ev, opened)["onnxruntime"]["agrees"] is True
    gemm = opening.open_node(reading.load_model(_model("Gemm", (3, 2), (5, 3), transA=1, transB=1)))
    assert gemm.raw == {"op0": "TRANSPOSE", "op1": "TRANSPOSE"}
    scaled = opening.open_node(reading.load_model(_model("Gemm", (2, 3), (3, 5), alpha=2.0)))
    assert [(s.name, p["operation"]) for s, p, _ in scaled.then] == [("elementwise", "PROD")]  # α: a step after


@pytest.mark.parametrize(
    "a_shape,b_shape,raw,lifted,out",
    [
        ((2, 3), (3,), "NONE", {"a": (1, 1, 2, 3), "b": (1, 1, 3, 1)}, (2,)),  # B a column
        ((4,), (4, 5), "NONE", {"a": (1, 1, 1, 4), "b": (1, 1, 4, 5)}, (5,)),  # A a row
        ((4,), (2, 4, 5), "NONE", {"a": (1, 1, 1, 4), "b": (1, 2, 4, 5)}, (2, 5)),  # … against a batch of B
        ((2, 3, 4), (4,), "NONE", {"a": (1, 2, 3, 4), "b": (1, 1, 4, 1)}, (2, 3)),
        ((4,), (4,), "VECTOR", {"a": (1, 1, 1, 4), "b": (1, 1, 1, 4)}, ()),  # a dot product: VECTOR · VECTOR
    ],
)
def test_onnx_matmul_of_a_1d_input_opens_as_numpys_matmul_reads_it(a_shape, b_shape, raw, lifted, out):
    """NumPy's matmul: a 1-D A is a row (a 1 before it), a 1-D B a column (a 1 after), that axis gone from the output;
    two 1-D inputs a dot product, as TensorRT's ONNX parser builds it (VECTOR · VECTOR)."""
    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    opened = opening.open_node(reading.load_model(_model("MatMul", a_shape, b_shape)))
    assert opened.raw == {"op0": raw, "op1": raw} and opened.shapes == lifted
    x = np.random.default_rng(1).standard_normal(a_shape).astype(np.float32)
    ev = evaluate("matrix_multiply", opened.raw, opened.to_layer(x), run=False)
    b = ev.inputs["b"].reshape(b_shape)
    assert np.allclose(opened.to_onnx(ev.reference), np.matmul(x, b), atol=1e-5)
    assert opened.to_onnx(ev.reference).shape == out
    ort = second_opinions(ev, opened)["onnxruntime"]
    assert ort["status"] == "ran" and ort["agrees"] is True, ort


def test_a_preset_link_sets_each_inputs_shape_and_the_page_draws_its_product():
    from apptest import open_page, stage_data

    at = open_page("matrix_multiply", preset="transpose_a")
    answer = stage_data(at)["answer"]
    figures = {f["which"]: f["tensor"]["shape"] for f in answer["figures"]}
    assert figures == {"input": [1, 1, 2, 3], "input.b": [1, 1, 2, 3], "output": [1, 1, 3, 3]}
    assert answer["example"]["name"] == "transpose_a" and answer["example"]["matches"]
    assert at.query_params["matrix_multiply.input.b.H"] == "2" and at.query_params["matrix_multiply.op0"] == "TRANSPOSE"


def test_a_matmul_of_weights_opens_with_them_as_the_constant_input_b():
    from onnx_cases import node_model, weights

    from playground.onnx import opening, reading

    w = weights(3, 4)
    opened = opening.open_node(reading.load_model(node_model("MatMul", (2, 3), {"b": w}).SerializeToString()))
    assert opened.layer is LAYER and set(opened.constants) == {"b"} and opened.shapes["b"] == (1, 1, 3, 4)
    xs = opened.to_layer(np.ones((2, 3), np.float32))
    assert np.array_equal(xs["b"].reshape(3, 4), w)


def _gemm(x_shape, b, c=None, **attrs):
    from onnx_cases import node_model

    from playground.onnx import opening, reading

    consts = {"w": b} if c is None else {"w": b, "c": c}
    model = node_model("Gemm", x_shape, consts, opset=13, **attrs)
    return model, opening.open_node(reading.load_model(model.SerializeToString()))


@pytest.mark.parametrize(
    "c_shape, attrs",
    [((4,), {"transB": 1}), ((3, 1), {"alpha": 0.5, "beta": -2.0, "transB": 1}), ((), {"alpha": 2.0, "transB": 1})],
)
def test_an_onnx_gemm_with_alpha_and_c_opens_as_the_parsers_steps_and_agrees(c_shape, attrs):
    """α and C as TensorRT's parser builds them: MatrixMultiply, ElementWise PROD by α, ElementWise SUM with β·C; the
    node's output is after the last step (run --onnx's and ONNX Runtime's opinion)."""
    import onnxruntime as ort

    from playground.onnx.opinions import onnxruntime_opinion

    rng = np.random.default_rng(1)
    w, c = rng.uniform(-1, 1, (4, 6)).astype(np.float32), rng.uniform(-1, 1, c_shape).astype(np.float32)
    model, opened = _gemm((3, 6), w, c, **attrs)
    ops = [p["operation"] for _, p, _ in opened.then]
    assert ops == (["PROD"] if attrs.get("alpha", 1) != 1 else []) + ["SUM"] and "then" in opened.describe()
    x = rng.uniform(-4, 4, (3, 6)).astype(np.float32)
    ev = evaluate("matrix_multiply", opened.raw, opened.to_layer(x), run=False)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = opened.to_onnx(opened.finish(ev.output))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(opened.to_onnx(ev.output), want, atol=1e-3)  # the steps matter: the layer alone differs
    assert onnxruntime_opinion(ev, opened)["agrees"]


def test_an_onnx_gemm_whose_c_the_model_computes_is_refused_naming_c():
    from onnx_cases import node_model

    from playground.base.errors import ValidationError
    from playground.onnx import opening, reading

    model = node_model("Gemm", (3, 6), {"w": np.ones((6, 4), np.float32)}, inputs=["w", "x"], opset=13)
    with pytest.raises(ValidationError) as e:
        opening.open_node(reading.load_model(model.SerializeToString()))
    assert e.value.param == "C" and "constant" in e.value.rule


@pytest.mark.parametrize("op", ["op0", "op1"])
def test_a_pages_transpose_brings_its_operand_along_and_the_cli_takes_its_inputs_as_given(op):
    """On the page's example (A 2 × 3, B 3 × 2), TRANSPOSE of either operand is valid: that operand is stored
    transposed, so the product is NONE's and the figure shows the layout TRANSPOSE reads; a message says so. Without
    `fit` (the CLI, a model's node) the same inputs are refused, naming input.b."""
    feed = LAYER.feed()
    none = evaluate("matrix_multiply", {}, feed, run=False, build=False)
    ev = evaluate("matrix_multiply", {op: "TRANSPOSE"}, feed, run=False, build=False, fit=True)
    name = "a" if op == "op0" else "b"
    assert ev.inputs[name].shape == feed[name].shape[:2] + feed[name].shape[:1:-1]
    assert np.array_equal(ev.inputs[name], np.swapaxes(feed[name], -1, -2))
    assert np.array_equal(ev.output, none.output)
    assert any(m.startswith("Stored transposed for TRANSPOSE") and name.upper() in m for m in ev.messages)
    with pytest.raises(ValidationError) as e:
        evaluate("matrix_multiply", {op: "TRANSPOSE"}, feed, run=False, build=False)
    assert e.value.param == "input.b"
    fitted = LAYER.fitted({op: "TRANSPOSE"}, {n: a.shape for n, a in feed.items()})
    assert fitted is not None and fitted[1][op] == "TRANSPOSE"  # what a link's check asks (ui.links)
