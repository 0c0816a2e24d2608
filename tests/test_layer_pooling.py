"""Pooling: the reference against tables worked out by hand and against a plain loop, the rules, the picked
cell, and TensorRT building a spread of configurations."""

import itertools

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect

LAYER = get_layer("pooling")
X = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


def pooled(raw, x=X):
    return LAYER.reference(x, LAYER.resolve(raw, x.shape))


def loop(x, p):
    """Pooling the slow way: every output cell, every window cell, padding looked up by hand (2-D)."""
    (kh, kw), (sh, sw) = p["window_size_nd"], p["stride_nd"]
    (ph, pw), _ = p["padding_nd"], None
    H, W = x.shape[2:]
    oh, ow = (H + 2 * ph - kh) // sh + 1, (W + 2 * pw - kw) // sw + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for n, c, i, j in itertools.product(range(x.shape[0]), range(x.shape[1]), range(oh), range(ow)):
        cells = [(i * sh - ph + a, j * sw - pw + b) for a in range(kh) for b in range(kw)]
        values = [float(x[n, c, h, w]) for h, w in cells if 0 <= h < H and 0 <= w < W]
        average = sum(values) / (len(values) if p["average_count_excludes_padding"] else len(cells))
        y[n, c, i, j] = {
            "MAX": max(values),
            "AVERAGE": average,
            "MAX_AVERAGE_BLEND": (1 - p["blend_factor"]) * max(values) + p["blend_factor"] * average,
        }[p["type"]]
    return y


def test_hand_computed_tables():
    assert pooled({"stride_nd": "2,2"}).ravel().tolist() == [6, 8, 14, 16]
    # window 2, stride 1 (TensorRT's default stride): 3 × 3 maxima, each the window's bottom-right cell
    assert pooled({}).ravel().tolist() == [6, 7, 8, 10, 11, 12, 14, 15, 16]
    # padding 1, average of the input cells only: the corner window holds 1 alone
    assert pooled({"type": "AVERAGE", "stride_nd": 2, "padding_nd": 1})[0, 0].tolist() == [
        [1, 2.5, 4],
        [7, 8.5, 10],
        [13, 14.5, 16],
    ]
    # the same, padding counted: each divided by 4
    assert pooled({"type": "AVERAGE", "stride_nd": 2, "padding_nd": 1, "average_count_excludes_padding": False})[
        0, 0
    ].tolist() == [[0.25, 1.25, 1], [3.5, 8.5, 5], [3.25, 7.25, 4]]
    # IPoolingLayer::setBlendFactor: (1 − blendFactor)·max + blendFactor·average, default 0 (the max)
    blend = {"type": "MAX_AVERAGE_BLEND", "stride_nd": 2}
    assert pooled({**blend, "blend_factor": 0.25})[0, 0, 0, 0] == 0.75 * 6 + 0.25 * 3.5
    assert pooled(blend).ravel().tolist() == [6, 8, 14, 16]
    assert pooled({**blend, "blend_factor": 1}).ravel().tolist() == [3.5, 5.5, 11.5, 13.5]


def test_the_picked_cell_writes_the_blend_as_tensorrt_documents_it():
    p = LAYER.resolve({"type": "MAX_AVERAGE_BLEND", "stride_nd": 2, "blend_factor": 0.25}, X.shape)
    line = LAYER.cell(X, p, (0, 0, 0, 0), LAYER.reference(X, p)).line
    assert line == "(1 − 0.25)·max 6 + 0.25·average 3.5 = **5.375**"
    assert "(1 − blend_factor)·max + blend_factor·average" in LAYER.param("blend_factor").help
    assert "0.75·max + 0.25·average" in " ".join(LAYER.explain(p, X.shape))


