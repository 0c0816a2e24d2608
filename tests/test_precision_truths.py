"""INT8/FP8 deconvolution quantizes its weights (as the convolution does), and INT8's error unit is the output's
own step."""

import numpy as np
import pytest

from playground.base import precision as P
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect
from playground.trt.engine import _new_builder, network_from_layer

needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")
RANDOM = {"kernel": "random", "stride_nd": "2,2", "num_output_maps": 2}


@pytest.mark.parametrize("precision", ["INT8", "FP8"])
def test_deconvolution_reference_quantizes_its_weights(precision):
    layer = get_layer("deconvolution")
    x = np.linspace(-3, 3, 18, dtype=np.float32).reshape(1, 2, 3, 3)
    ev = evaluate(
        "deconvolution", {**RANDOM, "precision": precision, "quantize_scale": 0.05}, x, run=False, build=False
    )
    p = ev.params
    qx = P.fake_quantize(x, 0.05, precision)
    by_hand = layer.reference(qx, {**p, "precision": "FP32", "kernel": P.fake_quantize(p["kernel"], 0.05, precision)})
    np.testing.assert_array_equal(ev.output, by_hand)
    unquantized = layer.reference(qx, {**p, "precision": "FP32"})
    assert not np.array_equal(ev.output, unquantized)  # the weights' rounding shows
    assert any("on the weights" in m for m in ev.messages)
    line = layer.cell(x, p, (0, 1, 2, 3), ev.output).line  # the picked cell multiplies the quantized values
    w = P.fake_quantize(p["kernel"], 0.05, precision)
    assert any(f"{float(v):g}" in line for v in w[:, 1].ravel() if v not in (0, 1)), line


@needs_trt
@pytest.mark.parametrize("precision", ["INT8", "FP8"])
@pytest.mark.parametrize("shape", [(1, 2, 3, 3), (1, 2, 2, 3, 3)])
def test_deconvolution_network_feeds_quantized_weights_through_set_input(precision, shape, tmp_path):
    from playground.trt.cache import EngineCache

    backend, layer = detect(), get_layer("deconvolution")
    raw = {
        **RANDOM,
        "kernel_size_nd": "3,3" if len(shape) == 4 else "2,3,3",
        "stride_nd": "2,2" if len(shape) == 4 else "1,2,2",
        "precision": precision,
        "quantize_scale": 0.05,
    }
    params = layer.resolve(raw, shape)
    trt = backend.trt
    network, _ = network_from_layer(trt, _new_builder(trt), layer, params, shape)
    layers = [network.get_layer(i) for i in range(network.num_layers)]
    deconv = next(lyr for lyr in layers if lyr.type == trt.LayerType.DECONVOLUTION)
    kernel = deconv.get_input(1)
    producer = next(lyr for lyr in layers if any(lyr.get_output(i).name == kernel.name for i in range(lyr.num_outputs)))
    assert producer.type == trt.LayerType.DEQUANTIZE
    r = evaluate(
        "deconvolution",
        raw,
        np.linspace(-3, 3, int(np.prod(shape)), dtype=np.float32).reshape(shape),
        cache=EngineCache(tmp_path),
        run=False,
    )
    assert r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape


def test_int8_error_units_are_the_outputs_own_steps():
    # the spec's convolution with the scale from the data: the kernel's 10⁴ saturates at 127 · 9/127, and the
    # output is off by nearly its whole range: about 127 of its own steps (not 10⁶ of the input's)
    ev = evaluate("convolution", {"precision": "INT8", "quantize_scale": 0}, run=False, build=False)
    e = ev.precision_error
    step = float(np.float32(np.abs(ev.truth).max() / 127))
    assert e["error_units"] == pytest.approx(e["max_abs_error"] / step)
    assert 100 < e["error_units"] <= 128 and "output steps" in e["unit"] and f"{step:.4g}" in e["unit"]
    # a well-scaled layer that only rounds its input: within one of the output's steps
    fine = evaluate(
        "activation", {"type": "RELU", "precision": "INT8", "quantize_scale": 0}, run=False, build=False
    ).precision_error
    assert fine["error_units"] <= 1.0
    assert P.output_step(np.zeros(3)) == 1.0
