"""ElementWise, the first layer of two inputs: its operations, TensorRT's broadcasting, and every input carried
through the feed dict, the engine, the cache key, the stage, the sidebar and the link."""

import json

import numpy as np
import pytest

from playground.base import precision as P
from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.layers.elementwise import OPERATIONS
from playground.network import presets
from playground.network.core import evaluate
from playground.trt import engine as eng
from playground.trt.backend import detect

LAYER = get_layer("elementwise")
A = np.float32([[-2, 0, 3], [4, -5, 6]]).reshape(1, 1, 2, 3)
B = np.float32([2, -1, 3]).reshape(1, 1, 1, 3)


def run(op, a=A, b=B, **raw):
    return evaluate("elementwise", {"operation": op, **raw}, {"a": a, "b": b}, run=False)


@pytest.mark.parametrize(
    "op, want",
    [
        ("SUM", [[0, -1, 6], [6, -6, 9]]),
        ("PROD", [[-4, 0, 9], [8, 5, 18]]),
        ("MAX", [[2, 0, 3], [4, -1, 6]]),
        ("MIN", [[-2, -1, 3], [2, -5, 3]]),
        ("SUB", [[-4, 1, 0], [2, -4, 3]]),
        ("DIV", [[-1, -0.0, 1], [2, 5, 2]]),
        ("POW", [[4, np.inf, 27], [16, -0.2, 216]]),
        ("FLOOR_DIV", [[-1, -0.0, 1], [2, 5, 2]]),
        ("AND", [[1, 0, 1], [1, 1, 1]]),
        ("OR", [[1, 1, 1], [1, 1, 1]]),
        ("XOR", [[0, 1, 0], [0, 0, 0]]),
        ("EQUAL", [[0, 0, 1], [0, 0, 0]]),
        ("GREATER", [[0, 1, 0], [1, 0, 1]]),
        ("LESS", [[1, 0, 0], [0, 1, 0]]),
    ],
)
def test_every_operation_by_hand_with_b_broadcast_down_h(op, want):
    """B (1, 1, 1, 3) is read for both rows of A; 0 to the power −1 is inf (its cell is undefined by rule)."""
    ev = run(op)
    np.testing.assert_allclose(ev.reference, np.float32(want).reshape(1, 1, 2, 3), rtol=1e-6)
    assert ev.reference.dtype == np.float32


def test_every_operation_is_declared_once_from_tensorrts_enum():
    import tensorrt_rtx as trt

    assert set(OPERATIONS) == set(trt.ElementWiseOperation.__members__)


def test_each_input_has_its_shape_and_a_shape_that_does_not_broadcast_names_input_b_and_the_axis():
    assert run("SUM", a=np.ones((1, 3, 1, 4), np.float32), b=np.ones((1, 1, 2, 1), np.float32)).reference.shape == (
        1,
        3,
        2,
        4,
    )  # each broadcasts along the other's axes
    with pytest.raises(ValidationError) as e:
        run("SUM", b=np.ones((1, 1, 2, 2), np.float32))
    assert e.value.param == "input.b" and "axis W is 2 against 3" in str(e.value)
    with pytest.raises(ValidationError, match="not an input of this layer; it has a, b"):
        evaluate("elementwise", {}, {"a": A, "c": B}, run=False)


def test_a_missing_input_is_its_example_and_one_input_layers_take_an_array():
    ev = evaluate("elementwise", {}, {"a": np.zeros((1, 1, 3, 3), np.float32)}, run=False)
    assert np.array_equal(ev.reference, LAYER.example_of("b"))  # 0 + B's example
    assert list(ev.inputs) == ["a", "b"] and ev.input is ev.inputs["a"]
    assert list(evaluate("prelu", {}, run=False).inputs) == ["x"]


def test_undefined_cells_by_rule_only():
    p = LAYER.resolve({"operation": "DIV"}, {"a": A.shape, "b": B.shape})
    a = np.float32([[0, 1, -2], [3, 0, 5]]).reshape(A.shape)
    zeros = np.float32([0, -0.0, 0]).reshape(1, 1, 1, 3)
    assert LAYER.undefined({"a": a, "b": zeros}, p).tolist() == [[[[True, False, False], [False, True, False]]]]
    y = LAYER.forward({"a": a, "b": zeros}, p)  # x / ±0 of x ≠ 0: IEEE's ±inf, compared as any value
    assert y.ravel()[[1, 2, 3, 5]].tolist() == [-np.inf, -np.inf, np.inf, np.inf]
    pw = LAYER.resolve({"operation": "POW"}, {"a": A.shape, "b": B.shape})
    half = np.float32([0.5, 2, 2]).reshape(1, 1, 1, 3)
    assert LAYER.undefined({"a": A, "b": half}, pw).tolist() == [[[[True, False, False], [False, False, False]]]]
    assert not LAYER.undefined(
        {"a": A, "b": B}, LAYER.resolve({"operation": "SUM"}, {"a": A.shape, "b": B.shape})
    ).any()


