"""playground.base.explain: the arithmetic shown next to the heatmaps agrees with the reference and TensorRT."""

import itertools

import numpy as np
import pytest

from playground.base import numbers
from playground.base import reference as ref
from playground.base.errors import ValidationError
from playground.base.inputs import tile_pattern
from playground.layers import activation, convolution, get_layer, leaky_relu, prelu, scale
from playground.layers.convolution import geometry
from playground.network import core

CONV = get_layer("convolution")


def conv_params(shape, **raw):
    return CONV.resolve(raw, shape)


def conv_ref(x, p):
    return CONV.reference(x, p)


# ------------------------------------------------------------------------------ output shape
def _shape_grid():
    modes = ("EXPLICIT_ROUND_DOWN", "EXPLICIT_ROUND_UP", "SAME_UPPER", "SAME_LOWER")
    for shape, kernels in (((1, 1, 6, 9), ("3", "2,3")), ((1, 1, 5, 6, 7), ("3", "2,3,1"))):
        for mode, stride, dilation, kernel in itertools.product(modes, (1, 2, 3), (1, 2), kernels):
            for padding in (
                {},
                {"padding_nd": 1},
                {"padding_nd": 2, "pre_padding": 1},
                {"pre_padding": 0, "post_padding": 2},
                {"padding_nd": 1, "post_padding": 0},
            ):
                yield (
                    shape,
                    dict(
                        padding_mode=mode,
                        stride_nd=stride,
                        dilation_nd=dilation,
                        kernel_size_nd=kernel,
                        kernel="ones",
                        **padding,
                    ),
                )


def test_conv_shape_rows_equal_reference_output_shape():
    checked = 0
    for shape, raw in _shape_grid():
        try:
            p = conv_params(shape, **raw)
            expected = conv_ref(tile_pattern(shape), p).shape
        except (ValidationError, ValueError):
            continue  # a configuration the layer refuses (e.g. dilated kernel larger than the padded input)
        rows = convolution.conv_shape_rows(p, shape)
        assert [r["axis"] for r in rows] == (["H", "W"] if len(shape) == 4 else ["D", "H", "W"])
        assert tuple(r["output"] for r in rows) == expected[2:], (shape, raw, rows)
        assert convolution.conv_output_shape(p, shape) == expected
        pre, post, _ = geometry(p, shape)
        assert tuple(r["pre"] for r in rows) == pre and tuple(r["post"] for r in rows) == post, (shape, raw)
        for r in rows:
            assert r["dilated_kernel"] == 1 + r["dilation"] * (r["kernel"] - 1)
            assert r["formula"].split(";")[0].endswith(f"= {r['output']}")
        checked += 1
    assert checked > 300


def test_conv_shape_formula_text_has_the_numbers():
    p = conv_params((1, 1, 6, 9), stride_nd=2)
    h, w = convolution.conv_shape_rows(p, (1, 1, 6, 9))
    assert h["formula"] == "floor((6 + 0 + 0 − 3) / 2) + 1 = 2"
    assert w["formula"] == "floor((9 + 0 + 0 − 3) / 2) + 1 = 4"

    p = conv_params((1, 1, 6, 9), stride_nd=2, padding_mode="SAME_UPPER", padding_nd=3)
    h, w = convolution.conv_shape_rows(p, (1, 1, 6, 9))
    assert h["formula"].startswith("ceil(6 / 2) = 3") and h["output"] == 3
    assert w["formula"].startswith("ceil(9 / 2) = 5") and (w["pre"], w["post"]) == (1, 1)
    assert h["padding_nd"] == 3 and (h["pre"], h["post"]) == (0, 1)  # SAME_UPPER: the odd zero goes after

    p = conv_params((1, 1, 6, 9), stride_nd=2, padding_mode="EXPLICIT_ROUND_UP")
    h, w = convolution.conv_shape_rows(p, (1, 1, 6, 9))
    assert h["formula"].startswith("ceil((6 + 0 + 0 − 3) / 2) + 1 = 3")
    assert h["post"] == 1 and "1 more zero" in h["formula"]  # the rounded-up last window reads one zero

    p = conv_params((1, 1, 6, 9), padding_nd=1, pre_padding=2, dilation_nd=2)
    h, _ = convolution.conv_shape_rows(p, (1, 1, 6, 9))
    assert (h["padding_nd"], h["pre_padding_set"], h["post_padding_set"]) == (1, 2, None)
    assert h["formula"] == "floor((6 + 2 + 1 − 5) / 1) + 1 = 5"


