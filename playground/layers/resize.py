"""IResizeLayer: `add_resize(x)` to an output `shape` or by `scales`, NEAREST / LINEAR / CUBIC, with TensorRT's
coordinate transformations, nearest rounding, cubic coefficient, exclude_outside and single-pixel selector.

Each spatial axis is resampled on its own (separable): an output coordinate maps back to a fractional input
coordinate, and the mode weighs the input cells around it (indices past the edge read the edge cell).
"""

from __future__ import annotations

import math

import numpy as np

from ..base import reference as ref
from ..base.errors import EMPTY_OUTPUT, Stricter
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param, spatial_names

MODES = ("NEAREST", "LINEAR", "CUBIC")
TRANSFORMS = ("ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL")
ROUNDINGS = ("HALF_UP", "HALF_DOWN", "FLOOR", "CEIL")
SELECTORS = ("FORMULA", "UPPER")
MAX_SIZE = 512
# TensorRT's formulas (trt.ResizeCoordinateTransformation), with r = length_original / length_resized.
FORMULAS = {
    "ALIGN_CORNERS": "x · (in − 1) / (out − 1)",
    "ASYMMETRIC": "x · in / out",
    "HALF_PIXEL": "(x + 0.5) · in / out − 0.5",
}


def output_size(p: dict, shape: tuple) -> tuple:
    """The output's spatial size: `shape`, or floor(input × scale) per axis, multiplied in float32 as TensorRT
    does (10 × 0.7 is 7 in float32 but 6.9999999 in float64; TensorRT-RTX's builder gives 7)."""
    if p["scales"] is None:
        return tuple(p["shape"])
    return tuple(int(np.floor(np.float32(n) * np.float32(s))) for n, s in zip(shape[2:], p["scales"]))


def _at_zero(p: dict, n_out: int) -> bool:
    """An axis resized to one cell samples coordinate 0: UPPER's rule; ALIGN_CORNERS' formula would divide 0 by 0."""
    return n_out == 1 and (
        p["selector_for_single_pixel"] == "UPPER" or p["coordinate_transformation"] == "ALIGN_CORNERS"
    )


def coordinate(p: dict, x: int, n_in: int, n_out: int) -> float:
    """Where output coordinate x samples the input, as TensorRT maps it (lengths, not the given scales)."""
    if _at_zero(p, n_out):
        return 0.0
    if p["coordinate_transformation"] == "ALIGN_CORNERS":
        return x * (n_in - 1) / (n_out - 1)
    if p["coordinate_transformation"] == "ASYMMETRIC":
        return x * n_in / n_out
    return (x + 0.5) * n_in / n_out - 0.5


def _nearest(p: dict, c: float) -> int:
    rounding = p["nearest_rounding"]
    if rounding == "HALF_UP":
        return math.floor(c + 0.5)
    if rounding == "HALF_DOWN":
        return math.ceil(c - 0.5)
    return math.floor(c) if rounding == "FLOOR" else math.ceil(c)


def cubic_weights(t: float, a: float) -> list[float]:
    """Keys' cubic convolution weights of the cells at floor − 1, floor, floor + 1, floor + 2 for a coordinate
    t past the floor (0 ≤ t < 1), with coefficient a."""

    def near(d):  # |d| ≤ 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(1 + t), near(t), near(1 - t), far(2 - t)]


def taps(p: dict, x: int, n_in: int, n_out: int) -> tuple[float, list[tuple[int, float]]]:
    """Output coordinate x on one axis: its input coordinate, and the (input index, weight) pairs it reads
    (indices clamped to the input; with exclude_outside, cells past the edge weigh 0 and the rest are
    renormalised)."""
    c = coordinate(p, x, n_in, n_out)
    clamp = lambda i: min(max(i, 0), n_in - 1)  # noqa: E731
    if p["resize_mode"] == "NEAREST":
        return c, [(clamp(_nearest(p, c)), 1.0)]
    base = math.floor(c)
    t = c - base
    if p["resize_mode"] == "LINEAR":
        pairs = [(base, 1.0 - t), (base + 1, t)]
    else:
        pairs = list(zip(range(base - 1, base + 3), cubic_weights(t, p["cubic_coeff"])))
        if p["exclude_outside"]:
            pairs = [(i, w) for i, w in pairs if 0 <= i < n_in]
            total = sum(w for _, w in pairs)
            pairs = [(i, w / total) for i, w in pairs]
    merged: dict[int, float] = {}  # cells past the edge read the edge cell: one entry per cell read
    for i, w in pairs:
        if w != 0.0:
            merged[clamp(i)] = merged.get(clamp(i), 0.0) + w
    return c, list(merged.items())


