"""ISliceLayer: `add_slice(x, start, shape, stride)` with `.mode` for the coordinates that fall outside the input
(STRICT_BOUNDS, WRAP, CLAMP, FILL with a fill value, REFLECT); negative strides walk backwards."""

from __future__ import annotations

import itertools

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

MODES = ("STRICT_BOUNDS", "WRAP", "CLAMP", "FILL", "REFLECT")
MODE_WORDS = {
    "STRICT_BOUNDS": "every coordinate must lie inside the input",
    "WRAP": "a coordinate outside wraps around (modulo the size)",
    "CLAMP": "a coordinate outside takes the nearest edge cell",
    "FILL": "a coordinate outside reads the fill value",
    "REFLECT": "a coordinate outside is mirrored at the edge cell's centre (the edge is not repeated)",
}


SHAPE_HIGH = 64


def coordinates(p: dict, axis: int) -> np.ndarray:
    """The input coordinates one axis reads, before the mode maps those outside: start + i·stride."""
    return p["start"][axis] + np.arange(p["shape"][axis]) * p["stride"][axis]


def source(mode: str, i, size: int):
    """Where coordinate(s) i read from under `mode`; −1 where FILL reads the fill value."""
    i = np.asarray(i)
    if mode == "WRAP":
        return np.mod(i, size)
    if mode == "CLAMP":
        return np.clip(i, 0, size - 1)
    if mode == "REFLECT":
        if size == 1:
            return np.zeros_like(i)
        period = 2 * (size - 1)
        j = np.mod(i, period)
        return np.where(j < size, j, period - j)
    return np.where((i >= 0) & (i < size), i, -1)  # STRICT_BOUNDS (checked inside) and FILL


def reference(x, p):
    """Gather along every axis; under FILL a coordinate outside on any axis reads the fill value."""
    x = np.asarray(x, np.float64)
    y, outside = x, np.zeros(tuple(p["shape"]), bool)
    for axis, size in enumerate(x.shape):
        i = source(p["mode"], coordinates(p, axis), size)
        y = np.take(y, np.maximum(i, 0), axis=axis)
        along = [1] * x.ndim
        along[axis] = -1
        outside |= (i < 0).reshape(along)
    return np.asarray(np.where(outside, p["fill"], y), dtype=ref.result_type())


def check(fail, p, shape):
    if p["mode"] == "STRICT_BOUNDS":
        for axis, size in enumerate(shape):
            i = coordinates(p, axis)
            if i.min() < 0 or i.max() >= size:
                name = "shape" if 0 <= p["start"][axis] < size else "start"  # a start inside: the shape runs out
                raise fail(
                    name,
                    f"under mode STRICT_BOUNDS, axis {axis} reads coordinates {int(i.min())} … "
                    f"{int(i.max())}, outside 0 … {size - 1}: another mode (WRAP, CLAMP, FILL, REFLECT) "
                    f"reads beyond the input",
                    p[name],
                )
    return p


def cost(p, shape):
    output = tuple(p["shape"])
    return output, int(np.prod(output)), "one per output value", "shape"


