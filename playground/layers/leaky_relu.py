"""Leaky ReLU three ways: the activation type, a PReLU with one slope, and the spec's
Scale(x·alpha) + Scale(ReLU(x)·(1−alpha)) summed by an ElementWise layer."""
from __future__ import annotations

import numpy as np

from .. import reference as ref
from ..inputs import centered_ramp
from ..examples import EXACT_SMALL, Preset, lesson, spec_input, table
from ..layer import Layer
from ..params import Param

CONSTRUCTIONS = ("activation", "parametric_relu", "scale_relu_sum")


def reference(x, p):
    # Each construction's own float32 arithmetic, so rounding differences between them are real (float64 for the
    # truth, reference.exact).
    t = ref.result_type()
    alpha = np.float32(p["alpha"])
    if p["construction"] == "scale_relu_sum":
        return (x.astype(t) * t(alpha) + ref.activation(x, "RELU").astype(t) * (t(1) - t(alpha))).astype(t)
    if p["construction"] == "parametric_relu":
        return ref.prelu(x, alpha)
    return ref.activation(x, "LEAKY_RELU", float(alpha))


def build(trt, network, x, p):
    alpha = p["alpha"]
    if p["construction"] == "activation":
        layer = network.add_activation(x, trt.ActivationType.LEAKY_RELU)
        layer.alpha = alpha
        return layer.get_output(0)
    if p["construction"] == "parametric_relu":
        ones = (1,) * len(x.shape)
        slope = network.add_constant(ones, np.full(ones, alpha, dtype=np.float32))
        return network.add_parametric_relu(x, slope.get_output(0)).get_output(0)
    # The spec's construction. TensorRT's Python API keeps these weight arrays alive until the
    # build; the C++ original's pitfall was weights on a stack that died before it.
    empty = trt.Weights()
    scaled = network.add_scale(x, trt.ScaleMode.UNIFORM, empty, np.array([alpha], np.float32), empty)
    relu = network.add_activation(x, trt.ActivationType.RELU)
    scaled_relu = network.add_scale(relu.get_output(0), trt.ScaleMode.UNIFORM, empty,
                                    np.array([1.0 - alpha], np.float32), empty)
    total = network.add_elementwise(scaled.get_output(0), scaled_relu.get_output(0), trt.ElementWiseOperation.SUM)
    return total.get_output(0)


# -- examples: the spec's (001_59716ba8d3a90fcb.txt) and a precision lesson --------------------
LEAKY_DOC = "001_59716ba8d3a90fcb.txt"

LEAKY_TABLE = table("-0.4 -0.3 -0.2 -0.1 0. 1. 2. 3. 4.", (1, 1, 3, 3))
_LEAKY_TITLES = {
    "scale_relu_sum": "Scale(x·0.1) + Scale(ReLU(x)·0.9), ElementWise SUM",
    "activation": "ActivationType.LEAKY_RELU, alpha 0.1",
    "parametric_relu": "add_parametric_relu, one slope 0.1",
}
LEAKY_RELU = [
    Preset(c, "leaky_relu", _LEAKY_TITLES[c], {"alpha": 0.1, "construction": c}, spec_input((1, 1, 3, 3)),
           LEAKY_TABLE, (1, 1, 3, 3), EXACT_SMALL, f"{LEAKY_DOC} § 实现方式",
           note="The spec (C++, no run) prints no input or output; the input is the activation spec's "
                "arange(-4, 5) and the values are leaky ReLU's definition, x if x ≥ 0 else 0.1·x. "
                "All three constructions must give them.", printed=False)
    for c in ("scale_relu_sum", "activation", "parametric_relu")
]
LEAKY_RELU.append(lesson(
    "leaky_relu", "bf16_alpha", "BF16's 0.1 is 0.10009765625", {"alpha": 0.1, "precision": "BF16"},
    {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -4.0, "high": 4.0},
    {"max_abs_error": 0.007689, "max_rel_error": 0.007446, "error_units": 0.9531},
    "alpha = 0.1 has no exact BF16 value: the layer multiplies by 0.10009765625, and the ramp's values are "
    "rounded to 8 bits too, so the negative side is off by up to one ε (2⁻⁷) of its value."))


LAYER = Layer(
    name="leaky_relu",
    order=30,
    title="Leaky ReLU",
    icon=":material/call_split:",
    summary="y = x if x ≥ 0 else alpha·x, built three ways that must agree.",
    params=(
        Param("alpha", "float", 0.1, "Slope of the negative part.", low=-2.0, high=2.0, step=0.01),
        Param("construction", "enum", "scale_relu_sum",
              "activation: ActivationType.LEAKY_RELU; parametric_relu: add_parametric_relu with one slope; "
              "scale_relu_sum: Scale(x·alpha) + Scale(ReLU(x)·(1−alpha)), ElementWise SUM.",
              choices=CONSTRUCTIONS),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=centered_ramp,
    reference=reference,
    build=build,
    formula=lambda p: f"y = x if x ≥ 0 else {p['alpha']:g}·x",
    ranks=(4, 5),
    examples=tuple(LEAKY_RELU),
)