def _axis_matrix(p: dict, n_in: int, n_out: int) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    for x in range(n_out):
        for i, w in taps(p, x, n_in, n_out)[1]:
            m[x, i] += w
    return m


def reference(x, p):
    """Resample every spatial axis in turn: output = M · input along it, M holding each output cell's weights."""
    y = np.asarray(x, np.float64)
    for axis, n_out in zip(range(2, y.ndim), output_size(p, x.shape)):
        m = _axis_matrix(p, y.shape[axis], n_out)
        y = np.moveaxis(np.tensordot(m, y, axes=(1, axis)), 0, axis)
    return np.asarray(y, dtype=ref.result_type())


def check(fail, p, shape):
    spatial = len(shape) - 2
    if p["scales"] is not None:
        scales = p["scales"].ravel()
        if scales.size not in (1, spatial):
            raise fail("scales", f"needs one value per spatial axis ({spatial}) or one for all", p["scales"])
        scales = np.ascontiguousarray(np.broadcast_to(scales, (spatial,)))  # one per axis, an array as given
        p = {**p, "scales": scales}
        for ax, n, s, o in zip(spatial_names(len(shape)), shape[2:], scales, output_size(p, shape)):
            if o < 1:
                raise fail(
                    "scales",
                    Stricter(
                        f"on axis {ax} gives floor({n} × {precise(s)}) = 0 cells: the output would be empty",
                        EMPTY_OUTPUT,
                    ),
                    p["scales"],
                )
            if o > MAX_SIZE:
                raise fail(
                    "scales",
                    Stricter(
                        f"on axis {ax} gives {o} cells, more than {MAX_SIZE}",
                        "the playground's cap on an axis, as shape's range",
                    ),
                    p["scales"],
                )
    out = output_size(p, shape)
    if p["resize_mode"] == "CUBIC" and spatial == 3 and out[0] != shape[2]:
        name = "shape" if p["scales"] is None else "scales"
        raise fail(
            name,
            Stricter(
                f"CUBIC (bicubic) resizes H and W only: D must stay {shape[2]} (it would be {out[0]})",
                "TensorRT documents CUBIC for the two innermost axes; its builder "
                "accepts a 3-D one, with no documented result",
            ),
            p[name],
        )
    return p


def cost(p, shape):
    output = tuple(shape[:2]) + output_size(p, shape)
    per = {"NEAREST": 1, "LINEAR": 2, "CUBIC": 4}[p["resize_mode"]] ** (len(shape) - 2)
    return (
        output,
        int(np.prod(output)) * per,
        f"{int(np.prod(output)):,} outputs × up to {per} cells each",
        "shape or scales, or the input size",
    )


def formula(p):
    return f"{p['coordinate_transformation']}: x_original = {FORMULAS[p['coordinate_transformation']]}"


def _axis_taps(p, shape, index):
    """Per spatial axis: (name, input size, output size, coordinate, [(input index, weight)])."""
    out = output_size(p, shape)
    names = spatial_names(len(shape))
    return [(ax, n, o, *taps(p, x, n, o)) for ax, n, o, x in zip(names, shape[2:], out, index[2:])]


def _arithmetic(p, x, n_in, n_out) -> str:
    """The coordinate formula with this axis's numbers in it."""
    if _at_zero(p, n_out):
        return "one output cell, coordinate 0"
    return {
        "ALIGN_CORNERS": f"{x} · ({n_in} − 1) / ({n_out} − 1)",
        "ASYMMETRIC": f"{x} · {n_in} / {n_out}",
        "HALF_PIXEL": f"({x} + 0.5) · {n_in} / {n_out} − 0.5",
    }[p["coordinate_transformation"]]


