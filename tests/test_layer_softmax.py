"""Softmax: hand-computed values, the rules on `axes`, the picked cell, and TensorRT building every axis."""

import math

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect

LAYER = get_layer("softmax")
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


def soft(raw, x):
    return LAYER.reference(x, LAYER.resolve(raw, x.shape))


def test_hand_computed_values():
    x = np.float32([[[[0, 1, 2, 3]]]])
    total = 1 + math.e + math.e**2 + math.e**3
    np.testing.assert_allclose(
        soft({"axes": 8}, x).ravel(), [1 / total, math.e / total, math.e**2 / total, math.e**3 / total], rtol=1e-6
    )
    assert soft({"axes": 2}, x).ravel().tolist() == [1, 1, 1, 1]  # one channel: each line holds one cell


def test_a_shift_changes_nothing_and_large_values_do_not_overflow():
    x = np.random.default_rng(0).uniform(-3, 3, (2, 3, 4, 5)).astype(np.float32)
    for axes in (1, 2, 4, 8):
        y = soft({"axes": axes}, x)
        np.testing.assert_allclose(y.sum(axis=axes.bit_length() - 1), 1, rtol=1e-6)
        np.testing.assert_allclose(soft({"axes": axes}, x + 1000), y, atol=2e-5)  # exp(1000) would be inf


def test_5d_axes_name_depth_height_width():
    x = np.random.default_rng(1).uniform(-1, 1, (1, 2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(soft({"axes": 16}, x).sum(axis=4), 1, rtol=1e-6)
    assert "axis 2 (D)" in LAYER.explain(LAYER.resolve({"axes": 4}, x.shape), x.shape)[0]


@pytest.mark.parametrize(
    "axes, words",
    [(3, "exactly one bit"), (0, "between 1 and 16"), (16, "the input has rank 4"), (6, "exactly one bit")],
)
def test_axes_rules_name_the_parameter(axes, words):
    with pytest.raises(ValidationError) as err:
        LAYER.resolve({"axes": axes}, (1, 2, 3, 4))
    assert err.value.param == "axes" and words in str(err.value)


def test_the_slider_offers_one_bit_per_axis():
    assert LAYER.param("axes").offers({}, (1, 2, 3, 4)) == [1, 2, 4, 8]
    assert LAYER.param("axes").offers({}, (1, 2, 3, 4, 5)) == [1, 2, 4, 8, 16]


def test_the_picked_cell_reads_its_line_along_the_axis():
    x = np.float32([[[[0, 1, 2, 3]]]])
    p = LAYER.resolve({"axes": 8}, x.shape)
    assert LAYER.reads(p, x.shape, (0, 0, 0, 2)) == [(0, 0, 0, w) for w in range(4)]
    cell = LAYER.cell(x, p, (0, 0, 0, 3), LAYER.reference(x, p))
    assert cell.line == "e^0 / (e^-3 + e^-2 + e^-1 + e^0) = **0.6439143**"
    assert [r["share"] for r in cell.rows] == ["0.0320586", "0.08714432", "0.2368828", "0.6439143"]


@needs_trt
@pytest.mark.parametrize("axes, shape", [(1, (2, 3, 4, 5)), (2, None), (4, None), (8, None), (16, (1, 2, 3, 4, 5))])
def test_tensorrt_builds_every_axis_and_agrees_on_the_shape(axes, shape, tmp_path):
    from playground.trt.cache import EngineCache

    x = None if shape is None else np.random.default_rng(0).uniform(-4, 4, shape).astype(np.float32)
    r = evaluate("softmax", {"axes": axes}, x, cache=EngineCache(tmp_path))
    assert r.error is None and r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape
