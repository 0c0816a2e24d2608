"""Gather in ELEMENT mode: the output of the indices' shape, each cell the data cell its index names; indices are
not data (no precision touches them); an index with no documented result is undefined by rule."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate

LAYER = get_layer("gather")
DATA = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)


def run(indices, **raw):
    return evaluate("gather", raw, {"data": DATA, "indices": np.float32(indices)}, run=False)


def test_each_cell_copies_the_data_cell_its_index_names():
    ev = run(np.float32([[3, 0], [1, 1]]).reshape(1, 1, 2, 2))
    assert ev.output.ravel().tolist() == [4, 1, 6, 6]  # row 0: columns 3, 0; row 1: columns 1, 1
    ev = run(np.float32([[2, 0, 1, 2]]).reshape(1, 1, 1, 4), axis=2)
    assert ev.output.ravel().tolist() == [9, 2, 7, 12]


def test_indices_may_not_reach_past_the_data_off_the_axis():
    with pytest.raises(ValidationError) as e:
        run(np.zeros((1, 1, 4, 2)))
    assert e.value.param == "input.indices" and "is 4 along H, where the data has 3" in e.value.rule


def test_an_index_out_of_range_is_undefined_and_nan_and_a_fraction_truncates_as_the_cast_to_int32():
    """TensorRT's Cast to INT32 truncates toward 0 (1.5 → 1, 2.9 → 2, −0.5 → 0): only 4, −1 and NaN have no
    documented result."""
    ev = run(np.float32([[0, 4, -1, 1.5, 2.9, -0.5, np.nan]]).reshape(1, 1, 1, 7))
    assert LAYER.undefined(ev.inputs, ev.params).ravel().tolist() == [False, True, True, False, False, False, True]
    y = ev.output.ravel()
    assert y[[0, 3, 4, 5]].tolist() == [1, 2, 3, 1] and np.isnan(y[[1, 2, 6]]).all()
    assert "no documented result" in LAYER.cell(ev.inputs, ev.params, (0, 0, 0, 1), ev.reference).notes[0]
    assert "data[0, 0, 0, 1]" in LAYER.cell(ev.inputs, ev.params, (0, 0, 0, 3), ev.reference).line


@pytest.mark.parametrize("precision", ["FP16", "INT8"])
def test_no_precision_touches_the_indices(precision):
    ev = run(np.float32([[3, 2, 1, 0]]).reshape(1, 1, 1, 4), precision=precision, quantize_scale=0)
    assert ev.output.ravel().tolist() == pytest.approx([4, 3, 2, 1], abs=0.05)  # INT8 rounds the data, not the index
    assert ev.params["precision"] != "INT8" or ev.params["quantize_scale"] == pytest.approx(12 / 127)  # data only


def test_the_engine_casts_the_indices_and_onnx_reads_gather_elements():
    from onnx_cases import node_model

    from playground.onnx import opening, reading
    from playground.trt import engine as eng
    from playground.trt.backend import detect

    backend = detect("tensorrt_rtx")
    if backend.can_build:
        p = LAYER.resolve({"precision": "INT8"}, {"data": (1, 1, 3, 4), "indices": (1, 1, 3, 4)})
        report = eng.build_engine(backend, LAYER, p, {"data": (1, 1, 3, 4), "indices": (1, 1, 3, 4)})
        assert report.status == "built", report.error
    model = node_model("GatherElements", (2, 3), {"i": np.int64([[2, 0, 1], [1, 1, 0]])}, axis=1)
    opened = opening.open_node(reading.load_model(model.SerializeToString()))
    assert opened.raw == {"mode": "ELEMENT", "axis": 1} and opened.constants["indices"].ravel().tolist() == [
        2,
        0,
        1,
        1,
        1,
        0,
    ]
    ev = evaluate("gather", opened.raw, opened.to_layer(np.float32([[1, 2, 3], [4, 5, 6]])), run=False)
    assert ev.output.ravel().tolist() == [3, 1, 2, 5, 5, 4]


def test_default_mode_replaces_the_axis_by_the_indices_shape():
    ev = run(np.float32([3, 0]).reshape(1, 1, 1, 2), mode="DEFAULT", axis=3, indices_rank=1)
    assert ev.output.shape == (1, 1, 3, 2) and ev.output[0, 0, :, 0].tolist() == [4, 8, 12]
    ev = run(np.float32([[2, 0], [1, 1]]).reshape(1, 1, 2, 2), mode="DEFAULT", axis=2, indices_rank=2)
    assert ev.output.shape == (1, 1, 2, 2, 4)  # rank 4 + 2 − 1
    assert ev.output[0, 0, 0, 0].tolist() == [9, 10, 11, 12] and ev.output[0, 0, 1, 1].tolist() == [5, 6, 7, 8]


def test_default_rank_past_the_stage_and_indices_with_leading_axes_are_refused_by_name():
    with pytest.raises(ValidationError) as e:
        run(np.zeros((1, 1, 2, 2)), mode="DEFAULT", indices_rank=3)
    assert e.value.param == "indices_rank" and "rank 6" in e.value.rule and e.value.stricter
    with pytest.raises(ValidationError) as e:
        run(np.zeros((1, 1, 2, 2)), mode="DEFAULT", indices_rank=1)
    assert e.value.param == "input.indices" and "first 3 axes must be 1" in e.value.rule


def test_nd_mode_reads_index_tuples_and_its_batch_axes_must_match():
    ev = run(np.float32([[0, 0, 2], [0, 0, 0]]).reshape(1, 1, 2, 3), mode="ND", indices_rank=2)
    assert ev.output.tolist() == [[9, 10, 11, 12], [1, 2, 3, 4]]  # (n, c, h) tuples: whole rows of W
    with pytest.raises(ValidationError) as e:
        run(np.zeros((1, 1, 2, 2)), mode="ND", indices_rank=2, num_elementwise_dims=1)
    assert e.value.param == "input.indices" and "must equal the data's (1,)" in e.value.rule


def test_a_negative_or_out_of_range_index_in_default_mode_is_undefined():
    ev = run(np.float32([-1, 3, 4]).reshape(1, 1, 1, 3), mode="DEFAULT", indices_rank=1)
    assert np.isnan(ev.output[..., 0]).all() and ev.output[0, 0, :, 1].tolist() == [4, 8, 12]
    assert np.isnan(ev.output[..., 2]).all()
    assert "from the end" in LAYER.cell(ev.inputs, ev.params, (0, 0, 0, 0), ev.reference).notes[0]


def _ort(model, feeds):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


@pytest.mark.parametrize(
    "op, data_shape, indices, attrs",
    [
        ("Gather", (3, 4), np.int64([2, 0]), {"axis": 0}),
        ("Gather", (2, 3, 4), np.int64([[1, 3], [0, 0]]), {"axis": -1}),
        ("Gather", (2, 5), np.int64(4), {"axis": 1}),  # a scalar index: the axis goes
        ("GatherND", (3, 4), np.int64([[2, 1], [0, 3]]), {}),
        ("GatherND", (2, 3, 4), np.int64([[1], [0]]), {"batch_dims": 1}),
    ],
)
def test_onnx_gather_and_gather_nd_open_and_agree_with_onnxruntime(op, data_shape, indices, attrs):
    from onnx_cases import node_model

    from playground.onnx import opening, reading

    model = node_model(op, data_shape, {"i": indices}, **attrs)
    opened = opening.open_node(reading.load_model(model.SerializeToString()))
    x = np.random.default_rng(0).uniform(-4, 4, data_shape).astype(np.float32)
    ev = evaluate("gather", opened.raw, opened.to_layer(x), run=False)
    want = _ort(model, {model.graph.input[0].name: x})
    assert opened.to_onnx(ev.output).shape == want.shape and np.array_equal(opened.to_onnx(ev.output), want)


def test_an_onnx_gather_with_negative_indices_opens_with_the_rule_and_masks_those_cells():
    from onnx_cases import node_model

    from playground.onnx import opening, reading
    from playground.onnx.opinions import onnxruntime_opinion

    model = node_model("Gather", (2, 3), {"i": np.int64([-1, 0])}, axis=1)
    opened = opening.open_node(reading.load_model(model.SerializeToString()))
    assert opened.raw["mode"] == "DEFAULT" and "passes the indices" in opened.differs[0]
    ev = evaluate("gather", opened.raw, opened.to_layer(np.float32([[1, 2, 3], [4, 5, 6]])), run=False)
    ort = onnxruntime_opinion(ev, opened)
    assert ort["agrees"] and ort["masked"]["cells"] == 2 and ort["masked"]["onnxruntime_gives"] == ["3.0", "6.0"]


def test_every_example_exports_and_onnxruntime_agrees():
    """Each mode's export (Gather, GatherElements, GatherND after a Cast and, but for ELEMENT, a Reshape of the
    indices to their rank) computes the example's table in ONNX Runtime."""
    from playground.network.presets import input_for
    from playground.onnx import runtime, writing

    for e in LAYER.examples:
        xs = LAYER.feed(input_for(e))
        shapes = {n: a.shape for n, a in xs.items()}
        p = LAYER.resolve(e.params, shapes)
        verdict = runtime.onnxruntime_check(
            writing.export_model(LAYER, p, shapes).SerializeToString(), xs, e.expected, lambda: 1.0
        )
        assert verdict["agrees"] and verdict["max_abs_diff"] == 0, (e.name, verdict)