def test_the_read_map_names_the_cell_of_each_input_and_the_line_its_arithmetic():
    p = LAYER.resolve({"operation": "SUB"}, {"a": A.shape, "b": B.shape})
    assert LAYER.reads(p, {"a": A.shape, "b": B.shape}, (0, 0, 1, 2)) == {"a": [(0, 0, 1, 2)], "b": [(0, 0, 0, 2)]}
    ev = run("SUB")
    cell = LAYER.cell(ev.inputs, ev.params, (0, 0, 1, 2), ev.reference)
    assert cell.line == "6 − 3 = **3**" and "broadcasts" in cell.notes[-1]


def test_precisions_quantize_and_round_each_input():
    a = np.float32([[0.1, 1000.3]]).reshape(1, 1, 1, 2)
    b = np.float32([[0.2, 70000.0]]).reshape(1, 1, 1, 2)
    fp16 = run("SUM", a, b, precision="FP16").reference
    assert np.isinf(fp16[0, 0, 0, 1])  # B's 70000 is past FP16's 65504: its cast is inf
    assert fp16[0, 0, 0, 0] == np.float16(np.float16(0.1) + np.float16(0.2))
    i8 = run("SUM", a, b, precision="INT8", quantize_scale=0.1).reference
    assert i8.ravel().tolist() == pytest.approx([0.1 + 0.2, 12.7 + 12.7])  # each input through its own Q/DQ pair
    scaled = P.with_data_scale(
        LAYER.resolve({"precision": "INT8", "quantize_scale": 0}, {"a": a.shape, "b": b.shape}), {"a": a, "b": b}
    )
    assert scaled["quantize_scale"] == pytest.approx(70000 / 127)  # from the data: the amax over both inputs


def test_the_cache_key_holds_every_inputs_shape():
    from playground.trt.cache import cache_key

    backend, settings, p = detect(), eng.BuildSettings(), LAYER.defaults()
    keys = {
        cache_key(eng.Network.of_layer(LAYER, p, {"a": (1, 1, 3, 3), "b": b}).describe(), backend, settings)
        for b in ((1, 1, 3, 3), (1, 1, 1, 3), (1, 1, 3, 1))
    }
    assert len(keys) == 3


needs_rtx = pytest.mark.skipif(not detect("tensorrt_rtx").can_build, reason="TensorRT for RTX cannot build here")


@needs_rtx
@pytest.mark.parametrize("precision", ["FP32", "FP16", "INT8"])
def test_tensorrt_builds_every_operation_with_one_network_input_per_input(precision):
    backend = detect("tensorrt_rtx")
    for op in OPERATIONS:
        p = LAYER.resolve({"operation": op, "precision": precision}, {"a": (1, 2, 3, 4), "b": (1, 1, 3, 1)})
        report = eng.build_engine(backend, LAYER, p, {"a": (1, 2, 3, 4), "b": (1, 1, 3, 1)})
        assert report.status == "built" and report.output_shape == [1, 2, 3, 4], (op, precision, report.error)


def test_the_examples_match_their_hand_derived_tables():
    for e in LAYER.examples:
        ev = evaluate("elementwise", e.params, presets.input_for(e), run=False)
        assert presets.compare(e, ev.output).matches, e.name
        assert presets.matching("elementwise", ev.params, ev.inputs) == [e]


def test_the_stage_draws_both_inputs_and_outlines_the_cell_b_gives():
    from playground.serve import server

    token = server.SEATS.open("elementwise", {"a": A, "b": B})
    answer = server.answer(
        server.SEATS.take(token), {"params": {"elementwise.operation": "PROD"}, "pick": [0, 0, 1, 2]}
    )
    a = answer["answer"]
    assert [(f["which"], f["title"], f["tensor"]["shape"]) for f in a["figures"][:2]] == [
        ("input", "Input A", [1, 1, 2, 3]),
        ("input.b", "Input B", [1, 1, 1, 3]),
    ]
    assert a["shapes"] == "A (1, 1, 2, 3) · B (1, 1, 1, 3) → Output (1, 1, 2, 3)"
    cells = a["cells"]
    assert cells["reads"]["0,0,1,2"] == [[0, 0, 1, 2]] and cells["also"]["input.b"]["0,0,1,2"] == [[0, 0, 0, 2]]
    assert cells["lines"]["0,0,1,2"] == "6 × 3 = **18**"
    refused = server.answer(server.SEATS.take(server.SEATS.open("elementwise", {"a": A, "b": A[..., :2]})), {})
    assert refused["problem"]["param"] == "input.b"