def reads(p, shape, index):
    """The input cells output (n, c, [d,] h, w) is weighed from: every combination of each axis's taps."""
    cells = [tuple(index[:2])]
    for *_, pairs in _axis_taps(p, shape, index):
        cells = [c + (i,) for c in cells for i, _ in pairs]
    return cells


def cell(x, p, index, reference_output=None):
    """Each axis's coordinate and taps, and the weighted sum of the cells they pick."""
    axes = _axis_taps(p, x.shape, index)
    terms = [(tuple(index[:2]), 1.0)]
    for *_, pairs in axes:
        terms = [(c + (i,), w * v) for c, w in terms for i, v in pairs]
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    if p["resize_mode"] == "NEAREST":
        line = f"input {terms[0][0][2:]} = **{shown}**"
    elif len(terms) <= 8:
        line = " + ".join(f"{precise(w)}·{precise(float(x[c]))}" for c, w in terms) + f" = **{shown}**"
    else:
        line = f"Σ of {len(terms)} weighted input cells = **{shown}**"
    notes = []
    for (ax, n, o, c, pairs), x_out in zip(axes, index[2:]):
        picked = (
            f"{p['nearest_rounding']} → cell {pairs[0][0]}"
            if p["resize_mode"] == "NEAREST"
            else "cells " + ", ".join(f"{i} (× {precise(w)})" for i, w in pairs)
        )
        edge = " (past the edge: the edge cell)" if not 0 <= c <= n - 1 else ""
        notes.append(f"{ax} = {x_out}: {_arithmetic(p, x_out, n, o)} = {precise(c)}{edge} → {picked}")
    rows = tuple(
        {
            "input": str(c[2:]),
            "value": precise(float(x[c])),
            "weight": precise(w),
            "weight × value": precise(w * float(x[c])),
        }
        for c, w in terms
    )
    return Cell(line, rows, tuple(notes))


def explain(p, shape):
    out = output_size(p, shape)
    names = spatial_names(len(shape))
    sizes = ", ".join(f"{ax} {n} → {o}" for ax, n, o in zip(names, shape[2:], out))
    text = [
        f"**Where each output cell samples** ({sizes}): x_original = {FORMULAS[p['coordinate_transformation']]} "
        f"per axis ({p['coordinate_transformation']})."
    ]
    if p["scales"] is not None:
        text.append(
            "With scales the output size is floor(input × scale), the product taken in float32 (10 × 0.7 "
            "is 7 cells, not 6); the coordinates still follow the "
            "lengths in / out, as TensorRT's formulas are written."
        )
    text.append(
        {
            "NEAREST": f"NEAREST reads the one cell the coordinate rounds to ({p['nearest_rounding']}).",
            "LINEAR": "LINEAR weighs the two cells around the coordinate on every axis by their distance to it; "
            "past the edge it reads the edge cell.",
            "CUBIC": f"CUBIC weighs four cells per axis with Keys' kernel, a = {precise(p['cubic_coeff'])}: the weights "
            "go negative, so the output can leave the input's range. "
            + (
                "exclude_outside drops cells past the edge and renormalises."
                if p["exclude_outside"]
                else "Past the edge it reads the edge cell (exclude_outside off)."
            ),
        }[p["resize_mode"]]
    )
    if 1 not in out and p["selector_for_single_pixel"] != "FORMULA":
        text.append(
            f"selector_for_single_pixel {p['selector_for_single_pixel']} changes nothing here: it decides only an "
            "axis resized to one cell (an output size of 1 shows it)."
        )
    if 1 in out:
        text.append(
            f"An axis resized to one cell samples coordinate 0 under selector_for_single_pixel UPPER; "
            f"here it is {p['selector_for_single_pixel']}."
        )
    return text


def build(trt, network, x, p):
    layer = network.add_resize(x)
    if p["scales"] is None:
        layer.shape = tuple(x.shape[:2]) + tuple(p["shape"])
    else:
        layer.scales = [1.0, 1.0] + [float(s) for s in p["scales"]]  # N and C keep their size
    layer.resize_mode = getattr(trt.InterpolationMode, p["resize_mode"])
    layer.coordinate_transformation = getattr(trt.ResizeCoordinateTransformation, p["coordinate_transformation"])
    layer.nearest_rounding = getattr(trt.ResizeRoundMode, p["nearest_rounding"])
    layer.selector_for_single_pixel = getattr(trt.ResizeSelector, p["selector_for_single_pixel"])
    layer.cubic_coeff = p["cubic_coeff"]
    layer.exclude_outside = p["exclude_outside"]
    return layer.get_output(0)


