"""Normalization: layer, instance and group normalization with scale and bias inputs; the rules TensorRT's builder
keeps (checked by the contract's fuzz); ONNX's LayerNormalization, InstanceNormalization (1-D scale along C) and
GroupNormalization; the FP16 lesson."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network import presets
from playground.network.core import evaluate

LAYER = get_layer("normalization")
X = np.float32([[1, 3], [5, 7], [0, 4], [-4, 0]]).reshape(1, 4, 1, 2)


def run(raw, x=X, scale=None, bias=None):
    scale = np.ones((1, 4, 1, 1), np.float32) if scale is None else scale
    bias = np.zeros((1, 4, 1, 1), np.float32) if bias is None else bias
    return evaluate("normalization", {"epsilon": 0.0, **raw}, {"x": x, "scale": scale, "bias": bias}, run=False)


def test_instance_layer_and_group_normalization_by_hand():
    assert run({"axes": 8}).reference.ravel().tolist() == [-1, 1] * 4  # each pair: mean ± 1
    layer = run({"axes": 14}).reference.ravel()  # all eight: mean 2, variance 84 / 8 = 10.5
    np.testing.assert_allclose(layer, (X.ravel() - 2) / np.sqrt(10.5), rtol=1e-6)
    groups = run(
        {"axes": 12, "num_groups": 2},
        scale=np.float32([1, 10]).reshape(1, 2, 1, 1),
        bias=np.float32([0, 100]).reshape(1, 2, 1, 1),
    ).reference.ravel()
    np.testing.assert_allclose(groups[:4], (np.float32([1, 3, 5, 7]) - 4) / np.sqrt(5), rtol=1e-6)
    np.testing.assert_allclose(groups[4:], 100 + 10 * np.float32([0, 4, -4, 0]) / np.sqrt(8), rtol=1e-6)


def test_the_rules_name_groups_axes_and_each_scale_and_bias():
    with pytest.raises(ValidationError, match="must divide the 4 channels"):
        run({"num_groups": 3})
    with pytest.raises(ValidationError) as e:
        run(
            {"axes": 14, "num_groups": 2},
            scale=np.ones((1, 2, 1, 1), np.float32),
            bias=np.ones((1, 2, 1, 1), np.float32),
        )
    assert e.value.param == "axes" and "spatial axes" in e.value.rule
    with pytest.raises(ValidationError) as e:
        run({"axes": 12}, bias=np.ones((1, 3, 1, 1), np.float32))
    assert e.value.param == "input.bias" and "is 3 along C" in e.value.rule


def test_a_constant_input_with_epsilon_0_is_undefined_by_rule():
    flat = np.full((1, 4, 1, 2), 2.0, np.float32)
    ev = run({"axes": 8}, x=flat)
    p = ev.params
    assert np.isnan(ev.reference).all() and LAYER.undefined(ev.inputs, p).all()
    assert not LAYER.undefined(ev.inputs, {**p, "epsilon": 1e-5}).any()


def test_the_fp16_lesson_and_bf16_beside_it():
    lesson = presets.find("normalization", "fp16_overflows")
    x = presets.input_for(lesson)
    fp16 = evaluate("normalization", lesson.params, x, run=False)
    assert np.isnan(fp16.reference).all() and presets.compare(lesson, fp16.output, fp16.precision_error).matches
    bf16 = evaluate("normalization", {**lesson.params, "precision": "BF16"}, x, run=False)
    assert bf16.precision_error["max_abs_error"] < 1e-5  # ±1 from ±70 144: the scale divides out


def _model(op, shapes, consts, opset=18, **attrs):
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    inputs = [h.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(s)) for n, s in shapes.items()]
    inits = [onnx.numpy_helper.from_array(np.asarray(v, np.float32), n) for n, v in consts.items()]
    node = h.make_node(op, list(shapes) + list(consts), ["Y"], name="norm", **attrs)
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


@pytest.mark.parametrize(
    "op, shape, consts, attrs, raw",
    [
        (
            "LayerNormalization",
            (2, 3, 4),
            {"s": np.arange(1, 5), "b": np.ones(4)},
            {"axis": -1},
            {"axes": 4, "num_groups": 1},
        ),
        ("InstanceNormalization", (2, 3, 5), {"s": [1, 2, 3], "b": [0, 1, 0]}, {}, {"axes": 12, "num_groups": 1}),
    ],
)
def test_onnx_normalizations_open_with_their_scale_and_bias_and_agree(op, shape, consts, attrs, raw):
    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    opened = opening.open_node(reading.load_model(_model(op, {"X": shape}, consts, **attrs)))
    assert {k: opened.raw[k] for k in raw} == raw and set(opened.constants) == {"scale", "bias"}
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ev = evaluate("normalization", opened.raw, opened.to_layer(x), run=False)
    assert second_opinions(ev, opened)["onnxruntime"]["agrees"] is True, op


def test_onnx_group_normalization_of_opset_21_scales_per_channel_which_tensorrt_does_not():
    from playground.onnx import opening, reading

    model = _model("GroupNormalization", {"X": (2, 4, 3)}, {"s": np.ones(4), "b": np.zeros(4)}, opset=21, num_groups=2)
    with pytest.raises(ValidationError, match="per channel from opset 21"):
        opening.open_node(reading.load_model(model))


def test_the_export_of_groups_agrees_with_onnxruntime():
    from playground.onnx.opinions import second_opinions

    ev = run(
        {"axes": 12, "num_groups": 2, "epsilon": 1e-5},
        scale=np.float32([1, 10]).reshape(1, 2, 1, 1),
        bias=np.float32([0, 100]).reshape(1, 2, 1, 1),
    )
    assert second_opinions(ev)["onnxruntime"]["agrees"] is True
