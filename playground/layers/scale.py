"""IScaleLayer: y = (x·scale + shift)^power, through `add_scale_nd` with `channel_axis`."""

from __future__ import annotations

import math

import numpy as np

from ..base import reference as ref
from ..base.examples import EXACT_SMALL, INF, Preset, frozen, lesson, spec_input, table
from ..base.inputs import DIM_NAMES, arange_pattern
from ..base.layer import Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param
from ..base.section import Code, Note, Table, Text

MODES = ("UNIFORM", "CHANNEL", "ELEMENTWISE")
COEFFICIENTS = ("scale", "shift", "power")


def coefficient_count(mode: str, shape: tuple, axis: int) -> int:
    """How many values each coefficient needs: one, one per channel, or one per element from the axis on."""
    return math.prod(ref.scale_coefficient_shape(shape, mode, axis))


def check(fail, p, shape):
    if p["channel_axis"] >= len(shape):
        raise fail("channel_axis", f"must be less than the input rank {len(shape)}", p["channel_axis"])
    want = coefficient_count(p["mode"], shape, p["channel_axis"])
    out = dict(p)
    for name in COEFFICIENTS:
        values = p[name].ravel()
        if values.size == 1:
            values = np.full(want, values[0], np.float32)
        if values.size != want:
            raise fail(
                name,
                f"in {p['mode']} mode needs 1 or {want} values (input {shape}, channel_axis {p['channel_axis']})",
                p[name],
            )
        out[name] = np.ascontiguousarray(values)
    return out


def notes(p):
    fractional = not np.all(np.equal(np.mod(p["power"], 1), 0))
    alike = p["mode"] != "UNIFORM" and all(np.all(p[n] == p[n].ravel()[0]) for n in COEFFICIENTS)
    return (
        [
            "A negative base with a fractional power has no real result: those cells are NaN, "
            "in TensorRT and in the reference alike."
        ]
        if fractional
        else []
    ) + (
        [
            f"mode {p['mode']} changes nothing here: scale, shift and power hold one value each, repeated for every "
            f"{'channel' if p['mode'] == 'CHANNEL' else 'element'}; give each its own values to see it."
        ]
        if alike
        else []
    )


def build(trt, network, x, p):
    layer = network.add_scale_nd(
        x, getattr(trt.ScaleMode, p["mode"]), p["shift"], p["scale"], p["power"], p["channel_axis"]
    )
    return layer.get_output(0)


def _coefficient(name, default, help):
    return Param(
        name,
        "array",
        default,
        help,
        low=-1000.0,
        high=1000.0,
        step=0.1,
        slide=(-10.0, 10.0),
        weight=True,
        label=name.capitalize(),
    )


def formula(p):
    def show(a):
        return (
            f"{a[0]:g}"
            if np.all(a == a[0])
            else "[" + ", ".join(f"{v:g}" for v in a[:4]) + (", …]" if a.size > 4 else "]")
        )

    return f"y = (x·{show(p['scale'])} + ({show(p['shift'])}))^{show(p['power'])}"


# -- examples: the spec's (003_8e3a283905c31e21.txt) and a precision lesson --------------------
SCALE_DOC = "003_8e3a283905c31e21.txt"

HALF_MINUS_7 = table(
    """
    -6.5 -6.  -5.5 -5.  -4.5 -4.  -3.5 -3.  -2.5
    -2.  -1.5 -1.  -0.5  0.   0.5  1.   1.5  2.
     2.5  3.   3.5  4.   4.5  5.   5.5  6.   6.5""",
    (1, 3, 3, 3),
)
SCALE_CHANNEL_TABLE = table(
    """
    -2. -1.5 -1. -0.5 0. 0.5 1. 1.5 2.
    -2. -1.5 -1. -0.5 0. 0.5 1. 1.5 2.
    -2. -1.5 -1. -0.5 0. 0.5 1. 1.5 2.""",
    (1, 3, 3, 3),
)