def test_padding_precedence_text():
    assert "SAME_UPPER" in convolution.PADDING_PRECEDENCE and "padding_nd" in convolution.PADDING_PRECEDENCE
    same = convolution.padding_in_force(conv_params((1, 1, 6, 9), padding_mode="SAME_LOWER", pre_padding=1))
    assert "SAME_LOWER" in same and "pre_padding (1, 1)" in same and "ignored" in same
    mixed = convolution.padding_in_force(conv_params((1, 1, 6, 9), padding_nd=1, pre_padding=2))
    assert "before: pre_padding (2, 2)" in mixed and "after: padding_nd (1, 1)" in mixed


# ------------------------------------------------------------------------------ one output cell
def _check_cells(x, p, cells):
    y = conv_ref(x, p)
    for idx in cells:
        cell = convolution.conv_cell_products(x, p, idx)
        assert cell["value"] == pytest.approx(float(y[idx]), rel=1e-6, abs=1e-6), idx
        assert cell["reference"] == float(y[idx])
        assert cell["value"] == pytest.approx(cell["products_sum"] + cell["bias"], rel=1e-6)
        assert sum(t["product"] for t in cell["taps"]) == pytest.approx(cell["products_sum"])
        assert cell["text"].startswith(f"Σ = {numbers.precise(cell['value'])}")
    return cell


def test_cell_products_spec_example_and_padding_cells():
    x = tile_pattern((1, 1, 6, 9))
    p = conv_params(x.shape)
    cell = _check_cells(x, p, [(0, 0, 0, 0), (0, 0, 3, 6), (0, 0, 2, 4)])
    assert len(cell["taps"]) == 9 and not any(t["padding"] for t in cell["taps"])
    first = convolution.conv_cell_products(x, p, (0, 0, 0, 0))
    assert first["value"] == pytest.approx(12345.6789, rel=1e-6)
    assert [t["x"] for t in first["taps"]] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert first["window"] == {0: [(h, w) for h in range(3) for w in range(3)]}
    rows = convolution.conv_products_table(first)
    assert list(rows[5]) == ["c", "h", "w", "kernel", "padding", "x", "weight", "x·weight"]
    assert (rows[5]["h"], rows[5]["w"], rows[5]["kernel"], rows[5]["x"]) == (1, 2, "(1, 2)", 6)
    assert rows[5]["weight"] == np.float32(0.1) and rows[5]["x·weight"] == pytest.approx(0.6)

    p = conv_params(x.shape, padding_nd=1, bias=0.5)
    corner = _check_cells(x, p, [(0, 0, 0, 0), (0, 0, 5, 8), (0, 0, 0, 4)])
    cell = convolution.conv_cell_products(x, p, (0, 0, 0, 0))
    assert sum(t["padding"] for t in cell["taps"]) == 5 and (-1, -1) in cell["window"][0]
    assert all(t["x"] == 0 for t in cell["taps"] if t["padding"])
    assert "5 of them on padding zeros" in cell["text"] and "bias 0.5" in cell["text"]
    assert corner["bias"] == 0.5

    p = conv_params(x.shape, padding_mode="SAME_LOWER", stride_nd=2, kernel_size_nd="2,3")
    _check_cells(x, p, list(np.ndindex(conv_ref(x, p).shape)))


