"""IActivationLayer: `add_activation(x, type)` with `.alpha` and `.beta`."""

from __future__ import annotations

import math

import numpy as np

from ..base import reference as ref
from ..base.examples import EXACT_SMALL, Preset, lesson, spec_input, table
from ..base.inputs import centered_ramp
from ..base.layer import Layer
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param
from ..base.section import Chart, Code, Note, Text

# (alpha, beta) as TensorRT's add_activation sets them for each type; CLIP's own default is
# ±FLT_MAX (no clipping), so the playground starts it at the spec's example, (-2, 2).
DEFAULTS = {
    "RELU": (0.0, 0.0),
    "SIGMOID": (0.0, 0.0),
    "TANH": (0.0, 0.0),
    "LEAKY_RELU": (0.01, 0.0),
    "ELU": (1.0, 0.0),
    "SELU": (1.6732632, 1.0507010),
    "SOFTSIGN": (0.0, 0.0),
    "SOFTPLUS": (1.0, 1.0),
    "CLIP": (-2.0, 2.0),
    "HARD_SIGMOID": (0.2, 0.5),
    "SCALED_TANH": (1.0, 1.0),
    "THRESHOLDED_RELU": (1.0, 0.0),
    "GELU_ERF": (0.0, 0.0),
    "GELU_TANH": (0.0, 0.0),
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


# ONNX's activations: op → (type, its attributes as alpha and beta, with ONNX's defaults).
ONNX_OPS = {
    "Relu": ("RELU", None, None),
    "Sigmoid": ("SIGMOID", None, None),
    "Tanh": ("TANH", None, None),
    "LeakyRelu": ("LEAKY_RELU", ("alpha", 0.01), None),
    "Elu": ("ELU", ("alpha", 1.0), None),
    "Selu": ("SELU", ("alpha", 1.67326319217681884765625), ("gamma", 1.05070102214813232421875)),
    "Softsign": ("SOFTSIGN", None, None),
    "Softplus": ("SOFTPLUS", None, None),
    "HardSigmoid": ("HARD_SIGMOID", ("alpha", 0.2), ("beta", 0.5)),
    "ThresholdedRelu": ("THRESHOLDED_RELU", ("alpha", 1.0), None),
    "Clip": ("CLIP", None, None),
    "Gelu": ("GELU_ERF", None, None),
}


def onnx_read(node: Node) -> dict:
    kind, a, b = ONNX_OPS[node.op]
    raw = {
        "type": kind,
        "alpha": node.attr(*a) if a else DEFAULTS[kind][0],
        "beta": node.attr(*b) if b else DEFAULTS[kind][1],
    }
    if node.op == "Gelu":
        node.only("approximate", ("none", "tanh"), "must be none or tanh")
        raw["type"] = "GELU_TANH" if node.attr("approximate") == "tanh" else "GELU_ERF"
    if node.op == "Clip":  # bounds: inputs from opset 11, attributes before
        bounds = (
            [node.const(i, name, required=False) for i, name in ((1, "min"), (2, "max"))]
            if node.opset >= 11
            else [node.attrs.get("min"), node.attrs.get("max")]
        )
        for name, value in zip(("min", "max"), bounds):
            if value is None:
                raise node.fail(name, "must be given: TensorRT's CLIP takes both bounds (alpha, beta)")
        raw["alpha"], raw["beta"] = (float(np.ravel(v)[0]) for v in bounds)
    return raw


def onnx_differs(node: Node, raw: dict) -> list[str]:
    if raw["type"] == "CLIP" and raw["alpha"] > raw["beta"]:
        return [
            "Clip with min > max: ONNX gives max everywhere, TensorRT's CLIP, max(alpha, min(beta, x)), gives "
            "alpha (min)"
        ]
    return []


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """The ONNX op of the same name and attributes; SCALED_TANH and a SOFTPLUS with alpha or beta ≠ 1 as
    alpha·op(beta·x), CLIP as Clip with its bounds as inputs."""
    kind, alpha, beta = p["type"], p["alpha"], p["beta"]
    if kind in ("SCALED_TANH", "SOFTPLUS"):
        inner = g.op("Mul", [x, g.const(beta)]) if beta != 1 or kind == "SCALED_TANH" else x
        y = g.op("Tanh" if kind == "SCALED_TANH" else "Softplus", [inner])
        return g.op("Mul", [y, g.const(alpha)]) if alpha != 1 or kind == "SCALED_TANH" else y
    if kind == "CLIP":  # max(alpha, min(beta, x)) is alpha everywhere where alpha > beta; ONNX's Clip takes max last
        return g.op("Clip", [x, g.const(alpha), g.const(max(alpha, beta))])
    if kind.startswith("GELU"):
        return g.op("Gelu", [x], approximate="tanh" if kind == "GELU_TANH" else None)
    op, a, b = next((op, a, b) for op, (k, a, b) in ONNX_OPS.items() if k == kind)
    return g.op(op, [x], **({a[0]: alpha} if a else {}), **({b[0]: beta} if b else {}))


# -- examples: the spec's (002_9dc6f1f368def977.txt) and the precision lessons --------------------
ACTIVATION_DOC = "002_9dc6f1f368def977.txt"

ACTIVATION = [
    Preset(
        "relu",
        "activation",
        "ReLU",
        {"type": "RELU"},
        spec_input((1, 1, 3, 3)),
        table("0 0 0 0 0 1 2 3 4", (1, 1, 3, 3)),
        (1, 1, 3, 3),
        EXACT_SMALL,
        f"{ACTIVATION_DOC} § 2 TensorRT Activate 算子实现",
        note="The spec prints only the shapes (1, 1, 3, 3); the values are max(x, 0) of its input arange(-4, 5).",
        printed=False,
    ),
    Preset(
        "clip",
        "activation",
        "CLIP, alpha = -2, beta = 2",
        {"type": "CLIP", "alpha": -2, "beta": 2},
        spec_input((1, 1, 3, 3)),
        table("-2 -2 -2 -1 0 1 2 2 2", (1, 1, 3, 3)),
        (1, 1, 3, 3),
        EXACT_SMALL,
        f"{ACTIVATION_DOC} § 2 TensorRT Activate 算子实现",
        note="The spec shows the construction (type changed to CLIP, alpha -2, beta 2) but no output; "
        "the values are max(-2, min(2, x)) of arange(-4, 5).",
        printed=False,
    ),
]
RAMP_KNEE = {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -3.0, "high": 1.0}  # the lessons' inputs
RAMP_4 = {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -4.0, "high": 4.0}
ACTIVATION += [
    lesson(
        "activation",
        "selu_bf16_knee",
        "SELU near its knee in BF16",
        {"type": "SELU", "precision": "BF16"},
        RAMP_KNEE,
        {"max_abs_error": 0.004162, "max_rel_error": 0.004676, "error_units": 0.5986},
        "SELU on −3 … 1 in BF16: the input is rounded to 8 bits and the output once more. alpha (1.6733) and "
        "beta (1.0507) are attributes of the layer, which a strongly typed network keeps in float32, so "
        "they cost nothing: the error stays near half an ε (2⁻⁷), largest where the negative branch bends.",
    ),
    lesson(
        "activation",
        "gelu_bf16_knee",
        "GELU near its minimum in BF16",
        {"type": "GELU_ERF", "precision": "BF16"},
        RAMP_KNEE,
        {"max_abs_error": 0.002859, "max_rel_error": 0.01822, "error_units": 2.332},
        "GELU on −3 … 1 in BF16: around its minimum (x ≈ −0.75) and its zero the output is small while "
        "the input's rounding is not, so the relative error reaches 2.3 ε.",
    ),
    lesson(
        "activation",
        "int8_saturation",
        "INT8 with a scale too small saturates",
        {"type": "RELU", "precision": "INT8", "quantize_scale": 0.01},
        RAMP_4,
        {"max_abs_error": 2.73, "max_rel_error": 0.6825, "error_units": 86.68},
        "Scale 0.01 gives INT8 the range ±1.27: every input above 1.27 is clamped to 127 steps, so 4 "
        "comes out as 1.27: error 2.73, 273 input steps, or 86.7 steps of the output's own INT8 scale (4/127). "
        "Scale 0 (from the data: amax/127) fixes it.",
    ),
    lesson(
        "activation",
        "int8_tie",
        "INT8 at a tie: the reciprocal scale decides",
        {"type": "CLIP", "alpha": -10, "beta": 10, "precision": "INT8", "quantize_scale": 0.1},
        {"kind": "ramp", "shape": (1, 1, 1, 3), "low": -3.2500002, "high": 3.2500002},
        {"max_abs_error": 0.05, "max_rel_error": 0.01538, "error_units": 1.954},
        "±3.2500002 with scale 0.1 is a tie on the device: TensorRT quantizes by the reciprocal scale, "
        "±3.2500002 × 10 = ±32.500004 in float32, which rounds to ±33 steps (±3.3). Divided by the scale it "
        "would be ±32.5, a tie that ties-to-even takes to ±32 (±3.2): half an input step either way, opposite "
        "sides (1.95 steps of the output's own INT8 scale, 3.25/127). CLIP ±10 passes the values through "
        "unchanged.",
    ),
    lesson(
        "activation",
        "fp8_from_data",
        "FP8 E4M3 with the scale from the data",
        {"type": "RELU", "precision": "FP8", "quantize_scale": 0},
        RAMP_4,
        {"max_abs_error": 0.127, "max_rel_error": 0.05263, "error_units": 0.4211},
        "FP8 E4M3 has 3 mantissa bits: with scale amax/448 every value keeps its range, and is rounded to "
        "within half an ε (2⁻³) of itself.",
    ),
]


# -- the explanations under the stage ----------------------------------------------------------------------
def activation_curve(type: str, alpha: float = 0.0, beta: float = 0.0, x_range=(-6.0, 6.0), n: int = 601):
    """(xs, ys): the activation's transfer curve sampled at n points over x_range (float32, via the reference)."""
    lo, hi = (float(v) for v in x_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or n < 2:
        raise ValueError(f"activation_curve: need a finite x_range with low < high and n >= 2, got {x_range}, n={n}")
    xs = np.linspace(lo, hi, int(n)).astype(np.float32)
    return xs, ref.activation(xs, type, alpha, beta)


def curve_range(x: np.ndarray, base=(-6.0, 6.0), margin: float = 0.1) -> tuple[float, float]:
    """base widened to hold every finite value of x, plus a margin, so the tensor's marks lie on the curve."""
    f = np.asarray(x, dtype=np.float64)
    f = f[np.isfinite(f)]
    lo, hi = float(base[0]), float(base[1])
    if f.size:
        lo, hi = min(lo, float(f.min())), max(hi, float(f.max()))
    pad = (hi - lo) * margin / 2
    return lo - pad, hi + pad


MARKS_SAMPLE = 1 << 16  # values looked at for the marks: np.unique over 8 million pairs took 10 s
MAX_CURVE_MARKS = 2000  # distinct (x, y) marks on the transfer curve; more are strided


def curve_marks(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Distinct (input, output) pairs to mark on the curve, from every `step`-th value of a large tensor."""
    step = max(1, -(-x.size // MARKS_SAMPLE))
    pairs = np.column_stack([np.asarray(x, np.float64).ravel()[::step], np.asarray(y, np.float64).ravel()[::step]])
    pairs = pairs[np.isfinite(pairs).all(axis=1)]
    pairs = np.unique(pairs, axis=0)
    if len(pairs) > MAX_CURVE_MARKS:
        pairs = pairs[:: -(-len(pairs) // MAX_CURVE_MARKS)]
    return pairs[:, 0], pairs[:, 1], step


def section(ev, ctx):
    """The formula, and the transfer curve with the tensor's (input, output) pairs marked on it."""
    from ..base import plots

    p = ev.params
    xs, ys = activation_curve(p["type"], p["alpha"], p["beta"], curve_range(ev.input))
    mx, my, step = curve_marks(ev.input, ev.output)
    fig = plots.transfer_curve_figure(
        xs, ys, marks_x=mx, marks_y=my, theme=ctx.theme, title=f"{p['type']}: transfer curve, the input's values marked"
    )
    of = "the tensor" if step == 1 else f"every {step}th value of the tensor"
    return [
        Text(f"**{p['type']}** with the current parameters:"),
        Code(formula(p)),
        Chart("curve", fig),
        Note(f"Marks: {len(mx)} distinct (input, output) pairs of {of}, output from {ev.output_source}."),
    ]


LAYER = Layer(
    name="activation",
    order=10,
    title="Activation",
    icon=":material/show_chart:",
    summary="y = f(x) elementwise, for every trt.ActivationType; alpha and beta parametrise some types.",
    params=(
        Param(
            "type", "enum", "RELU", "Activation function (trt.ActivationType).", choices=tuple(DEFAULTS), label="Type"
        ),
        Param(
            "alpha",
            "float",
            lambda p, s: DEFAULTS[p["type"]][0],
            "First parameter; its meaning depends on the type.",
            low=-100.0,
            high=100.0,
            step=0.01,
            slide=(-5.0, 5.0),
            used_when=uses("alpha"),
            label="Alpha",
        ),
        Param(
            "beta",
            "float",
            lambda p, s: DEFAULTS[p["type"]][1],
            "Second parameter; its meaning depends on the type.",
            low=-100.0,
            high=100.0,
            step=0.01,
            slide=(-5.0, 5.0),
            used_when=uses("beta"),
            label="Beta",
        ),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=centered_ramp,
    reference=lambda x, p: ref.activation(x, p["type"], p["alpha"], p["beta"]),
    build=build,
    formula=formula,
    ranks=(4, 5),
    onnx=OnnxMap(tuple(ONNX_OPS), onnx_read, onnx_write, onnx_differs, lift="trailing"),
    examples=tuple(ACTIVATION),
    section=section,
)