def test_the_sidebar_has_controls_per_input_and_a_link_sets_each():
    from apptest import open_page, stage_data, text

    at = open_page(
        "elementwise",
        **{
            "elementwise.input.b.H": "1",
            "elementwise.input.b.kind": "constant",
            "elementwise.input.b.value": "2",
            "elementwise.operation": "PROD",
        },
    )
    figures = {f["which"]: f["tensor"]["shape"] for f in stage_data(at)["answer"]["figures"]}
    assert figures["input"] == [1, 1, 3, 3] and figures["input.b"] == [1, 1, 1, 3]
    assert at.session_state["elementwise.input.a.kind"] == "spec"
    bad = open_page("elementwise", **{"elementwise.input.b.H": "2"})  # 2 against A's 3: dropped, and said
    assert "elementwise.input.b.H" not in bad.query_params
    assert "URL parameter elementwise.input.b.H" in text(bad)


def test_one_input_links_keep_their_keys():
    from playground.ui.links import fields

    assert "prelu.input.kind" in fields(get_layer("prelu")) and "prelu.input.x.kind" not in fields(get_layer("prelu"))
    assert {"elementwise.input.a.N", "elementwise.input.b.W"} <= set(fields(LAYER))


def _cli(capsys, *args):
    from playground.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_takes_inputs_in_declared_order_or_by_name(tmp_path, capsys):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, A), np.save(b, B)
    code, out, _ = _cli(
        capsys, "run", "elementwise", "--input", str(a), "--input", str(b), "--set", "operation=SUB", "--json"
    )
    d = json.loads(out)
    assert (
        code == 0 and d["input_shapes"] == {"a": [1, 1, 2, 3], "b": [1, 1, 1, 3]} and d["output_shape"] == [1, 1, 2, 3]
    )
    code, out, _ = _cli(capsys, "run", "elementwise", "--input", f"b={b}", "--input", str(tmp_path / "a.npy"))
    assert code == 0 and "inputH1 :\n(1, 1, 1, 3)" in out and "inputH0 :\n(1, 1, 2, 3)" in out
    code, _, err = _cli(capsys, "run", "elementwise", "--input", str(a), "--input", str(b), "--input", str(b))
    assert code == 2 and "elementwise.--input: elementwise has 2 input(s) (a, b); 3 files given" in err
    code, _, err = _cli(capsys, "run", "elementwise", "--input", f"a={a}", "--input", f"a={b}")
    assert code == 2 and "input a is given twice" in err
    code, _, err = _cli(capsys, "run", "prelu", "--input", str(a), "--input", str(a))
    assert code == 2 and "prelu has 1 input(s) (x)" in err


def _binary_model(op, a_shape, b_shape, b_const=None, a_const=None):
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    inputs = [
        h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(s))
        for n, s, c in (("A", a_shape, a_const), ("B", b_shape, b_const))
        if c is None
    ]
    inits = [
        onnx.numpy_helper.from_array(np.asarray(c, np.float32), n)
        for n, c in (("A", a_const), ("B", b_const))
        if c is not None
    ]
    node = h.make_node(op, ["A", "B"], ["Y"], name="binary")
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


def test_an_onnx_node_of_two_tensors_of_different_ranks_opens_as_onnx_broadcasts_and_agrees():
    from playground.onnx import opening, reading

    opened = opening.open_node(reading.load_model(_binary_model("Sub", (2, 3), (3,))))
    assert opened.layer is LAYER and opened.raw == {"operation": "SUB"}
    assert opened.shapes == {"a": (2, 3, 1, 1), "b": (1, 3, 1, 1)}  # B aligned at the last axis, then lifted
    ev = evaluate("elementwise", opened.raw, opened.to_layer(np.arange(6, dtype=np.float32).reshape(2, 3)), run=False)
    assert opened.stands(ev) and ev.inputs["b"].shape == (1, 3, 1, 1)
    from playground.onnx.opinions import second_opinions

    assert second_opinions(ev, opened)["onnxruntime"]["agrees"] is True


def test_a_constant_operand_is_the_layers_constant_input_and_only_b_may_be_one():
    from playground.onnx import opening, reading

    opened = opening.open_node(
        reading.load_model(_binary_model("Mul", (1, 2, 2, 2), (2, 1, 1), b_const=[[[3]], [[-1]]]))
    )
    xs = opened.to_layer(np.ones((1, 2, 2, 2), np.float32))
    assert xs["b"].ravel().tolist() == [3, -1]
    assert run("PROD", xs["a"], xs["b"]).reference[0, :, 0, 0].tolist() == [3, -1]
    with pytest.raises(ValidationError, match="a .'A'. is a constant"):  # 1 − x: A may not be the constant
        opening.open_node(reading.load_model(_binary_model("Sub", (1,), (1, 2, 2, 2), a_const=[1.0])))
    added = opening.open_node(reading.load_model(_binary_model("Add", (1,), (1, 2, 2, 2), a_const=[1.0])))
    assert added.tensors == ("B", "A") and "commutes" in added.notes[0]  # 1 + x = x + 1: the constant is B