# ONNX's attribute values and the layer's: coordinate_transformation_mode → (transformation, single-pixel
# selector); nearest_mode → nearest_rounding. ONNX's other modes have no TensorRT equivalent.
ONNX_TRANSFORMS = {
    "half_pixel": ("HALF_PIXEL", "FORMULA"),
    "pytorch_half_pixel": ("HALF_PIXEL", "UPPER"),
    "align_corners": ("ALIGN_CORNERS", "FORMULA"),
    "asymmetric": ("ASYMMETRIC", "FORMULA"),
}
ONNX_ROUNDINGS = {"round_prefer_floor": "HALF_DOWN", "round_prefer_ceil": "HALF_UP", "floor": "FLOOR", "ceil": "CEIL"}


def onnx_read(node: Node) -> dict:
    """Resize (opset 11 on): mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside,
    and scales or sizes (N and C kept)."""
    if node.opset < 11:
        raise node.fail(
            "opset",
            "Resize before opset 11 leaves the coordinate mapping unspecified: export the model at opset 11 or later",
            node.opset,
        )
    ctm = node.attr("coordinate_transformation_mode", "half_pixel")
    if ctm not in ONNX_TRANSFORMS:
        raise node.fail(
            "coordinate_transformation_mode",
            "has no TensorRT equivalent; TensorRT's are " + ", ".join(ONNX_TRANSFORMS),
            ctm,
        )
    node.only("nearest_mode", ONNX_ROUNDINGS, "must be one of " + ", ".join(ONNX_ROUNDINGS))
    node.only("antialias", (0,), "must be 0: TensorRT's resize layer does not antialias")
    node.only(
        "keep_aspect_ratio_policy", ("stretch",), "must be stretch: TensorRT's resize layer takes the sizes as given"
    )
    if node.attr("axes") is not None and sorted(a % len(node.onnx_shape) for a in node.attr("axes")) != list(
        range(2, len(node.onnx_shape))
    ):
        raise node.fail("axes", "must name the spatial axes: the layer resamples H and W (and D)", node.attr("axes"))
    mode = str(node.attr("mode", "nearest")).upper()
    if mode not in MODES:
        raise node.fail("mode", "must be nearest, linear or cubic", mode.lower())
    transform, selector = ONNX_TRANSFORMS[ctm]
    raw = {
        "resize_mode": mode,
        "coordinate_transformation": transform,
        "selector_for_single_pixel": selector,
        "nearest_rounding": ONNX_ROUNDINGS[node.attr("nearest_mode", "round_prefer_floor")],
        "cubic_coeff": node.attr("cubic_coeff_a", -0.75),
        "exclude_outside": bool(node.attr("exclude_outside", 0)),
    }
    scales, sizes = node.const(2, "scales", required=False), node.const(3, "sizes", required=False)
    spatial = len(node.onnx_shape) - 2
    if sizes is not None and sizes.size:
        sizes = [int(v) for v in sizes.ravel()][-spatial - 2 :]
        if tuple(sizes[:2]) != tuple(node.onnx_shape[:2]):
            raise node.fail(
                "sizes",
                f"must keep N and C ({node.onnx_shape[:2]}): the layer resamples the spatial axes",
                tuple(sizes),
            )
        return raw | {"shape": node.spatial("", 1, sizes[2:])}
    if scales is None or not scales.size:
        raise node.fail("scales", "or sizes must be given")
    scales = [float(v) for v in scales.ravel()]
    if len(scales) != len(node.onnx_shape) or scales[:2] != [1.0, 1.0]:
        raise node.fail("scales", "must be 1 for N and C: the layer resamples the spatial axes", tuple(scales))
    return raw | {"scales": (1.0,) * node.lifted + tuple(scales[2:])}