@pytest.mark.parametrize(
    "raw",
    [
        {
            "type": t,
            "window_size_nd": k,
            "stride_nd": s,
            "padding_nd": pad,
            "average_count_excludes_padding": ex,
            "blend_factor": 0.3,
        }
        for t in ("MAX", "AVERAGE", "MAX_AVERAGE_BLEND")
        for k, s, pad in (("2,2", "2,2", "0,0"), ("3,2", "1,2", "1,1"), ("3,3", "2,1", "2,0"))
        for ex in (True, False)
    ],
)
def test_reference_is_the_plain_loop(raw):
    x = np.random.default_rng(1).uniform(-5, 5, (2, 3, 7, 6)).astype(np.float32)
    p = LAYER.resolve(raw, x.shape)
    np.testing.assert_allclose(LAYER.reference(x, p), loop(x, p), rtol=1e-6, atol=1e-6)


def test_3d_pools_across_depth():
    x = np.arange(1, 33, dtype=np.float32).reshape(1, 1, 2, 4, 4)
    y = pooled({"window_size_nd": "2,2,2", "stride_nd": 2}, x)
    assert y.shape == (1, 1, 1, 2, 2) and y.ravel().tolist() == [22, 24, 30, 32]
    assert pooled({"type": "AVERAGE", "window_size_nd": "2,1,1"}, x).ravel().tolist() == list(range(9, 25))


def test_same_upper_pads_the_odd_cell_after():
    p = LAYER.resolve({"window_size_nd": "2,2", "stride_nd": "1,1", "padding_mode": "SAME_UPPER"}, X.shape)
    y = LAYER.reference(X, p)
    assert y.shape == X.shape and y[0, 0, -1].tolist() == [14, 15, 16, 16]  # the last row reads one padding row


@pytest.mark.parametrize(
    "raw, param, words",
    [
        (
            {"type": "AVERAGE", "padding_nd": "2,2"},
            "padding_nd",
            "smaller than window_size_nd (2) when the average excludes padding",
        ),
        ({"type": "MAX_AVERAGE_BLEND", "pre_padding": "0,2"}, "pre_padding", "smaller than window_size_nd"),
        ({"padding_nd": "2,2"}, None, None),  # MAX: TensorRT builds it
        ({"type": "AVERAGE", "padding_nd": "2,2", "average_count_excludes_padding": False}, None, None),
        ({"window_size_nd": "5,2"}, "window_size_nd", "spans 5 cells, more than the padded input"),
        (
            {"window_size_nd": "1,1", "stride_nd": "3,3", "padding_mode": "EXPLICIT_ROUND_UP", "post_padding": "0,0"},
            None,
            None,
        ),
        ({"type": "BLEND"}, "type", "must be one of MAX, AVERAGE, MAX_AVERAGE_BLEND"),
        ({"blend_factor": 1.5}, "blend_factor", "must be between 0 and 1"),
    ],
)
def test_rules_name_the_parameter(raw, param, words):
    if words is None:  # a legal configuration: TensorRT builds it
        LAYER.resolve(raw, X.shape)
        return
    with pytest.raises(ValidationError) as err:
        LAYER.resolve(raw, X.shape)
    assert err.value.param == param and words in str(err.value)


# The configuration: TensorRT-RTX builds it (output 1×1×3×3); only an average that excludes padding is
# refused ("the padding size is larger than or equal to the filter size for exclusive-counting pooling").
PADDING_ONLY = {
    "type": "AVERAGE",
    "window_size_nd": "3,2",
    "stride_nd": "2,2",
    "post_padding": "2,0",
    "padding_mode": "EXPLICIT_ROUND_UP",
    "average_count_excludes_padding": False,
}
X45 = np.arange(1, 21, dtype=np.float32).reshape(1, 1, 4, 5)


