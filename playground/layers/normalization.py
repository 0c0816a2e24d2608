"""INormalizationLayer: `add_normalization(x, scale, bias, axes)` with `.epsilon` and `.num_groups`: layer, instance
and group normalization, y = (x − mean) / √(var + ε) · scale + bias over the axes (per group of channels)."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.box import Box
from ..base.examples import derived, lesson
from ..base.inputs import DIM_NAMES
from ..base.layer import Cell, Input, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param
from .reduce import axes_text, idle_axes


def axes_of(p: dict, rank: int) -> tuple[int, ...]:
    return tuple(a for a in range(rank) if p["axes"] >> a & 1)


def spatial_mask(rank: int) -> int:
    return sum(1 << a for a in range(2, rank))


def check(fail, p, shapes):
    x, g = shapes["x"], p["num_groups"]
    if p["axes"] >= 1 << len(x):
        raise fail("axes", f"names axis {p['axes'].bit_length() - 1}, but the input has rank {len(x)}", p["axes"])
    if g > 1:
        if x[1] % g:
            raise fail("num_groups", f"must divide the {x[1]} channels", g)
        if p["axes"] != spatial_mask(len(x)):
            raise fail(
                "axes",
                f"with groups must be the spatial axes ({axes_text(spatial_mask(len(x)), x)}): "
                "each group is normalised over its channels and those",
                p["axes"],
            )
    names = DIM_NAMES.get(len(x), ())
    for n in ("scale", "bias"):
        s = shapes[n]
        want = "(1, num_groups, 1, …)" if g > 1 else f"broadcastable to the input {x}"
        if len(s) != len(x):
            raise fail(f"input.{n}", f"must have the input's rank {len(x)}: {want}", s)
        for i, (a, b) in enumerate(zip(s, x)):
            ok = (a == (g if i == 1 else 1)) if g > 1 else a in (1, b)
            if not ok:
                raise fail(f"input.{n}", f"is {a} along {names[i] if names else i}: it must be {want}", s)
    return p


def reference(xs, p):
    """(x − mean) / √(var + ε) · scale + bias, the mean and the (population) variance over the axes, per group of
    channels where num_groups > 1; in float64, cast to the result type."""
    x = np.asarray(xs["x"], np.float64)
    g, shape = p["num_groups"], x.shape
    if g > 1:  # (N, G, C/G, spatial…): each group over its channels and the spatial axes
        x = x.reshape(shape[0], g, shape[1] // g, *shape[2:])
        axes = tuple(range(2, x.ndim))
    else:
        axes = axes_of(p, x.ndim)
    with np.errstate(all="ignore"):
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = ((x - mean) / np.sqrt(var + float(np.float32(p["epsilon"])))).reshape(shape)
    scale, bias = (np.asarray(xs[n], np.float64) for n in ("scale", "bias"))
    if g > 1:  # one value per group, for each of its channels
        scale, bias = (np.repeat(v, shape[1] // g, axis=1) for v in (scale, bias))
    return np.asarray(y * scale + bias, dtype=ref.result_type())


def undefined(xs, p):
    """A constant set of values with ε = 0: 0 / 0."""
    if p["epsilon"] > 0:
        return np.zeros(np.shape(xs["x"]), bool)  # the output has the input's shape
    with np.errstate(all="ignore"):
        zero = reference(
            {**xs, "scale": np.ones_like(xs["scale"]), "bias": np.zeros_like(xs["bias"])}, {**p, "precision": "FP32"}
        )
    return ~np.isfinite(zero) & np.isfinite(np.asarray(xs["x"]))


def build(trt, network, xs, p):
    layer = network.add_normalization(xs["x"], xs["scale"], xs["bias"], p["axes"])
    layer.epsilon = p["epsilon"]
    layer.num_groups = p["num_groups"]
    return layer.get_output(0)


def _members(p, shape, index):
    """The input cells output `index` is normalised with: its group (or its line along the axes)."""
    g = p["num_groups"]
    if g > 1:
        per = shape[1] // g
        first = index[1] // per * per
        ranges = [(index[0],), range(first, first + per)] + [range(d) for d in shape[2:]]
    else:
        axes = axes_of(p, len(shape))
        ranges = [range(d) if a in axes else (index[a],) for a, d in enumerate(shape)]
    return Box(ranges)  # a whole group: held as its bounds, not millions of cells


def reads(p, shapes, index):
    def own(n):
        per = shapes["x"][1] // p["num_groups"] if p["num_groups"] > 1 else 1
        return [
            tuple(
                0 if s == 1 else (v // per if a == 1 and p["num_groups"] > 1 else v)
                for a, (v, s) in enumerate(zip(index, shapes[n]))
            )
        ]

    return {"x": _members(p, shapes["x"], index), "scale": own("scale"), "bias": own("bias")}


def cell(xs, p, index, reference_output=None):
    shapes = {n: xs[n].shape for n in xs}
    cells = reads(p, shapes, index)
    values = np.asarray(cells["x"].of(xs["x"]), np.float64).ravel()
    mean, var = values.mean(), ((values - values.mean()) ** 2).mean()
    v = float(xs["x"][tuple(index)])
    s, b = float(xs["scale"][cells["scale"][0]]), float(xs["bias"][cells["bias"][0]])
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    line = (
        f"({precise(v)} − {precise(mean)}) / √({precise(var)} + {precise(p['epsilon'])}) · {precise(s)} + "
        f"{precise(b)} = **{shown}**"
    )
    return Cell(
        line,
        (),
        (
            f"The mean and variance of the {len(values)} cells "
            + ("of its group" if p["num_groups"] > 1 else f"along {axes_text(p['axes'], xs['x'].shape)}")
            + " it is normalised with.",
        ),
    )


def formula(p: dict) -> str:
    per = f", per group of channels ({p['num_groups']} groups)" if p["num_groups"] > 1 else ""
    return f"y = (x − mean) / √(var + ε) · scale + bias over axes {p['axes']}{per}"


def explain(p, shapes):
    x = shapes["x"]
    kind = (
        "group"
        if p["num_groups"] > 1
        else "instance"
        if p["axes"] == spatial_mask(len(x))
        else "layer"
        if p["axes"] == sum(1 << a for a in range(1, len(x)))
        else ""
    )
    return [
        f"{kind.capitalize() + ' normalization' if kind else 'Normalization'} over "
        f"{axes_text(p['axes'], x)}"
        + (f" in {p['num_groups']} groups of {x[1] // p['num_groups']} channels" if p["num_groups"] > 1 else "")
        + f"; scale {shapes['scale']} and bias {shapes['bias']} broadcast over the result.",
        "The layer divides by the spread it measures, so the input's scale drops out: but in FP16 an input past "
        "65 504 is already inf when the layer reads it (BF16's range is float32's).",
    ] + _idle(p, x)


def _idle(p: dict, x: tuple) -> list[str]:
    """Why a choice draws what the default does, where it does: axes of size 1 named beside others, groups of one
    channel each (instance normalization's already)."""
    out, idle = [], idle_axes(p["axes"], x)
    if idle:
        out.append(f"axes: {idle}, of size 1, changes nothing here beside the others (one value's mean is itself).")
    if p["num_groups"] > 1 and x[1] == p["num_groups"]:
        out.append(
            f"num_groups {p['num_groups']} changes nothing here: with C = {x[1]} each group holds one channel, which "
            "instance normalization (num_groups 1) normalizes alone already; more channels per group show it."
        )
    return out


# -- ONNX ------------------------------------------------------------------------------------------------------
def onnx_align(op: str, name: str, shape: tuple, rank: int) -> tuple:
    """InstanceNormalization's and GroupNormalization's scale and bias are 1-D, along C (per group for opset 18's
    GroupNormalization); LayerNormalization's align at the last axis, as ONNX broadcasts."""
    if name != "x" and op in ("InstanceNormalization", "GroupNormalization") and len(shape) == 1:
        return (1,) + tuple(shape) + (1,) * (rank - 2)
    return (1,) * (rank - len(shape)) + tuple(shape)


def onnx_read(node: Node) -> dict:
    rank = len(node.onnx_shape)
    if node.attr("_outputs", 1) > 1:
        raise node.fail("outputs", "Mean and InvStdDev: the layer gives the normalised tensor only")
    eps = float(node.attr("epsilon", 1e-5))
    if node.op == "LayerNormalization":
        axis = int(node.attr("axis", -1))
        if not -rank <= axis < rank:
            raise node.fail("axis", f"must lie in −{rank} … {rank - 1}", axis)
        return {"axes": sum(1 << a for a in range(axis % rank, rank)), "num_groups": 1, "epsilon": eps}
    if node.op == "InstanceNormalization":
        return {"axes": spatial_mask(max(rank, 4)), "num_groups": 1, "epsilon": eps}
    groups = int(node.attr("num_groups"))
    if node.opset >= 21:  # (opsets 18 … 20 scaled per group, as TensorRT does; ONNX deprecates them)
        raise node.fail("scale", "is per channel from opset 21; TensorRT's group normalization scales per group")
    return {"axes": spatial_mask(max(rank, 4)), "num_groups": groups, "epsilon": eps}


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    """The arithmetic itself (any axes, any broadcast scale and bias); with groups on (N, G, the rest), where scale
    and bias hold one value per group (ONNX's GroupNormalization scales per channel from opset 21)."""
    x, scale, bias, shape, groups = xs["x"], xs["scale"], xs["bias"], shapes["x"], p["num_groups"]
    if groups > 1:
        x = g.op("Reshape", [x, g.ints([shape[0], groups, -1])])
        scale, bias = (g.op("Reshape", [v, g.ints([1, groups, 1])]) for v in (scale, bias))
        axes = g.ints([2])
    else:
        axes = g.ints(axes_of(p, len(shape)))
    mean = g.op("ReduceMean", [x, axes], keepdims=1)
    d = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Mul", [d, d]), axes], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.const(np.float32(p["epsilon"]))])])
    y = g.op("Add", [g.op("Mul", [g.op("Div", [d, std]), scale]), bias])
    return g.op("Reshape", [y, g.ints(list(shape))]) if groups > 1 else y


# -- examples ----------------------------------------------------------------------------------------------------
def _x_example(shape):
    """±1 alternating along W, times 1, 2, 3, … per channel: mean 0 along W, variance c² (a clear normalisation)."""
    sign = np.where(np.arange(shape[-1]) % 2 == 0, 1.0, -1.0)
    c = np.arange(1, shape[1] + 1).reshape((1, -1) + (1,) * (len(shape) - 2))
    return np.ascontiguousarray(np.broadcast_to(sign * c, shape), dtype=np.float32)


def _ones(shape):
    return np.ones(shape, np.float32)


def _zeros(shape):
    return np.zeros(shape, np.float32)


SPEC = {
    "x": {"kind": "spec", "shape": (1, 2, 2, 4)},
    "scale": {"kind": "spec", "shape": (1, 2, 1, 1)},
    "bias": {"kind": "spec", "shape": (1, 2, 1, 1)},
}
EPS = 1e-5
ONE = 1 / np.sqrt(1 + EPS)  # ±c / √(c² + ε) ≈ ±1
TWO = 2 / np.sqrt(4 + EPS)
HOW = "means and variances by hand"
LOUD = {
    "x": {"kind": "checkerboard", "shape": (1, 1, 4, 4), "low": -70000.0, "high": 70000.0},
    "scale": {"kind": "constant", "shape": (1, 1, 1, 1), "value": 1.0},
    "bias": {"kind": "constant", "shape": (1, 1, 1, 1), "value": 0.0},
}
EXAMPLES = (
    derived(
        "normalization",
        "instance",
        "Instance normalization: over H, W (axes = 12)",
        {},
        SPEC,
        np.float32([[[[ONE, -ONE] * 2] * 2, [[TWO, -TWO] * 2] * 2]]),
        HOW,
        note="Channel c is ±c with mean 0 and variance c²: each value becomes ±c / √(c² + ε), ±1 to 5 digits.",
    ),
    derived(
        "normalization",
        "layer_chw",
        "Layer normalization: over C, H, W (axes = 14)",
        {"axes": 14},
        SPEC,
        np.float32([[[[1, -1] * 2] * 2, [[2, -2] * 2] * 2]]) / np.sqrt(2.5 + EPS),
        HOW,
        note="Over both channels the mean is 0 and the variance (1 + 4) / 2 = 2.5: ±1 and ±2 over √2.5.",
    ),
    derived(
        "normalization",
        "scale_bias",
        "Scale 3, bias 1 after the normalisation",
        {"axes": 8},
        {
            **SPEC,
            "scale": {"kind": "constant", "shape": (1, 1, 1, 1), "value": 3.0},
            "bias": {"kind": "constant", "shape": (1, 1, 1, 1), "value": 1.0},
        },
        np.float32([[[[1 + 3 * ONE, 1 - 3 * ONE] * 2] * 2, [[1 + 3 * TWO, 1 - 3 * TWO] * 2] * 2]]),
        HOW,
    ),
    derived(
        "normalization",
        "group",
        "Group normalization: 1 group of 2 channels",
        {"num_groups": 2},
        {
            **SPEC,
            "x": {"kind": "spec", "shape": (1, 4, 1, 2)},
            "scale": {"kind": "spec", "shape": (1, 2, 1, 1)},
            "bias": {"kind": "spec", "shape": (1, 2, 1, 1)},
        },
        np.float32([[[[1, -1]], [[2, -2]], [[3, -3]], [[4, -4]]]])
        / np.float32([np.sqrt(2.5 + EPS)] * 2 + [np.sqrt(12.5 + EPS)] * 2).reshape(1, 4, 1, 1),
        HOW,
        note="Channels 1, 2 form group 0 (variance (1 + 4) / 2), channels 3, 4 group 1 (variance (9 + 16) / 2).",
    ),
    lesson(
        "normalization",
        "fp16_overflows",
        "FP16 overflows where BF16 does not",
        {"precision": "FP16"},
        LOUD,
        {"max_abs_error": float("inf")},
        "±70 000 is past FP16's largest value, 65 504: the input's cast gives ±inf, the mean of +inf and −inf is "
        "NaN, and so is every output, where the layer in FP64 gives ±1. In BF16 (float32's range, 8 bits) "
        "70 000 is 70 144 and the output ±1 exactly: normalization divides the scale out.",
        shape=(1, 1, 4, 4),
    ),
)

LAYER = Layer(
    name="normalization",
    order=90,
    title="Normalization",
    icon=":material/equalizer:",
    summary="y = (x − mean) / √(var + ε) · scale + bias over the axes: layer, instance or group normalization.",
    params=(
        Param(
            "axes",
            "int",
            12,
            "Bitmask of the axes the mean and variance are taken over: 2 = C, 4 = H, 8 = W "
            "(4-D); 12 = H, W (instance normalization), 14 = C, H, W (layer normalization).",
            low=1,
            high=31,
            step=1,
            offers=lambda p, s: list(range(1, 1 << len(s))),
            name_of=axes_text,
            label="Axes",
        ),
        Param(
            "num_groups",
            "int",
            1,
            "Groups of channels, each normalised on its own over its channels and the "
            "spatial axes (group normalization); scale and bias then hold one value per group.",
            low=1,
            high=64,
            step=1,
            offers=lambda p, s: [g for g in range(1, s[1] + 1) if s[1] % g == 0],
            label="Groups",
        ),
        Param(
            "epsilon",
            "float",
            1e-5,
            "Added to the variance before the square root.",
            low=0.0,
            high=10.0,
            step=1e-5,
            slide=(0.0, 1.0),
            label="Epsilon",
        ),
    ),
    inputs=(
        Input("x", "The tensor normalised.", example=_x_example),
        Input(
            "scale",
            "Multiplies the result: broadcast to the input (one per group with groups).",
            example_shape=(1, 2, 1, 1),
            example=_ones,
            constant=True,
        ),
        Input(
            "bias",
            "Added last: broadcast to the input (one per group with groups).",
            example_shape=(1, 2, 1, 1),
            example=_zeros,
            constant=True,
        ),
    ),
    example_shape=(1, 2, 2, 4),
    example_input=_x_example,
    reference=reference,
    build=build,
    check=check,
    formula=formula,
    ranks=(4,),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
    undefined=undefined,
    sums=lambda p: True,
    onnx=OnnxMap(
        ("LayerNormalization", "InstanceNormalization", "GroupNormalization"),
        onnx_read,
        onnx_write,
        lift="trailing",
        align=onnx_align,
    ),
)