def onnx_differs(node: Node, raw: dict) -> list[str]:
    scales = raw.get("scales")
    if scales is None:
        return []
    off = [
        (n, s)
        for n, s in zip(node.shape[2:], scales)
        if np.float32(n) * np.float32(s) != np.floor(np.float32(n) * np.float32(s))
    ]
    return [
        f"scales: ONNX maps coordinates by the given scale ({precise(s)}), TensorRT's layer by the lengths, "
        f"{n} in / {int(np.floor(np.float32(n) * np.float32(s)))} out"
        for n, s in off[:1]
    ]


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """Resize to `sizes` (the output TensorRT computes, so ONNX maps coordinates by the same lengths)."""
    # The selector decides only HALF_PIXEL's one-cell axes: the other two map output cell 0 to 0 either way.
    selector = p["selector_for_single_pixel"] if p["coordinate_transformation"] == "HALF_PIXEL" else "FORMULA"
    transform = next(k for k, v in ONNX_TRANSFORMS.items() if v == (p["coordinate_transformation"], selector))
    sizes = g.ints(tuple(shape[:2]) + output_size(p, shape))
    return g.op(
        "Resize",
        [x, "", "", sizes],
        mode=p["resize_mode"].lower(),
        coordinate_transformation_mode=transform,
        nearest_mode=next(k for k, v in ONNX_ROUNDINGS.items() if v == p["nearest_rounding"]),
        **(
            {"cubic_coeff_a": p["cubic_coeff"], "exclude_outside": int(p["exclude_outside"])}
            if p["resize_mode"] == "CUBIC"
            else {}
        ),
    )  # ONNX refuses exclude_outside on the others


# -- examples on 1…n: worked out by hand ------------------------------------------------------------------------
HOW = "TensorRT's IResizeLayer formulas on the input 1…n"


def _example(name, title, params, input_shape, expected, note):
    return derived("resize", name, title, params, {"kind": "spec", "shape": input_shape}, expected, HOW, note)