def test_the_export_of_every_operation_agrees_with_onnxruntime_and_the_parser_builds_it():
    from playground.onnx.opinions import second_opinions

    for op in OPERATIONS:
        o = second_opinions(run(op))
        assert o["onnxruntime"]["agrees"] is True, (op, o["onnxruntime"])
        if o["onnx_parser"]["status"] != "not_built":
            assert o["onnx_parser"]["same_output_shape"] is True, (op, o["onnx_parser"])


def test_the_layers_command_names_the_inputs_in_order(capsys):
    code, out, _ = _cli(capsys, "layers", "elementwise")
    assert code == 0 and out.splitlines()[1].startswith("  inputs: a (The first operand.); b (")


def test_a_model_nodes_page_takes_its_constant_operand_and_each_tensors_shape(monkeypatch, tmp_path):
    from apptest import open_page, stage_data, text

    from playground.base import blobs
    from playground.onnx import reading

    monkeypatch.setenv("PLAYGROUND_BLOBS", str(tmp_path))
    monkeypatch.setattr(blobs, "_store", None, raising=False)
    digest, _ = reading.remember(_binary_model("Mul", (1, 2, 2, 2), (2, 1, 1), b_const=[[[3]], [[-1]]]), "mul.onnx")
    at = open_page("elementwise", onnx=digest, node="binary", model="mul.onnx")
    answer = stage_data(at)["answer"]
    b = next(f for f in answer["figures"] if f["which"] == "input.b")
    assert b["tensor"]["shape"] == [1, 2, 1, 1] and "From the model: input B (1, 2, 1, 1)" in text(at)
    assert answer["query"]["elementwise.operation"] == "PROD"
    digest, _ = reading.remember(_binary_model("Add", (2, 3), (3,)), "add.onnx")
    at = open_page("elementwise", onnx=digest, node="binary", model="add.onnx")
    shapes = {f["which"]: f["tensor"]["shape"] for f in stage_data(at)["answer"]["figures"]}
    assert shapes["input"] == [2, 3, 1, 1] and shapes["input.b"] == [1, 3, 1, 1]  # each as the model has it


def test_run_onnx_reopens_an_export_of_two_inputs_and_both_opinions_judge_it(tmp_path, capsys):
    model = tmp_path / "sub.onnx"
    assert (
        _cli(capsys, "export", "elementwise", "--set", "operation=SUB", "--format", "onnx", "--out", str(model))[0] == 0
    )
    code, out, _ = _cli(capsys, "run", "--onnx", str(model), "--json")
    d = json.loads(out)
    assert (
        code == 0 and d["params"]["operation"] == "SUB" and d["input_shapes"] == {"a": [1, 1, 3, 3], "b": [1, 1, 3, 3]}
    )
    assert d["onnxruntime"]["agrees"] is True


def test_onnx_sum_of_two_opens_as_sum_and_of_three_as_the_parsers_chain():
    """A ResNet's residual is an ONNX Sum of two: an Add; of three, TensorRT's parser chains layers: SUM, then a SUM
    step reading C."""
    import onnx
    from onnx import helper as h

    from playground.model import whole
    from playground.onnx import opening, reading

    opened = opening.open_node(reading.load_model(_binary_model("Sum", (1, 2, 3, 4), (1, 2, 3, 4))))
    assert opened.layer is LAYER and opened.raw == {"operation": "SUM"}
    x = [h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [1, 2, 3, 4]) for n in "ABC"]
    three = h.make_model(
        h.make_graph(
            [h.make_node("Sum", ["A", "B", "C"], ["Y"], name="sum3")],
            "g",
            x,
            [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [1, 2, 3, 4])],
        ),
        opset_imports=[h.make_opsetid("", 17)],
    )
    (node,) = whole.analyze(reading.load_model(three.SerializeToString()), "m.onnx", engine=False)["nodes"]
    assert node["layer"] == "elementwise" and node["agrees"] is True and node["reads"] == ["A", "B", "C"]
    answer = whole.analyze(reading.load_model(_binary_model("Sum", (1, 2, 3, 4), (1, 2, 3, 4))), "m.onnx", engine=False)
    assert [n["agrees"] for n in answer["nodes"]] == [True]