def test_a_window_of_padding_only_averages_to_zero_when_padding_counts():
    y = pooled(PADDING_ONLY, X45)
    assert y.shape == (1, 1, 3, 3) and y[0, 0, 2].tolist() == [0, 0, 0]
    p = LAYER.resolve(PADDING_ONLY, X45.shape)
    assert not LAYER.undefined(X45, p).any()
    cell = LAYER.cell(X45, p, (0, 0, 2, 0), y)
    assert cell.line == "0 (padding only) / 4 = **0**" and "average is 0" in cell.notes[-1]
    with pytest.raises(ValidationError) as err:
        LAYER.resolve({**PADDING_ONLY, "average_count_excludes_padding": True}, X45.shape)
    # the padding asked for (2) is fine; ROUND_UP's third row is not
    assert err.value.param == "stride_nd" and "(0 before, 3 after, as EXPLICIT_ROUND_UP pads)" in str(err.value)


def test_a_max_over_padding_only_is_undefined_and_says_so():
    p = LAYER.resolve({**PADDING_ONLY, "type": "MAX"}, X45.shape)
    y = LAYER.reference(X45, p)
    undefined = LAYER.undefined(X45, p)
    assert undefined[0, 0, 2].all() and not undefined[0, 0, :2].any()
    assert np.isnan(y[undefined]).all() and np.isfinite(y[~undefined]).all()
    assert y[0, 0, 0].tolist() == [12, 14, 15]
    cell = LAYER.cell(X45, p, (0, 0, 2, 1), y)
    assert "undefined" in cell.line and "documents no max" in cell.notes[-1]


def test_the_picked_cell_reads_its_window_and_says_how_it_is_made():
    p = LAYER.resolve({"type": "AVERAGE", "stride_nd": 2, "padding_nd": 1}, X.shape)
    y = LAYER.reference(X, p)
    assert LAYER.reads(p, X.shape, (0, 0, 0, 0)) == [(0, 0, -1, -1), (0, 0, -1, 0), (0, 0, 0, -1), (0, 0, 0, 0)]
    cell = LAYER.cell(X, p, (0, 0, 1, 1), y)
    assert cell.line == "(6 + 7 + 10 + 11) / 4 = **8.5**"
    corner = LAYER.cell(X, p, (0, 0, 0, 0), y)
    assert corner.line == "(1) / 1 = **1**" and "3 of padding" in corner.notes[0]
    counted = {**p, "average_count_excludes_padding": False}
    assert LAYER.cell(X, counted, (0, 0, 0, 0), LAYER.reference(X, counted)).line == "(1) / 4 = **0.25**"
    top = {**p, "type": "MAX"}
    assert LAYER.cell(X, top, (0, 0, 2, 2), LAYER.reference(X, top)).line == "max(16) = **16**"


SPREAD = [
    {},
    {"type": "AVERAGE", "stride_nd": "2,2", "padding_nd": "1,1"},
    {"type": "AVERAGE", "padding_nd": "1,1", "average_count_excludes_padding": False},
    {"type": "MAX_AVERAGE_BLEND", "blend_factor": 0.5, "window_size_nd": "3,2", "stride_nd": "1,2"},
    {"window_size_nd": "3,3", "stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"},
    {"stride_nd": "2,2", "padding_mode": "SAME_LOWER"},
    {"pre_padding": "1,0", "post_padding": "0,1"},
    {"precision": "FP16", "type": "AVERAGE"},
]


@needs_trt
@pytest.mark.parametrize("raw", SPREAD, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "defaults")
def test_tensorrt_builds_and_agrees_on_the_output_shape(raw, tmp_path):
    from playground.trt.cache import EngineCache

    r = evaluate("pooling", raw, cache=EngineCache(tmp_path))
    assert r.error is None and r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape


@needs_trt
def test_tensorrt_builds_3d_pooling(tmp_path):
    from playground.trt.cache import EngineCache

    x = np.arange(1, 33, dtype=np.float32).reshape(1, 1, 2, 4, 4)
    r = evaluate("pooling", {"window_size_nd": "2,2,2", "stride_nd": "2,2,2"}, x, cache=EngineCache(tmp_path))
    assert r.error is None and tuple(r.report.output_shape) == (1, 1, 1, 2, 2)