RAMP = [1, 1.25, 1.75, 2]  # 1, 2 resampled to 4 cells under HALF_PIXEL: coordinates −0.25, 0.25, 0.75, 1.25
EXAMPLES = (
    _example(
        "nearest_2x",
        "NEAREST, 2 × 2 → 4 × 4 (the defaults)",
        {"shape": "4,4"},
        (1, 1, 2, 2),
        [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]],
        "ASYMMETRIC maps x to x · 2/4: 0, 0.5, 1, 1.5, and FLOOR reads cells 0, 0, 1, 1.",
    ),
    _example(
        "linear_align_corners",
        "LINEAR, ALIGN_CORNERS, 2 × 2 → 3 × 3",
        {"shape": "3,3", "resize_mode": "LINEAR", "coordinate_transformation": "ALIGN_CORNERS"},
        (1, 1, 2, 2),
        [[[[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]]]],
        "The corners stay on the corners: x · (2 − 1)/(3 − 1) = 0, 0.5, 1; the middle is the mean, 2.5.",
    ),
    _example(
        "linear_half_pixel",
        "LINEAR, HALF_PIXEL, 2 × 2 → 4 × 4",
        {"shape": "4,4", "resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL"},
        (1, 1, 2, 2),
        np.add.outer([0, 0.5, 1.5, 2], RAMP).reshape(1, 1, 4, 4),
        "(x + 0.5) · 2/4 − 0.5 = −0.25, 0.25, 0.75, 1.25: the outer cells clamp to the edge (1 and 2), the "
        "inner ones weigh 0.75/0.25: 1.25 and 1.75 along W; down H each row adds 2 × that.",
    ),
    _example(
        "linear_asymmetric",
        "LINEAR, ASYMMETRIC, 2 × 2 → 4 × 4",
        {"shape": "4,4", "resize_mode": "LINEAR"},
        (1, 1, 2, 2),
        [[[[1, 1.5, 2, 2], [2, 2.5, 3, 3], [3, 3.5, 4, 4], [3, 3.5, 4, 4]]]],
        "x · 2/4 = 0, 0.5, 1, 1.5: the image shifts towards the top left, and the last row and column repeat "
        "the edge (1.5 reads cells 1 and 2, which clamps to 1).",
    ),
    _example(
        "nearest_half_up",
        "NEAREST, HALF_PIXEL, HALF_UP, 4 × 4 → 3 × 3",
        {"shape": "3,3", "coordinate_transformation": "HALF_PIXEL", "nearest_rounding": "HALF_UP"},
        (1, 1, 4, 4),
        [[[[1, 3, 4], [9, 11, 12], [13, 15, 16]]]],
        "(x + 0.5) · 4/3 − 0.5 = 0.167, 1.5, 2.833: HALF_UP takes the tie 1.5 to 2, so rows and columns 0, 2, "
        "3 are read.",
    ),
    _example(
        "nearest_half_down",
        "NEAREST, HALF_PIXEL, HALF_DOWN, 4 × 4 → 3 × 3",
        {"shape": "3,3", "coordinate_transformation": "HALF_PIXEL", "nearest_rounding": "HALF_DOWN"},
        (1, 1, 4, 4),
        [[[[1, 2, 4], [5, 6, 8], [13, 14, 16]]]],
        "The same coordinates; HALF_DOWN takes 1.5 to 1: rows and columns 0, 1, 3.",
    ),
    _example(
        "cubic_overshoot",
        "CUBIC, HALF_PIXEL, 1…4 → 8 cells",
        {"shape": "1,8", "resize_mode": "CUBIC", "coordinate_transformation": "HALF_PIXEL"},
        (1, 1, 1, 4),
        [[[[0.89453125, 1.19140625, 1.66796875, 2.296875, 2.703125, 3.33203125, 3.80859375, 4.10546875]]]],
        "Coordinates −0.25, 0.25, …, 3.25. Keys' weights for a = −0.75 at t = 0.25 are −0.10546875, "
        "0.87890625, 0.26171875, −0.03515625 (at t = 0.75 the same, reversed). They do not keep a straight "
        "line: at 1.25 they give −0.10546875·1 + 0.87890625·2 + 0.26171875·3 − 0.03515625·4 = 2.296875, not "
        "2.25. At the edges the clamped cells bend it further: the first cell is 0.26171875·1 + "
        "0.87890625·1 − 0.03515625·1 − 0.10546875·2 = 0.89453125, below the input's smallest value.",
    ),
    _example(
        "cubic_half",
        "CUBIC, cubic_coeff = −0.5, 1…4 → 8 cells",
        {"shape": "1,8", "resize_mode": "CUBIC", "coordinate_transformation": "HALF_PIXEL", "cubic_coeff": -0.5},
        (1, 1, 1, 4),
        [[[[0.9296875, 1.1796875, 1.7265625, 2.25, 2.75, 3.2734375, 3.8203125, 4.0703125]]]],
        "a = −0.5 (Catmull-Rom): the weights at t = 0.25 are −0.0703125, 0.8671875, 0.2265625, −0.0234375, "
        "whose centre is exactly 0.25, so inside the ramp is kept (2.25, 2.75); only the clamped edges "
        "bend it: 0.2265625·1 + 0.8671875·1 − 0.0234375·1 − 0.0703125·2 = 0.9296875.",
    ),
    _example(
        "cubic_exclude_outside",
        "CUBIC, exclude_outside",
        {"shape": "1,8", "resize_mode": "CUBIC", "coordinate_transformation": "HALF_PIXEL", "exclude_outside": True},
        (1, 1, 1, 4),
        [
            [
                [
                    [
                        0.66796875 / 0.7734375,
                        1.296875 / 1.10546875,
                        1.703125 / 1.03515625,
                        2.296875,
                        2.703125,
                        5 - 1.703125 / 1.03515625,
                        5 - 1.296875 / 1.10546875,
                        5 - 0.66796875 / 0.7734375,
                    ]
                ]
            ]
        ],
        "The cells past the edge weigh 0 and the rest are divided by their sum: the first cell is "
        "(0.87890625·1 − 0.10546875·2) / (0.87890625 − 0.10546875) = 0.8636; the ramp is symmetric, so the last "
        "is 5 − 0.8636. The middle cells read no cell past the edge and keep their values.",
    ),
    _example(
        "single_pixel_upper",
        "LINEAR, HALF_PIXEL, 4 × 4 → 1 × 1, selector UPPER",
        {
            "shape": "1,1",
            "resize_mode": "LINEAR",
            "coordinate_transformation": "HALF_PIXEL",
            "selector_for_single_pixel": "UPPER",
        },
        (1, 1, 4, 4),
        [[[[1]]]],
        "An axis resized to one cell: FORMULA would sample (0 + 0.5) · 4 − 0.5 = 1.5, the mean of cells 1 "
        "and 2 (8.5 here); UPPER samples coordinate 0, the top-left cell.",
    ),
    _example(
        "scales_1_5",
        "scales = 1.5: 2 × 2 → 3 × 3, NEAREST",
        {"scales": "1.5"},
        (1, 1, 2, 2),
        [[[[1, 1, 2], [1, 1, 2], [3, 3, 4]]]],
        "floor(2 × 1.5) = 3 cells per axis; x · 2/3 = 0, 0.67, 1.33 floors to cells 0, 0, 1.",
    ),
)