def _per_nc(values: str) -> np.ndarray:
    """The add_scale_nd tables: a (2, 2) grid of constants, each filling a 3×4 plane."""
    return frozen(np.broadcast_to(table(values, (2, 2, 1, 1)), (2, 2, 3, 4)))


_ZEROS_2234 = {"kind": "constant", "shape": (2, 2, 3, 4), "value": 0.0}
SCALE = [
    Preset(
        "uniform",
        "scale",
        "UNIFORM: scale 0.5, shift -7, power 1",
        {"mode": "UNIFORM", "scale": "0.5", "shift": "-7", "power": "1"},
        spec_input((1, 3, 3, 3)),
        HALF_MINUS_7,
        (1, 3, 3, 3),
        EXACT_SMALL,
        f"{SCALE_DOC} § 初始示例代码",
        note="The section 'mode & scale & shift & power' sets the same values as attributes and prints its "
        "output shape as '(3,3,3)', dropping N: it is (1, 3, 3, 3), as in the initial example.",
    ),
    Preset(
        "channel",
        "scale",
        "CHANNEL: shift (-2.5, -7, -11.5)",
        {"mode": "CHANNEL", "scale": "0.5,0.5,0.5", "shift": "-2.5,-7,-11.5", "power": "1,1,1"},
        spec_input((1, 3, 3, 3)),
        SCALE_CHANNEL_TABLE,
        (1, 3, 3, 3),
        EXACT_SMALL,
        f"{SCALE_DOC} § CHANNEL 和 ELEMENTWISE 级的 scale",
    ),
    Preset(
        "elementwise",
        "scale",
        "ELEMENTWISE: scale 0.5, shift -7 per element",
        {"mode": "ELEMENTWISE", "scale": "0.5", "shift": "-7", "power": "1"},
        spec_input((1, 3, 3, 3)),
        HALF_MINUS_7,
        (1, 3, 3, 3),
        EXACT_SMALL,
        f"{SCALE_DOC} § CHANNEL 和 ELEMENTWISE 级的 scale",
        note="The spec passes np.full((3, 3, 3), …) arrays; one value is broadcast to all 27 the same way. "
        "It prints no table but says the result equals the initial example's.",
        printed=False,
    ),
    Preset(
        "channel_axis_0",
        "scale",
        "add_scale_nd CHANNEL, channel_axis = 0 (N)",
        {"mode": "CHANNEL", "channel_axis": 0, "scale": "1,1", "shift": "2,3", "power": "1,1"},
        _ZEROS_2234,
        _per_nc("2 2 3 3"),
        (2, 2, 3, 4),
        EXACT_SMALL,
        f"{SCALE_DOC} § 使用 add_scale_nd 和 channel_axis",
    ),
    Preset(
        "channel_axis_1",
        "scale",
        "add_scale_nd CHANNEL, channel_axis = 1 (C)",
        {"mode": "CHANNEL", "channel_axis": 1, "scale": "1,1", "shift": "2,3", "power": "1,1"},
        _ZEROS_2234,
        _per_nc("2 3 2 3"),
        (2, 2, 3, 4),
        EXACT_SMALL,
        f"{SCALE_DOC} § 使用 add_scale_nd 和 channel_axis",
    ),
]
SCALE.append(
    lesson(
        "scale",
        "fp16_cube_overflow",
        "FP16: x³ overflows above x ≈ 40.3",
        {"mode": "UNIFORM", "scale": "1", "shift": "0", "power": "3", "precision": "FP16"},
        {"kind": "ramp", "shape": (1, 1, 8, 8), "low": 0.0, "high": 50.0},
        {"max_abs_error": INF, "max_rel_error": INF},
        "power = 3 on 0 … 50 in FP16: 40.3³ is FP16's largest value, 65504, so the last 13 cells (x ≥ 40.5) are "
        "+Inf; BF16 keeps them finite (float32's range) but 8 bits leave an error of about one ε.",
    )
)


