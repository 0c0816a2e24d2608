"""ILRNLayer: `add_lrn(x, window, alpha, beta, k)`, local response normalization across channels:
y = x / (k + α/window · Σ x²)^β, the sum over the `window` channels centred on each one (cuDNN's and ONNX's LRN)."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

K_MIN = float(np.float32(1e-5))  # TensorRT's least k, as the float32 it compares (an ONNX attribute reads it so)


def window_rule(w, p, shape):
    return None if w % 2 == 1 else "must be odd: the window is centred on each channel"


def _window(p, c: int, channels: int) -> range:
    half = p["window"] // 2
    return range(max(0, c - half), min(channels, c + half + 1))


def reference(x, p):
    """The sum of squares over the channels in the window (the ones past the edges count as 0), in float64."""
    x = np.asarray(x, np.float64)
    sq, channels = x * x, x.shape[1]
    total = np.stack([sq[:, _window(p, c, channels)].sum(axis=1) for c in range(channels)], axis=1)
    with np.errstate(all="ignore"):
        y = x / (p["k"] + p["alpha"] / p["window"] * total) ** p["beta"]
    return np.asarray(y, dtype=ref.result_type())


def undefined(x, p):
    """0 to a positive power in the denominator (k and the squares all 0 at once cannot be: k ≥ 10⁻⁵, α ≥ 0; kept
    for the rule's sake, a base ≤ 0 has no finite value)."""
    x = np.asarray(x, np.float64)
    sq, channels = x * x, x.shape[1]
    base = p["k"] + p["alpha"] / p["window"] * np.stack(
        [sq[:, _window(p, c, channels)].sum(axis=1) for c in range(channels)], axis=1
    )
    return (base < 0) | (base == 0)


def build(trt, network, x, p):
    return network.add_lrn(x, p["window"], p["alpha"], p["beta"], p["k"]).get_output(0)


def reads(p, shape, index):
    return [tuple(index[:1]) + (c,) + tuple(index[2:]) for c in _window(p, index[1], shape[1])]


def cell(x, p, index, reference_output=None):
    values = [float(x[c]) for c in reads(p, x.shape, index)]
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    squares = " + ".join(f"{precise(v)}²" for v in values)
    line = (
        f"{precise(float(x[tuple(index)]))} / ({precise(p['k'])} + {precise(p['alpha'])}/{p['window']} · "
        f"({squares}))^{precise(p['beta'])} = **{shown}**"
    )
    return Cell(
        line,
        (),
        (f"The {len(values)} channels of the window around channel {index[1]} (those past C's edges are left out).",),
    )


def formula(p: dict) -> str:
    return f"y = x / (k + α/{p['window']} · Σ x² over {p['window']} channels)^β"


def onnx_read(node: Node) -> dict:
    return {
        "window": int(node.attr("size")),
        "alpha": float(node.attr("alpha", 1e-4)),
        "beta": float(node.attr("beta", 0.75)),
        "k": float(node.attr("bias", 1.0)),
    }


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    return g.op("LRN", [x], size=p["window"], alpha=float(p["alpha"]), beta=float(p["beta"]), bias=float(p["k"]))


# -- examples: channels 1, 2, 3, 4 at every position, by hand --------------------------------------------------
X = {"kind": "spec", "shape": (1, 4, 1, 1)}  # 1, 2, 3, 4 along C
EXAMPLES = (
    derived(
        "lrn",
        "window_3",
        "window 3, α = 3, β = 1, k = 1",
        {"window": 3, "alpha": 3.0, "beta": 1.0, "k": 1.0},
        X,
        np.float32([1 / 6, 2 / 15, 3 / 30, 4 / 26]).reshape(1, 4, 1, 1),
        "y = x / (1 + (3/3) Σ x²) by hand",
        note="Channel 0 sums 1² + 2² = 5 (its window starts at the edge): 1 / 6; channel 1: 1 + 4 + 9 = 14, "
        "2 / 15; channel 2: 4 + 9 + 16 = 29, 3 / 30; channel 3: 9 + 16 = 25, 4 / 26.",
    ),
    derived(
        "lrn",
        "window_1_sqrt",
        "window 1, α = 1, β = 0.5, k = 10⁻⁵: nearly x / |x|",
        {"window": 1, "alpha": 1.0, "beta": 0.5, "k": 1e-5},
        X,
        (np.arange(1, 5) / np.sqrt(1e-5 + np.arange(1, 5) ** 2)).reshape(1, 4, 1, 1),
        "y = x / √(k + x²) by hand",
        note="Each channel alone: x / √(10⁻⁵ + x²), 1 to 5 digits (0.999995 for x = 1).",
    ),
)

LAYER = Layer(
    name="lrn",
    order=96,
    title="LRN",
    icon=":material/blur_linear:",
    summary="y = x / (k + α/window · Σ x²)^β, the squares summed over the window of channels around each.",
    params=(
        Param(
            "window",
            "int",
            5,
            "Channels in the window (odd, 1 … 15), centred on each channel.",
            low=1,
            high=15,
            step=2,
            rule=window_rule,
            label="Window",
        ),
        Param(
            "alpha",
            "float",
            1e-4,
            "α: the weight of the sum of squares (divided by the window).",
            low=0.0,
            high=1e3,
            step=1e-4,
            slide=(0.0, 10.0),
            label="Alpha",
        ),
        Param(
            "beta",
            "float",
            0.75,
            "β: the power of the denominator.",
            low=0.01,
            high=10.0,
            step=0.01,
            slide=(0.01, 2.0),
            label="Beta",
        ),
        Param(
            "k",
            "float",
            1.0,
            "k: added to the weighted sum (TensorRT: 10⁻⁵ … 10¹⁰).",
            low=K_MIN,
            high=1e3,
            step=0.01,
            slide=(K_MIN, 10.0),
            label="K",
        ),
    ),
    example_shape=(1, 4, 1, 1),
    example_input=lambda s: arange_pattern(s, 1),
    reference=reference,
    build=build,
    formula=formula,
    ranks=(4,),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    undefined=undefined,
    sums=lambda p: True,
    onnx=OnnxMap(("LRN",), onnx_read, onnx_write, lift="spatial"),
)
