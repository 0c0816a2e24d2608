"""IParametricReLULayer: `add_parametric_relu(x, slopes)` with the slopes from `add_constant`."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import EXACT_SMALL, Preset, spec_input, table
from ..base.inputs import DIM_NAMES, centered_ramp
from ..base.layer import Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param
from ..base.section import Code, Note, Text

GRANULARITY = ("tensor", "channel", "element")
FUSION_NOTE = (
    "Many TensorRT layer fusions that include ReLU have no Parametric ReLU version, so PReLU may run "
    "slower than ReLU or LEAKY_RELU."
)


def slope_shape(granularity: str, shape: tuple) -> tuple:
    """Shape of the slope constant: broadcast over the whole tensor, per channel, or per element."""
    rank = len(shape)
    if granularity == "tensor":
        return (1,) * rank
    if granularity == "channel":
        return (1, shape[1]) + (1,) * (rank - 2)
    return (1,) + tuple(shape[1:])


def _cycled(values):
    return lambda p, s: np.resize(np.array(values, np.float32), slope_shape(p["granularity"], s))


PRESETS = {
    "spec": _cycled([0.5, 1.0, 2.0]),  # the spec's per-channel slopes, repeated
    "leaky": _cycled([0.1]),
    "relu": _cycled([0.0]),
    "identity": _cycled([1.0]),
    "ramp": lambda p, s: np.linspace(
        0.0, 2.0, int(np.prod(slope_shape(p["granularity"], s))), dtype=np.float32
    ).reshape(slope_shape(p["granularity"], s)),
}


def check(fail, p, shape):
    slopes, want = p["slopes"], slope_shape(p["granularity"], shape)
    if slopes.size == 1:
        slopes = np.full(want, slopes.ravel()[0], np.float32)
    elif slopes.size == int(np.prod(want)):
        slopes = slopes.reshape(want)
    elif slopes.ndim == len(shape) and all(a in (1, b) for a, b in zip(slopes.shape, shape)):
        pass  # any other shape broadcastable to the input is what TensorRT accepts too
    else:
        raise fail(
            "slopes",
            f"with granularity {p['granularity']} needs 1 or {int(np.prod(want))} values "
            f"(shape {want}), or an array broadcastable to the input {shape}",
            slopes,
        )
    return {**p, "slopes": np.ascontiguousarray(slopes)}


def build(trt, network, x, p):
    slopes = network.add_constant(p["slopes"].shape, p["slopes"])
    return network.add_parametric_relu(x, slopes.get_output(0)).get_output(0)


# -- examples: the spec's (000_5872977bfab888fc.txt) --------------------
PRELU_DOC = "000_5872977bfab888fc.txt"

PRELU_TABLE = table(
    """
    -2.  -1.5 -1.  -0.5 0. 1. 2. 3. 4.
    -4.  -3.  -2.  -1.  0. 1. 2. 3. 4.
    -8.  -6.  -4.  -2.  0. 1. 2. 3. 4.""",
    (1, 3, 3, 3),
)

PRELU = [
    Preset(
        "spec_per_channel",
        "prelu",
        "slopes (0.5, 1, 2) per channel",
        {"granularity": "channel", "slopes": "0.5,1,2"},
        spec_input((1, 3, 3, 3)),
        PRELU_TABLE,
        (1, 3, 3, 3),
        EXACT_SMALL,
        f"{PRELU_DOC} § 初始示例代码",
        note="The spec's table types the second cell of channel 0 as '-1.5.'; by its own arithmetic "
        "(-3 × 0.5) it is -1.5.",
    ),
]


# -- the explanations under the stage ----------------------------------------------------------------------
def prelu_broadcast(params: dict, input_shape: tuple) -> str:
    """'slopes (1, 3, 1, 1) broadcast over input (1, 3, 3, 3): one slope per channel, repeated along N, H, W'."""
    shape = tuple(int(d) for d in input_shape)
    sshape = tuple(int(d) for d in np.shape(params["slopes"]))
    names = DIM_NAMES.get(len(shape), tuple(f"axis{i}" for i in range(len(shape))))
    per = [n for n, a, b in zip(names, sshape, shape) if a == b and b > 1]
    rest = [n for n in names if n not in per]
    count = int(np.prod(sshape))
    if not per:
        what = "one slope for every element"
    elif per == ["C"]:
        what = f"one slope per channel, repeated along {', '.join(rest)}"
    else:
        what = f"one slope per ({', '.join(per)}) position, repeated along {', '.join(rest)}"
    return f"slopes {sshape} broadcast over input {shape}: {what} ({count} slope value{'s' if count != 1 else ''})."


def section(ev, ctx):
    """How the slopes broadcast over the input, and their values where few."""
    p = ev.params
    blocks = [Text(prelu_broadcast(p, ev.input.shape))]
    slopes = np.asarray(p["slopes"])
    if slopes.size <= 64:
        blocks.append(Code(f"slopes{tuple(slopes.shape)} = [{', '.join(precise(v) for v in slopes.ravel())}]"))
    return blocks + [Note(FUSION_NOTE)]


def onnx_read(node: Node) -> dict:
    """PRelu: the slope, broadcast as NumPy does (aligned at the last axis), is one, per channel or per element.
    Before opset 7 PRelu had no such broadcast: a 1-D slope of C values is one per channel (axis 1), as PyTorch's
    exports of that opset write it."""
    slope = node.const(1, "slope")
    rank = len(node.onnx_shape)
    if node.opset < 7 and slope.ndim == 1 and slope.size > 1 and rank >= 2:
        if slope.size != node.onnx_shape[1]:
            raise node.fail(
                "slope",
                f"has {slope.size} values: before opset 7 a 1-D slope is one per channel, and the input has "
                f"{node.onnx_shape[1]} (axis 1)",
                slope.shape,
            )
        slope = slope.reshape((1, slope.size) + (1,) * (rank - 2))
    if slope.ndim > rank:
        raise node.fail("slope", f"has rank {slope.ndim}, more than the input's {rank}", slope.shape)
    slope = slope.reshape((1,) * (rank - slope.ndim) + slope.shape + (1,) * node.lifted)
    granularity = next((g for g in GRANULARITY if slope.shape == slope_shape(g, node.shape)), "element")
    return {"granularity": "tensor" if slope.size == 1 else granularity, "slopes": slope}


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    return g.op("PRelu", [x, g.const(p["slopes"])])


LAYER = Layer(
    name="prelu",
    order=20,
    title="Parametric ReLU",
    icon=":material/trending_up:",
    summary="y = x if x ≥ 0 else slope·x, the slopes broadcast to the input: one, per channel or per element.",
    params=(
        Param(
            "granularity",
            "enum",
            "channel",
            "Slopes for the whole tensor, one per channel, or one per element.",
            choices=GRANULARITY,
            label="Granularity",
        ),
        Param(
            "slopes",
            "array",
            "spec",
            "Slope of the negative part; a constant tensor broadcast to the input.",
            low=-10.0,
            high=10.0,
            step=0.05,
            presets=PRESETS,
            weight=True,
            label="Slopes",
        ),
    ),
    example_shape=(1, 3, 3, 3),
    example_input=centered_ramp,
    reference=lambda x, p: ref.prelu(x, p["slopes"]),
    build=build,
    check=check,
    formula=lambda p: "y = x if x ≥ 0 else slope·x",
    notes=lambda p: [FUSION_NOTE],
    ranks=(4, 5),
    examples=tuple(PRELU),
    section=section,
    onnx=OnnxMap(("PRelu",), onnx_read, onnx_write, lift="trailing"),
)
