"""IActivationLayer: `add_activation(x, type)` with `.alpha` and `.beta`."""
from __future__ import annotations

from .. import reference as ref
from ..inputs import centered_ramp
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


LAYER = Layer(
    name="activation",
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
)