def default_shape(shape) -> tuple:
    """Half of each axis (rounded up): a slice with room to move, so that a start slider's first step up, a
    stride's and an output size's either way are valid slices that read other cells, not refusals."""
    return tuple(max(1, -(-n // 2)) for n in shape)


def shape_offered(p, shape):
    """Per axis, the largest shape whose coordinates stay inside the input under STRICT_BOUNDS; other modes read
    beyond it, so None (the declared range)."""
    if p.get("mode") != "STRICT_BOUNDS":
        return None
    tops = []
    for size, s, b in zip(shape, p["stride"], p["start"]):
        room = (size - 1 - b) if s > 0 else b
        if not 0 <= b < size:
            tops.append(1)
        else:  # stride 0 reads the start cell again and again: any shape stays inside
            tops.append(SHAPE_HIGH if s == 0 else max(1, room // abs(s) + 1))
    return tuple(tops)


def reads(p, shape, index):
    """The coordinate output `index` reads (outside the input: drawn dashed) and, if the mode maps it, the cell
    it reads from."""
    at = tuple(int(coordinates(p, a)[i]) for a, i in enumerate(index))
    src = tuple(int(source(p["mode"], v, size)) for v, size in zip(at, shape))
    return [at] if src == at or -1 in src else [at, src]


def region(p, shape):
    """The input cells the slice reads (where its mode maps a coordinate outside, the cell it reads there; FILL's
    outside reads none): the region the stage outlines on the input. The cells' count is the output's at most."""
    if int(np.prod(p["shape"])) > 4096:
        return []
    per_axis = [np.unique(source(p["mode"], coordinates(p, a), n)) for a, n in enumerate(shape)]
    return list(itertools.product(*([int(v) for v in s if v >= 0] for s in per_axis)))


def cell(x, p, index, reference_output=None):
    cells = reads(p, x.shape, index)
    at, src = cells[0], cells[-1]
    inside = all(0 <= v < n for v, n in zip(at, x.shape))
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    if inside:
        line = f"input{at} = **{shown}**"
    elif src == at:  # FILL
        line = f"input{at} is outside: the fill value **{shown}**"
    else:
        line = f"input{at} is outside; {p['mode']} reads input{src} = **{shown}**"
    per_axis = " · ".join(
        f"axis {a}: {p['start'][a]} + {i}·{p['stride'][a]} = {v}" for a, (i, v) in enumerate(zip(index, at))
    )
    return Cell(line, (), (f"Coordinates: {per_axis}.", f"{p['mode']}: {MODE_WORDS[p['mode']]}."))


def explain(p, shape):
    rows = []
    for axis, size in enumerate(shape):
        i = coordinates(p, axis)
        src = source(p["mode"], i, size)
        listed = ", ".join(str(int(v)) for v in i[:10]) + (" …" if i.size > 10 else "")
        mapped = (
            ""
            if np.array_equal(src, i)
            else " → " + ", ".join("fill" if v < 0 else str(int(v)) for v in src[:10]) + (" …" if i.size > 10 else "")
        )
        rows.append(f"axis {axis} (size {size}): {listed}{mapped}")
    inside = all(
        np.array_equal(source(p["mode"], coordinates(p, a), n), coordinates(p, a)) for a, n in enumerate(shape)
    )
    same = (
        [
            f"Every coordinate lies inside the input: mode {p['mode']} changes nothing here (it reads what "
            "STRICT_BOUNDS reads); move the start or the output size past an edge to see what it reads there."
        ]
        if inside and p["mode"] != "STRICT_BOUNDS"
        else []
    )
    return same + [
        f"**{p['mode']}**: {MODE_WORDS[p['mode']]}.",
        "Coordinates read per axis, start + i·stride (→ where the mode maps those outside):\n\n"
        + "\n".join(f"- {r}" for r in rows),
    ]


def build(trt, network, x, p):
    layer = network.add_slice(x, p["start"], p["shape"], p["stride"])
    layer.mode = getattr(trt.SampleMode, p["mode"])
    if p["mode"] == "FILL":  # input 4: the fill value, a scalar of the data's type
        fill = network.add_constant((), np.array(p["fill"], np.float32)).get_output(0)
        layer.set_input(4, network.add_cast(fill, x.dtype).get_output(0))
    return layer.get_output(0)


def onnx_read(node: Node) -> dict:
    """Slice: starts, ends, axes, steps (inputs from opset 10, attributes before) clamped as ONNX clamps them,
    read as the first coordinate, the step and the count per dimension under STRICT_BOUNDS."""
    shape, rank = node.onnx_shape, len(node.onnx_shape)
    if node.opset >= 10:
        starts, ends = node.const(1, "starts"), node.const(2, "ends")
        axes, steps = node.const(3, "axes", required=False), node.const(4, "steps", required=False)
    else:
        starts, ends, axes, steps = node.attr("starts"), node.attr("ends"), node.attr("axes"), None
    starts, ends = [int(v) for v in np.ravel(starts)], [int(v) for v in np.ravel(ends)]
    axes = [int(a) % rank for a in np.ravel(axes)] if axes is not None else list(range(len(starts)))
    steps = [int(v) for v in np.ravel(steps)] if steps is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.fail("starts", "starts, ends, axes and steps must have one value per sliced axis")
    start, stride, size = [0] * len(node.shape), [1] * len(node.shape), list(node.shape)
    for a, s, e, t in zip(axes, starts, ends, steps):
        if t == 0:
            raise node.fail("steps", "must not be 0", t)
        n = shape[a]
        s, e = s + n if s < 0 else s, e + n if e < 0 else e
        s, e = (min(max(s, 0), n), min(max(e, 0), n)) if t > 0 else (min(max(s, 0), n - 1), min(max(e, -1), n - 1))
        start[a], stride[a], size[a] = s, t, max(0, -(-(e - s) // t))
    return {"start": tuple(start), "stride": tuple(stride), "shape": tuple(size), "mode": "STRICT_BOUNDS"}


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """One Slice where every coordinate lies inside and no stride is 0; else a Gather per axis of the cells the
    mode reads (FILL: from the input padded with the fill value)."""
    reads = [coordinates(p, axis) for axis in range(len(shape))]
    inside = all(((r >= 0) & (r < n)).all() for r, n in zip(reads, shape))
    if inside and all(p["stride"]):
        ends = [int(r[-1]) + (1 if s > 0 else -1) for r, s in zip(reads, p["stride"])]
        ends = [e if e >= 0 else -n - 1 for e, n in zip(ends, shape)]  # −1 would count from the end
        return g.op("Slice", [x, g.ints(p["start"]), g.ints(ends), g.ints(range(len(shape))), g.ints(p["stride"])])
    y, offset = x, 0
    if p["mode"] == "FILL":  # one cell of the fill value around the input: outside reads it
        y = g.op("Pad", [x, g.ints([1] * len(shape) * 2), g.const(p["fill"])], mode="constant")
        offset = 1
    for axis, n in enumerate(shape):  # FILL's outside (−1) reads the padding cell before the input, 0
        y = g.op("Gather", [y, g.ints(source(p["mode"], reads[axis], n) + offset)], axis=axis)
    return y


# -- examples on 1 … 20 in a 4 × 5 plane: worked out by hand -------------------------------------------------
X = {"kind": "spec", "shape": (1, 1, 4, 5)}
PLANE = np.arange(1, 21, dtype=np.float32).reshape(4, 5)
AROUND = {"start": "0,0,-1,-1", "shape": "1,1,6,7", "stride": "1,1,1,1"}  # the input and one cell around it


def _example(name, title, params, rows, cols, note, fill=None):
    """The output as the rows and columns of the input it reads (None: the fill value), listed by hand."""
    table = np.array([[fill if r is None or c is None else PLANE[r, c] for c in cols] for r in rows], np.float32)
    return derived("slice", name, title, params, X, table[None, None], "ISliceLayer's rules on the input 1 … 20", note)


EXAMPLES = (
    _example(
        "crop",
        "crop: start (0, 0, 1, 1), shape 2 × 3",
        {"start": "0,0,1,1", "shape": "1,1,2,3"},
        [1, 2],
        [1, 2, 3],
        "Rows 1–2, columns 1–3 of the input.",
    ),
    _example(
        "stride_2",
        "every second row and column",
        {"start": "0,0,0,0", "shape": "1,1,2,3", "stride": "1,1,2,2"},
        [0, 2],
        [0, 2, 4],
        "Rows 0, 2 and columns 0, 2, 4.",
    ),
    _example(
        "reverse_w",
        "stride −1 on W: each row reversed",
        {"start": "0,0,0,4", "shape": "1,1,4,5", "stride": "1,1,1,-1"},
        [0, 1, 2, 3],
        [4, 3, 2, 1, 0],
        "Start at the last column and step back: 4, 3, 2, 1, 0.",
    ),
    _example(
        "wrap",
        "WRAP, one cell around",
        {**AROUND, "mode": "WRAP"},
        [3, 0, 1, 2, 3, 0],
        [4, 0, 1, 2, 3, 4, 0],
        "Row −1 is row 3, row 4 is row 0 (modulo 4); column −1 is 4, column 5 is 0.",
    ),
    _example(
        "clamp",
        "CLAMP, one cell around",
        {**AROUND, "mode": "CLAMP"},
        [0, 0, 1, 2, 3, 3],
        [0, 0, 1, 2, 3, 4, 4],
        "Every coordinate outside takes the edge: the border repeats its neighbour.",
    ),
    _example(
        "reflect",
        "REFLECT, one cell around",
        {**AROUND, "mode": "REFLECT"},
        [1, 0, 1, 2, 3, 2],
        [1, 0, 1, 2, 3, 4, 3],
        "Mirrored at the edge cell: row −1 is row 1, row 4 is row 2 (the edge row is not repeated).",
    ),
    _example(
        "fill",
        "FILL with −1, one cell around",
        {**AROUND, "mode": "FILL", "fill": -1},
        [None, 0, 1, 2, 3, None],
        [None, 0, 1, 2, 3, 4, None],
        "Every cell outside reads the fill value −1.",
        fill=-1,
    ),
)

LAYER = Layer(
    name="slice",
    order=90,
    title="Slice",
    icon=":material/crop:",
    summary="output[i] = input[start + i·stride] per axis; the mode decides what a coordinate outside reads.",
    params=(
        Param(
            "start",
            "ints",
            lambda p, s: (0,) * len(s),
            "First coordinate read, per dimension (may be outside the input, except under STRICT_BOUNDS).",
            low=-16,
            high=64,
            step=1,
            per_dim=True,
            label="Start",
        ),
        Param(
            "stride",
            "ints",
            lambda p, s: (1,) * len(s),
            "Step per dimension; negative walks backwards, 0 repeats the start cell (a broadcast).",
            low=-8,
            high=8,
            step=1,
            per_dim=True,
            label="Stride",
        ),
        Param(
            "shape",
            "ints",
            lambda p, s: default_shape(s),
            "Output size per dimension.",
            low=1,
            high=SHAPE_HIGH,
            step=1,
            per_dim=True,
            offers=shape_offered,
            label="Output size",
        ),
        Param(
            "mode",
            "enum",
            "STRICT_BOUNDS",
            "What a coordinate outside the input reads (trt.SampleMode).",
            choices=MODES,
            aliases={"DEFAULT": "STRICT_BOUNDS"},
            label="Mode",
        ),
        Param(
            "fill",
            "float",
            0.0,
            "FILL: the value read outside the input (the layer's input 4).",
            low=-1e6,
            high=1e6,
            step=0.5,
            slide=(-20.0, 20.0),
            used_when=lambda p: p["mode"] == "FILL",
            weight=True,
            label="Fill value",
        ),  # a constant, cast to the data's type
    ),
    # three images of three channels: every axis has room for a start, a stride and a size to move on the first
    # touch (on an axis of size 1 only the start 0 and a stride that never steps read inside)
    example_shape=(3, 3, 4, 5),
    example_input=arange_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    ranks=(4, 5),
    onnx=OnnxMap(("Slice",), onnx_read, onnx_write, lift="trailing"),
    examples=EXAMPLES,
    reads=reads,
    region=region,
    cell=cell,
    explain=explain,
)