LAYER = Layer(
    name="resize",
    order=80,
    title="Resize",
    icon=":material/photo_size_select_large:",
    summary="Resample H and W (and D) to an output shape or by scales: nearest, linear or cubic, with TensorRT's "
    "coordinate transformations.",
    params=(
        Param(
            "resize_mode",
            "enum",
            "NEAREST",
            "Interpolation (trt.InterpolationMode): the nearest cell, the two "
            "around the coordinate per axis (linear), or four per axis (cubic; H and W only).",
            choices=MODES,
            label="Mode",
        ),
        Param(
            "scales",
            "array",
            None,
            "Instead of shape (when set): a factor per spatial axis (or one for all); "
            "the output is floor(input × scale).",
            low=0.01,
            high=64.0,
            step=0.01,
            slide=(0.25, 4.0),
            optional=True,
            label="Scales",
        ),
        Param(
            "shape",
            "ints",
            lambda p, s: tuple(min(MAX_SIZE, 2 * n) for n in s[2:]),
            "The output's size per spatial axis (N and C keep theirs).",
            low=1,
            high=MAX_SIZE,
            step=1,
            per_axis=True,
            used_when=lambda p: p["scales"] is None,
            offers=lambda p, s: tuple(min(MAX_SIZE, max(8, 4 * n)) for n in s[2:]),
            label="Output size",
        ),
        Param(
            "coordinate_transformation",
            "enum",
            "ASYMMETRIC",
            "How an output coordinate maps back to the input's (trt.ResizeCoordinateTransformation).",
            choices=TRANSFORMS,
            label="Coordinates",
        ),
        Param(
            "nearest_rounding",
            "enum",
            "FLOOR",
            "NEAREST: how the input coordinate rounds to a cell (trt.ResizeRoundMode).",
            choices=ROUNDINGS,
            used_when=lambda p: p["resize_mode"] == "NEAREST",
            label="Nearest rounding",
        ),
        Param(
            "selector_for_single_pixel",
            "enum",
            "FORMULA",
            "An axis resized to one cell: the formula's coordinate, or 0 (UPPER, the top-left cell).",
            choices=SELECTORS,
            label="Single pixel",
        ),
        Param(
            "cubic_coeff",
            "float",
            -0.75,
            "CUBIC: Keys' coefficient a (−0.75 as PyTorch, −0.5 as TensorFlow).",
            low=-2.0,
            high=0.0,
            step=0.05,
            used_when=lambda p: p["resize_mode"] == "CUBIC",
            label="Cubic coefficient",
        ),
        Param(
            "exclude_outside",
            "bool",
            False,
            "CUBIC: cells past the edge weigh 0 and the other weights are renormalised (off: they read the edge cell).",
            used_when=lambda p: p["resize_mode"] == "CUBIC",
            label="Exclude outside",
        ),
    ),
    example_shape=(1, 1, 4, 4),
    example_input=arange_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    formula=formula,
    ranks=(4, 5),
    sums=lambda p: p["resize_mode"] != "NEAREST",
    onnx=OnnxMap(("Resize",), onnx_read, onnx_write, onnx_differs),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
)
