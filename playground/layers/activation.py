"""IActivationLayer: `add_activation(x, type)` with `.alpha` and `.beta`."""
from __future__ import annotations

from .. import reference as ref
from ..inputs import centered_ramp
from ..examples import EXACT_SMALL, Preset, lesson, spec_input, table
from ..layer import Layer
from ..params import Param

# (alpha, beta) as TensorRT's add_activation sets them for each type; CLIP's own default is
# ±FLT_MAX (no clipping), so the playground starts it at the spec's example, (-2, 2).
DEFAULTS = {
    "RELU": (0.0, 0.0), "SIGMOID": (0.0, 0.0), "TANH": (0.0, 0.0), "LEAKY_RELU": (0.01, 0.0),
    "ELU": (1.0, 0.0), "SELU": (1.6732632, 1.0507010), "SOFTSIGN": (0.0, 0.0), "SOFTPLUS": (1.0, 1.0),
    "CLIP": (-2.0, 2.0), "HARD_SIGMOID": (0.2, 0.5), "SCALED_TANH": (1.0, 1.0),
    "THRESHOLDED_RELU": (1.0, 0.0), "GELU_ERF": (0.0, 0.0), "GELU_TANH": (0.0, 0.0),
}
# Each type's formula; the names it mentions are the parameters it uses.
FORMULAS = {
    "RELU": "y = max(x, 0)",
    "SIGMOID": "y = 1 / (1 + exp(-x))",
    "TANH": "y = tanh(x)",
    "LEAKY_RELU": "y = x if x ≥ 0 else alpha·x",
    "ELU": "y = x if x ≥ 0 else alpha·(exp(x) − 1)",
    "SELU": "y = beta·x if x > 0 else beta·alpha·(exp(x) − 1)",
    "SOFTSIGN": "y = x / (1 + |x|)",
    "SOFTPLUS": "y = alpha·log(exp(beta·x) + 1)",
    "CLIP": "y = max(alpha, min(beta, x))",
    "HARD_SIGMOID": "y = max(0, min(1, alpha·x + beta))",
    "SCALED_TANH": "y = alpha·tanh(beta·x)",
    "THRESHOLDED_RELU": "y = x if x > alpha else 0",
    "GELU_ERF": "y = 0.5·x·(1 + erf(x / √2))",
    "GELU_TANH": "y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))",
}


def uses(name: str):
    return lambda p: name in FORMULAS[p["type"]]


def formula(p: dict) -> str:
    text = FORMULAS[p["type"]]
    for name in ("alpha", "beta"):
        text = text.replace(name, f"({p[name]:g})" if p[name] < 0 else f"{p[name]:g}")
    return text


def build(trt, network, x, p):
    layer = network.add_activation(x, getattr(trt.ActivationType, p["type"]))
    layer.alpha, layer.beta = p["alpha"], p["beta"]
    return layer.get_output(0)


# -- examples: the spec's (002_9dc6f1f368def977.txt) and the precision lessons --------------------
ACTIVATION_DOC = "002_9dc6f1f368def977.txt"

ACTIVATION = [
    Preset("relu", "activation", "ReLU", {"type": "RELU"}, spec_input((1, 1, 3, 3)),
           table("0 0 0 0 0 1 2 3 4", (1, 1, 3, 3)), (1, 1, 3, 3), EXACT_SMALL,
           f"{ACTIVATION_DOC} § 2 TensorRT Activate 算子实现",
           note="The spec prints only the shapes (1, 1, 3, 3); the values are max(x, 0) of its input "
                "arange(-4, 5).", printed=False),
    Preset("clip", "activation", "CLIP, alpha = -2, beta = 2", {"type": "CLIP", "alpha": -2, "beta": 2},
           spec_input((1, 1, 3, 3)), table("-2 -2 -2 -1 0 1 2 2 2", (1, 1, 3, 3)), (1, 1, 3, 3), EXACT_SMALL,
           f"{ACTIVATION_DOC} § 2 TensorRT Activate 算子实现",
           note="The spec shows the construction (type changed to CLIP, alpha -2, beta 2) but no output; "
                "the values are max(-2, min(2, x)) of arange(-4, 5).", printed=False),
]
RAMP_KNEE = {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -3.0, "high": 1.0}  # the lessons' inputs
RAMP_4 = {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -4.0, "high": 4.0}
ACTIVATION += [
    lesson("activation", "selu_bf16_knee", "SELU near its knee in BF16", {"type": "SELU", "precision": "BF16"},
           RAMP_KNEE, {"max_abs_error": 0.0118, "max_rel_error": 0.009075, "error_units": 1.162},
           "SELU on −3 … 1 in BF16: the input, alpha (1.6733) and beta (1.0507) are each rounded to 8 bits, "
           "and the output once more, so the error exceeds one ε (2⁻⁷) where the negative branch bends."),
    lesson("activation", "gelu_bf16_knee", "GELU near its minimum in BF16",
           {"type": "GELU_ERF", "precision": "BF16"}, RAMP_KNEE,
           {"max_abs_error": 0.002859, "max_rel_error": 0.01822, "error_units": 2.332},
           "GELU on −3 … 1 in BF16: around its minimum (x ≈ −0.75) and its zero the output is small while "
           "the input's rounding is not, so the relative error reaches 2.3 ε."),
    lesson("activation", "int8_saturation", "INT8 with a scale too small saturates",
           {"type": "RELU", "precision": "INT8", "quantize_scale": 0.01}, RAMP_4,
           {"max_abs_error": 2.73, "max_rel_error": 0.6825, "error_units": 273.0},
           "Scale 0.01 gives INT8 the range ±1.27: every input above 1.27 is clamped to 127 steps, so 4 "
           "comes out as 1.27 (error 2.73 = 273 steps). Scale 0 (from the data: amax/127) fixes it."),
    lesson("activation", "fp8_from_data", "FP8 E4M3 with the scale from the data",
           {"type": "RELU", "precision": "FP8", "quantize_scale": 0}, RAMP_4,
           {"max_abs_error": 0.127, "max_rel_error": 0.05263, "error_units": 0.4211},
           "FP8 E4M3 has 3 mantissa bits: with scale amax/448 every value keeps its range, and is rounded to "
           "within half an ε (2⁻³) of itself."),
]


LAYER = Layer(
    name="activation",
    order=10,
    title="Activation",
    icon=":material/show_chart:",
    summary="y = f(x) elementwise, for every trt.ActivationType; alpha and beta parametrise some types.",
    params=(
        Param("type", "enum", "RELU", "Activation function (trt.ActivationType).", choices=tuple(DEFAULTS)),
        Param("alpha", "float", lambda p, s: DEFAULTS[p["type"]][0], "First parameter; its meaning depends on the type.",
              low=-100.0, high=100.0, step=0.01, slide=(-5.0, 5.0), used_when=uses("alpha")),
        Param("beta", "float", lambda p, s: DEFAULTS[p["type"]][1], "Second parameter; its meaning depends on the type.",
              low=-100.0, high=100.0, step=0.01, slide=(-5.0, 5.0), used_when=uses("beta")),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=centered_ramp,
    reference=lambda x, p: ref.activation(x, p["type"], p["alpha"], p["beta"]),
    build=build,
    formula=formula,
    ranks=(4, 5),
    examples=tuple(ACTIVATION),
)