# -- the explanations under the stage ----------------------------------------------------------------------
def _coefficients(params: dict, shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scale, shift, power broadcast to the input shape (float64), as ref.scale applies them."""
    coefficients = ref.scale_coefficients(
        shape, params["mode"], params["shift"], params["scale"], params["power"], params["channel_axis"]
    )
    return tuple(np.broadcast_to(c, shape) for c in coefficients)


def undefined(x: np.ndarray, params: dict) -> np.ndarray:
    """The cells whose base x·scale + shift is negative under a fractional power: no real result, NaN in TensorRT
    and in the reference alike."""
    s, t, p = _coefficients(params, x.shape)
    with np.errstate(all="ignore"):
        base = np.asarray(x, np.float64) * s + t
    return (base < 0) & (np.mod(p, 1) != 0)


def scale_nan_explanation(x: np.ndarray, params: dict, reference_output: np.ndarray | None = None) -> str | None:
    """None when y = (x·scale + shift)^power has no NaN; else how many cells are NaN and why, with an example.
    reference_output: y where the caller has it (saves recomputing the layer)."""
    x = np.asarray(x, dtype=np.float32)
    y = reference_output
    if y is None or np.shape(y) != x.shape:
        y = ref.scale(x, params["mode"], params["shift"], params["scale"], params["power"], params["channel_axis"])
    nan = np.isnan(y)
    count = int(nan.sum())
    if not count:
        return None
    s, t, p = _coefficients(params, x.shape)
    with np.errstate(all="ignore"):
        base = x.astype(np.float64) * s + t
    fractional = np.mod(p, 1) != 0
    negative_fractional = nan & (base < 0) & fractional
    from_input = nan & np.isnan(x)
    parts = []
    if negative_fractional.any():
        parts.append(
            f"{int(negative_fractional.sum())} where the base x·scale + shift is negative and the power is "
            f"fractional: a negative number to a fractional power has no real result"
        )
    if from_input.any():
        parts.append(f"{int(from_input.sum())} where the input itself is NaN")
    other = nan & ~negative_fractional & ~from_input
    if other.any():
        parts.append(f"{int(other.sum())} from Inf arithmetic (e.g. Inf·0 or Inf − Inf in x·scale + shift)")
    pick = negative_fractional if negative_fractional.any() else nan
    where = tuple(int(v) for v in np.argwhere(pick)[0])
    example = (
        f"Example: cell {where}: x = {precise(x[where])}, base = {precise(x[where])}·{precise(s[where])} + "
        f"({precise(t[where])}) = {precise(base[where])}, and ({precise(base[where])})^{precise(p[where])} = NaN."
    )
    return (
        f"{count} of {y.size} output cells are NaN, in TensorRT and in the reference alike: "
        + "; ".join(parts)
        + ". "
        + example
    )


def scale_coefficient_rows(params: dict, input_shape: tuple, limit: int = 12) -> tuple[list[dict], str]:
    """Which scale/shift/power applies where: rows (at most `limit`) and a sentence on mode + channel_axis."""
    shape = tuple(int(d) for d in input_shape)
    mode, axis = params["mode"], params["channel_axis"]
    names = DIM_NAMES.get(len(shape), tuple(f"axis{i}" for i in range(len(shape))))
    values = lambda i: {c: float(params[c][i]) for c in ("scale", "shift", "power")}  # noqa: E731
    if mode == "UNIFORM":
        return [
            {"applies to": "every element", **values(0)}
        ], "UNIFORM: one scale, shift and power for the whole tensor."
    count = coefficient_count(mode, shape, axis)
    if mode == "CHANNEL":
        rows = [{"applies to": f"{names[axis]} = {i}", **values(i)} for i in range(min(count, limit))]
        what = (
            f"CHANNEL with channel_axis {axis} ({names[axis]}): one set per index of axis {axis}, "
            f"{count} in all, shared by every other position."
        )
    else:
        sub = shape[axis:]
        label = ", ".join(names[axis:])
        rows = [
            {"applies to": f"({label}) = {tuple(int(v) for v in np.unravel_index(i, sub))}", **values(i)}
            for i in range(min(count, limit))
        ]
        what = (
            f"ELEMENTWISE with channel_axis {axis}: one set per element of axes {axis}… ({label}, shape {sub}), "
            f"{count} in all, repeated over the axes before it."
        )
    if count > limit:
        what += f" First {limit} shown."
    return rows, what


def section(ev, ctx):
    """The formula, why an output is NaN (where one is), and the coefficients each channel or element gets."""
    p = ev.params
    blocks = [Code(formula(p))]
    why = scale_nan_explanation(ev.input, p, reference_output=ev.reference)
    if why:
        blocks.append(Note(why, "warning"))
    rows, what = scale_coefficient_rows(p, ev.input.shape)
    return blocks + [Text(what), Table("coefficients", rows)]


def onnx_read(node: Node) -> dict:
    """BatchNormalization (inference): (x − mean) / √(var + ε) · γ + β is x · s + t per channel, with
    s = γ / √(var + ε) and t = β − mean · s: CHANNEL mode, power 1. Folded as TensorRT's ONNX parser folds it
    (onnx-tensorrt, builtin_op_importers.cpp, BatchNormalization: combinedScale = scale / sqrtf(var + eps),
    combinedBias = bias − mean · combinedScale, in float32, into one kCHANNEL Scale layer): the values its engine
    computes with."""
    if node.attr("training_mode", 0):
        raise node.fail("training_mode", "must be 0: in training mode the statistics come from the batch", 1)
    if node.attr("_outputs", 1) > 1:
        raise node.fail("outputs", "running mean and variance: the layer gives the normalised tensor only")
    gamma, beta, mean, var = (
        np.asarray(node.const(i, what), np.float32)
        for i, what in ((1, "scale"), (2, "B"), (3, "input_mean"), (4, "input_var"))
    )
    s = gamma / np.sqrt(var + np.float32(node.attr("epsilon", 1e-5)))
    return {
        "mode": "CHANNEL",
        "channel_axis": 1,
        "scale": s,
        "shift": beta - mean * s,
        "power": np.ones(s.shape, np.float32),
    }


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """Pow(Add(Mul(x, scale), shift), power), each coefficient shaped to broadcast as the mode says."""
    want = ref.scale_coefficient_shape(shape, p["mode"], p["channel_axis"])
    scaled = g.op("Mul", [x, g.const(p["scale"].reshape(want))])
    return g.op("Pow", [g.op("Add", [scaled, g.const(p["shift"].reshape(want))]), g.const(p["power"].reshape(want))])


LAYER = Layer(
    name="scale",
    order=40,
    title="Scale",
    icon=":material/tune:",
    summary="y = (x·scale + shift)^power with one set of coefficients, one per channel, or one per element.",
    params=(
        Param(
            "mode",
            "enum",
            "UNIFORM",
            "UNIFORM: one set for all elements; CHANNEL: one per channel; ELEMENTWISE: one per element.",
            choices=MODES,
            label="Mode",
        ),
        Param(
            "channel_axis",
            "int",
            1,
            "The axis CHANNEL and ELEMENTWISE count from (add_scale_nd): 0 is N, 1 is C.",
            low=0,
            high=4,
            step=1,
            used_when=lambda p: p["mode"] != "UNIFORM",
            label="Channel axis",
        ),
        _coefficient("scale", [0.5], "Multiplier."),
        _coefficient("shift", [-7.0], "Added after the multiplication."),
        _coefficient("power", [1.0], "Exponent applied last."),
    ),
    example_shape=(1, 3, 3, 3),
    example_input=arange_pattern,
    reference=lambda x, p: ref.scale(x, p["mode"], p["shift"], p["scale"], p["power"], p["channel_axis"]),
    build=build,
    check=check,
    notes=notes,
    formula=formula,
    ranks=(4, 5),
    examples=tuple(SCALE),
    section=section,
    undefined=undefined,
    sums=lambda p: True,
    onnx=OnnxMap(("BatchNormalization",), onnx_read, onnx_write, lift="trailing"),
)
