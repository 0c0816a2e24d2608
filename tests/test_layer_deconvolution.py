"""Deconvolution: hand-computed tables, the reference against a plain scatter loop and as the adjoint of the
convolution, the output sizes TensorRT infers, the rules, the picked cell (the transposed window), and TensorRT
building a spread of configurations."""

import itertools

import numpy as np
import pytest

from playground.base import reference as ref
from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.layers.deconvolution import geometry
from playground.network.core import evaluate
from playground.trt.backend import detect

LAYER = get_layer("deconvolution")
X = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


def deconv(raw, x=X):
    return LAYER.reference(x, LAYER.resolve(raw, x.shape))


def loop(x, p):
    """The scatter the slow way (2-D): every input cell, every tap, added where it lands, then cropped."""
    w, (kh, kw), (sh, sw), (dh, dw) = p["kernel"], p["kernel_size_nd"], p["stride_nd"], p["dilation_nd"]
    n, c, H, W = x.shape
    g, maps = p["num_groups"], p["num_output_maps"]
    full = np.zeros((n, maps, (H - 1) * sh + dh * (kh - 1) + 1, (W - 1) * sw + dw * (kw - 1) + 1))
    for b, ci, i, j, a, e in itertools.product(range(n), range(c), range(H), range(W), range(kh), range(kw)):
        group = ci // (c // g)
        for local in range(maps // g):
            full[b, group * (maps // g) + local, i * sh + a * dh, j * sw + e * dw] += (
                x[b, ci, i, j] * w[ci, local, a, e]
            )
    pre, _, out = geometry(p, x.shape)
    y = full[:, :, pre[0] : pre[0] + out[0], pre[1] : pre[1] + out[1]]
    return y + p["bias"].reshape(1, -1, 1, 1)


def test_hand_computed_tables():
    y = deconv({})  # ones 3 × 3, stride 1: each output cell sums the input cells within reach
    assert y.shape == (1, 1, 5, 5) and y[0, 0, 2, 2] == 45 and y[0, 0, 0].tolist() == [1, 3, 6, 5, 3]
    # stride 2 with a 1 × 1 kernel: the input cells two apart, zeros between; the bias fills every cell
    assert deconv({"kernel_size_nd": "1,1", "stride_nd": 2, "bias": 0.5})[0, 0, :2].tolist() == [
        [1.5, 0.5, 2.5, 0.5, 3.5],
        [0.5] * 5,
    ]
    # a weight per tap: the 2 × 2 kernel 1 2 / 3 4 at stride 2 writes x·(1 2 / 3 4) into each block
    # the identity preset (the centre tap) at stride 2: each cell lands one cell in from its window's corner
    y = deconv({"stride_nd": 2, "kernel": "identity"})
    assert y[0, 0, 1::2, 1::2].tolist() == X[0, 0].tolist() and y.sum() == X.sum()
    y = deconv({"kernel_size_nd": "2,2", "stride_nd": 2, "kernel": "1,2,3,4"})
    assert y[0, 0, :2, :2].tolist() == [[1, 2], [3, 4]] and y[0, 0, 4:, 4:].tolist() == [[9, 18], [27, 36]]


CONFIGS = [
    {
        "kernel_size_nd": k,
        "stride_nd": s,
        "dilation_nd": d,
        "padding_nd": pad,
        "num_output_maps": m,
        "num_groups": g,
        "kernel": "random",
        "bias": "0.5",
    }
    for k, s, d, pad in (
        ("3,3", "1,1", "1,1", "0,0"),
        ("3,2", "2,3", "1,1", "1,0"),
        ("2,3", "3,1", "2,1", "0,1"),
        ("4,4", "2,2", "1,1", "1,1"),
    )
    for m, g in ((1, 1), (4, 2), (2, 2))
]


@pytest.mark.parametrize("raw", CONFIGS, ids=lambda r: "-".join(str(v) for v in r.values()))
def test_reference_is_the_plain_scatter(raw):
    x = np.random.default_rng(3).uniform(-2, 2, (2, 2, 4, 5)).astype(np.float32)
    p = LAYER.resolve(raw, x.shape)
    np.testing.assert_allclose(LAYER.reference(x, p), loop(x.astype(np.float64), p), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [
        ((1, 1), (0, 0), (1, 1), 1),
        ((2, 2), (1, 1), (1, 1), 1),
        ((2, 1), (0, 1), (2, 1), 2),
        ((3, 3), (1, 0), (1, 2), 2),
    ],
)
def test_it_is_the_adjoint_of_the_convolution(stride, padding, dilation, groups):
    """<conv(x), y> = <x, deconv(y)>: the deconvolution with the convolution's kernel (K, C/G, …) as its own (CKRS
    with C = K) is the convolution's transpose, whenever the convolution's windows cover its padded input."""
    rng = np.random.default_rng(4)
    c, k, kernel = 2, 4, (3, 2)
    size = tuple(s * 3 + dd * (kk - 1) + 1 - 2 * pp for s, dd, kk, pp in zip(stride, dilation, kernel, padding))
    x = rng.uniform(-1, 1, (1, c) + size).astype(np.float32)  # as the convolution's reference reads it
    w = rng.uniform(-1, 1, (k, c // groups) + kernel).astype(np.float32)
    with ref.exact():
        y_conv = ref.convolution(x, w, np.zeros(k), stride, padding, padding, dilation, groups)
        y = rng.uniform(-1, 1, y_conv.shape)
        p = LAYER.resolve(
            {
                "num_output_maps": c,
                "num_groups": groups,
                "kernel_size_nd": kernel,
                "kernel": w.ravel(),
                "stride_nd": stride,
                "padding_nd": padding,
                "dilation_nd": dilation,
            },
            y.shape,
        )
        back = LAYER.reference(y, p)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(y_conv, y), np.vdot(x, back), rtol=1e-9)


@pytest.mark.parametrize(
    "raw, size",
    [
        ({"stride_nd": "2,2"}, (7, 7)),
        ({"stride_nd": "2,2", "padding_mode": "SAME_UPPER"}, (6, 6)),
        ({"stride_nd": "2,2", "padding_mode": "SAME_LOWER"}, (6, 6)),
        ({"kernel_size_nd": "2,2", "stride_nd": "3,3", "padding_mode": "SAME_UPPER"}, (8, 8)),  # min(I·S, span)
        ({"stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"}, (7, 7)),  # rounding has no effect here
        ({"kernel_size_nd": "4,4", "stride_nd": "2,2", "padding_nd": "1,1"}, (6, 6)),
        ({"dilation_nd": "2,2"}, (7, 7)),
        ({"dilation_nd": "2,2", "padding_mode": "SAME_UPPER"}, (3, 3)),
        ({"pre_padding": "1,0", "post_padding": "0,2"}, (4, 3)),
    ],
)
def test_output_sizes_follow_tensorrts_formulas(raw, size, tmp_path):
    """Sizes on a 3 × 3 input by TensorRT's deconvolution formulas; where TensorRT can build, its engine's output
    shape must say the same."""
    assert deconv(raw).shape[2:] == size
    if detect().can_build:
        from playground.trt.cache import EngineCache

        r = evaluate("deconvolution", raw, cache=EngineCache(tmp_path))
        assert r.error is None and tuple(r.report.output_shape)[2:] == size, r.error


def test_same_lower_crops_the_odd_cell_before():
    upper = deconv({"stride_nd": "2,2", "padding_mode": "SAME_UPPER"})
    lower = deconv({"stride_nd": "2,2", "padding_mode": "SAME_LOWER"})
    full = deconv({"stride_nd": "2,2"})
    assert (upper == full[..., :6, :6]).all() and (lower == full[..., 1:, 1:]).all()


@pytest.mark.parametrize(
    "raw, param, words",
    [
        ({"kernel": "1,2,3"}, "kernel", "needs C × num_output_maps/num_groups × kernel_size_nd = 1 × 1 × 3 × 3 = 9"),
        ({"num_output_maps": 2, "bias": "1,2,3"}, "bias", "needs 1 or num_output_maps=2 values"),
        ({"padding_nd": "3,0"}, "padding_nd", "on axis h crops 3 + 3 cells of 5: the output would be empty"),
        ({"post_padding": "0,5"}, "post_padding", "on axis w crops 0 + 5 cells of 5"),
        ({"pre_padding": "0,0", "post_padding": "0,5"}, "post_padding", "on axis w crops 0 + 5 cells of 5"),
        ({"pre_padding": "1,0", "padding_nd": "0,5"}, "padding_nd", "on axis w crops 0 + 5 cells of 5"),
        ({"num_output_maps": 3, "num_groups": 2}, "num_groups", "must divide the input channels C=1"),
    ],
)
def test_rules_name_the_parameter(raw, param, words):
    with pytest.raises(ValidationError) as err:
        LAYER.resolve(raw, X.shape)
    assert err.value.param == param and words in str(err.value)


def test_the_picked_cell_is_the_transposed_window():
    p = LAYER.resolve({"stride_nd": "2,2"}, X.shape)
    y = LAYER.reference(X, p)
    assert LAYER.reads(p, X.shape, (0, 0, 2, 2)) == [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0), (0, 0, 1, 1)]
    assert LAYER.reads(p, X.shape, (0, 0, 1, 1)) == [(0, 0, 0, 0)]
    cell = LAYER.cell(X, p, (0, 0, 2, 2), y)
    assert cell.line == "5·1 + 4·1 + 2·1 + 1·1 = **12**" and "4 of the kernel's 9 taps" in cell.notes[0]
    assert [r["tap"] for r in cell.rows] == ["(0, 0)", "(0, 2)", "(2, 0)", "(2, 2)"]
    gaps = LAYER.resolve({"kernel_size_nd": "1,1", "stride_nd": "2,2", "bias": 0.5}, X.shape)
    assert LAYER.reads(gaps, X.shape, (0, 0, 1, 1)) == []
    assert (
        LAYER.cell(X, gaps, (0, 0, 1, 1), LAYER.reference(X, gaps)).line
        == "no input cell lands here: bias 0.5 = **0.5**"
    )
    x2 = np.arange(1, 19, dtype=np.float32).reshape(1, 2, 3, 3)
    grouped = LAYER.resolve({"num_output_maps": 2, "num_groups": 2}, x2.shape)
    assert {c[1] for c in LAYER.reads(grouped, x2.shape, (0, 1, 2, 2))} == {1}
    assert "input channels 1–1" in LAYER.cell(x2, grouped, (0, 1, 2, 2), LAYER.reference(x2, grouped)).notes[1]


SPREAD = [
    {},
    {"stride_nd": "2,2", "kernel": "random", "bias": "0.25"},
    {"kernel_size_nd": "4,4", "stride_nd": "2,2", "padding_nd": "1,1", "kernel": "bilinear"},
    {"stride_nd": "2,2", "padding_mode": "SAME_LOWER"},
    {"dilation_nd": "2,1", "pre_padding": "1,0", "post_padding": "0,1"},
    {"precision": "FP16", "stride_nd": "2,2"},
    {"precision": "TF32"},
]


@needs_trt
@pytest.mark.parametrize("raw", SPREAD, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "defaults")
def test_tensorrt_builds_and_agrees_on_the_output_shape(raw, tmp_path):
    from playground.trt.cache import EngineCache

    r = evaluate("deconvolution", raw, cache=EngineCache(tmp_path))
    assert r.error is None and r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape


@needs_trt
@pytest.mark.parametrize(
    "raw, shape",
    [
        ({"num_output_maps": 4, "num_groups": 2, "stride_nd": "2,2", "kernel": "random"}, (1, 2, 3, 4)),
        ({"kernel_size_nd": "2,2,2", "stride_nd": "2,2,2"}, (1, 1, 2, 2, 2)),
    ],
)
def test_tensorrt_builds_groups_and_3d(raw, shape, tmp_path):
    from playground.trt.cache import EngineCache

    x = np.arange(1, 1 + np.prod(shape), dtype=np.float32).reshape(shape)
    r = evaluate("deconvolution", raw, x, cache=EngineCache(tmp_path))
    assert r.error is None and tuple(r.report.output_shape) == r.reference.shape