def test_cell_products_groups_dilation_3d():
    x = np.random.default_rng(1).uniform(-2, 2, (2, 4, 7, 8)).astype(np.float32)
    p = conv_params(x.shape, num_output_maps=4, num_groups=2, kernel="random", bias="1,2,3,4")
    _check_cells(x, p, [(0, 0, 0, 0), (1, 3, 4, 5), (0, 2, 2, 1)])
    cell = convolution.conv_cell_products(x, p, (0, 1, 3, 3))
    assert cell["channels"] == [0, 1] and cell["group"] == 0 and len(cell["taps"]) == 2 * 9
    upper = convolution.conv_cell_products(x, p, (1, 3, 4, 5))
    assert upper["channels"] == [2, 3] and upper["group"] == 1 and {t["channel"] for t in upper["taps"]} == {2, 3}
    # the window is drawn on the slices (n=1, c=2) and (n=1, c=3): slice index n·C + c
    assert set(upper["window"]) == {1 * 4 + 2, 1 * 4 + 3}

    p = conv_params(x.shape, dilation_nd=2, padding_nd=1, stride_nd="1,2", kernel="random")
    _check_cells(x, p, [(0, 0, 0, 0), (1, 0, 4, 2), (0, 0, 2, 2)])
    coords = [t["input"] for t in convolution.conv_cell_products(x, p, (0, 0, 2, 2))["taps"] if t["channel"] == 0]
    assert coords[:3] == [(1, 3), (1, 5), (1, 7)]  # dilation 2: every other column; stride 2: from 2·2 − 1 = 3

    x3 = np.random.default_rng(2).uniform(-1, 1, (1, 2, 4, 5, 5)).astype(np.float32)
    p = conv_params(x3.shape, num_output_maps=2, kernel="random", padding_nd="1,0,1", stride_nd=2)
    _check_cells(x3, p, list(np.ndindex(conv_ref(x3, p).shape)))
    cell = convolution.conv_cell_products(x3, p, (0, 1, 0, 1, 0))
    assert len(cell["taps"]) == 2 * 27 and len(cell["taps"][0]["input"]) == 3
    # depth −1 is padding and has no slice; depths 0 and 1 of both channels are drawn: slice c·D + d
    assert set(cell["window"]) == {0, 1, 4, 5}


def test_cell_products_int8_spec_example():
    x = tile_pattern((1, 1, 6, 9))
    p = conv_params(x.shape, int8=True)
    _check_cells(x, p, [(0, 0, 0, 0), (0, 0, 1, 1), (0, 0, 3, 6)])
    first = convolution.conv_cell_products(x, p, (0, 0, 0, 0))
    assert first["value"] == 726 and first["text"].startswith("Σ = 726")
    assert [t["w_q"] for t in first["taps"]] == [127, 127, 100, 10, 1, 0, 0, 0, 0]  # 1e4, 1e3 clamp to 127
    p = conv_params(x.shape, int8=True, quantize_scale=0.5)
    _check_cells(x, p, [(0, 0, 0, 0), (0, 0, 2, 5)])


def test_cell_products_rejects_an_index_outside_the_output():
    x = tile_pattern((1, 1, 6, 9))
    with pytest.raises(ValueError, match="outside the output shape"):
        convolution.conv_cell_products(x, conv_params(x.shape), (0, 0, 4, 0))


# ----------------------------------------------------------------------------------------- scale
def test_scale_nan_explanation():
    layer = get_layer("scale")
    x = layer.example_input(layer.example_shape)
    assert scale.scale_nan_explanation(x, layer.resolve({}, x.shape)) is None
    p = layer.resolve({"power": 0.5}, x.shape)
    expected = int(np.isnan(layer.reference(x, p)).sum())
    assert expected == 13  # x = 1..13 gives 0.5·x − 7 < 0
    text = scale.scale_nan_explanation(x, p)
    assert text.startswith("13 of 27 output cells are NaN") and "negative" in text and "fractional" in text
    assert "cell (0, 0, 0, 0)" in text and "-6.5" in text
    p = layer.resolve({"mode": "CHANNEL", "power": "1,0.5,1"}, x.shape)
    text = scale.scale_nan_explanation(x, p)
    assert text.startswith("4 of 27") and "cell (0, 1, 0, 0)" in text  # channel 1: x = 10..13 → base < 0


def test_scale_coefficient_rows():
    layer = get_layer("scale")
    x = layer.example_input(layer.example_shape)
    rows, what = scale.scale_coefficient_rows(layer.resolve({"mode": "CHANNEL", "scale": "1,2,3"}, x.shape), x.shape)
    assert [r["applies to"] for r in rows] == ["C = 0", "C = 1", "C = 2"] and rows[2]["scale"] == 3
    assert "channel_axis 1" in what
    rows, what = scale.scale_coefficient_rows(
        layer.resolve({"mode": "ELEMENTWISE", "channel_axis": 1}, x.shape), x.shape
    )
    assert len(rows) == 12 and "27 in all" in what and rows[0]["applies to"] == "(C, H, W) = (0, 0, 0)"


# ------------------------------------------------------------------------------------ activation
def test_activation_curve_matches_reference():
    for t, a, b in (("CLIP", -2, 2), ("SELU", 1.6732632, 1.0507010), ("LEAKY_RELU", 0.1, 0)):
        xs, ys = activation.activation_curve(t, a, b)
        assert xs.shape == ys.shape == (601,) and xs[0] == -6 and xs[-1] == 6
        np.testing.assert_array_equal(ys, ref.activation(xs, t, a, b))
    xs, _ = activation.activation_curve("RELU", x_range=(-1, 3), n=5)
    np.testing.assert_array_equal(xs, [-1, 0, 1, 2, 3])
    assert activation.formula({"type": "CLIP", "alpha": -2.0, "beta": 2.0}) == "y = max((-2), min(2, x))"
    assert activation.curve_range(np.array([-10.0, np.nan, 1.0])) == pytest.approx((-10.8, 6.8))


def test_prelu_broadcast_text():
    layer = get_layer("prelu")
    x = layer.example_input(layer.example_shape)
    text = prelu.prelu_broadcast(layer.resolve({}, x.shape), x.shape)
    assert text.startswith("slopes (1, 3, 1, 1) broadcast over input (1, 3, 3, 3): one slope per channel")


# ------------------------------------------------------------------------------------ leaky relu
def test_leaky_comparison_with_the_real_core():
    x = np.concatenate([np.arange(-4, 5, dtype=np.float32), np.linspace(-7.3, 5.1, 27, dtype=np.float32)])
    x = x.reshape(1, 1, 4, 9)
    result = leaky_relu.leaky_comparison(x, 0.1, core.evaluate)
    names = result["constructions"]
    assert set(names) == {"activation", "parametric_relu", "scale_relu_sum"}
    assert result["max_diff"].shape == (3, 3) and np.all(result["max_diff"] <= 1e-6)
    assert np.all(np.diag(result["max_diff"]) == 0)
    for name in names:
        out = result["outputs"][name]
        assert out.shape == x.shape
        np.testing.assert_allclose(out, ref.activation(x, "LEAKY_RELU", 0.1), rtol=1e-6, atol=1e-6)
        if core.detect().can_build:
            assert result["layers"][name], name  # the engine's own layers (built on CPU with TensorRT-RTX)
            assert {"name", "type", "tactic"} <= set(result["layers"][name][0])
        if not core.detect().can_run:
            assert result["latency_ms"][name] is None


def test_leaky_comparison_uses_the_callers_own_evaluation():
    x = np.linspace(-4, 4, 9, dtype=np.float32).reshape(1, 1, 3, 3)
    own = core.evaluate("leaky_relu", {"alpha": 0.2, "construction": "parametric_relu"}, x)
    asked = []

    def evaluate_fn(layer, raw, x, **kw):
        asked.append(raw["construction"])
        return core.evaluate(layer, raw, x, **kw)

    result = leaky_relu.leaky_comparison(x, 0.2, evaluate_fn, own=own)
    assert result["outputs"]["parametric_relu"] is own.output and "parametric_relu" not in asked
    alone = leaky_relu.leaky_comparison(x, 0.2, core.evaluate)
    for c in result["constructions"]:
        np.testing.assert_array_equal(result["outputs"][c], alone["outputs"][c])
        assert result["sources"][c] == alone["sources"][c] and result["layers"][c] == alone["layers"][c]


def test_max_abs_diff_handles_non_finite():
    a = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert ref.max_abs_diff(a, a.copy()) == 0
    assert ref.max_abs_diff(a, np.array([1.0, 0, np.inf, -np.inf], np.float32)) == np.inf
    assert ref.max_abs_diff(a, a[:3]) == np.inf
