"""IGatherLayer: `add_gather_v2(data, indices, mode)` in its three modes. DEFAULT (ONNX Gather): the indices pick
whole slices along `axis`, the output the data's shape with that axis replaced by the indices' shape. ELEMENT (ONNX
GatherElements): each output cell copies the data cell its index names along the axis, the output of the indices'
shape. ND (ONNX GatherND): the indices' last axis is a tuple of k coordinates naming a slice of the data after its
`num_elementwise_dims` leading (batch) axes.

One layer with a `mode` parameter, as TensorRT has one IGatherLayer: the inputs, the cast of the indices and the
rules on out-of-range indices are the same in every mode. The page's inputs are 4-D; in DEFAULT and ND the indices
are read as their last `indices_rank` axes (a Shuffle reshapes them in the network), since the output's rank is
data rank + indices rank − 1 (DEFAULT) and the stage draws ranks 1 … 5."""

from __future__ import annotations

import math

import numpy as np

from ..base import reference as ref
from ..base.errors import Stricter
from ..base.examples import derived
from ..base.inputs import DIM_NAMES, arange_pattern
from ..base.layer import Cell, Input, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

MODES = ("ELEMENT", "DEFAULT", "ND")
BLOCK_CELLS = (
    4096  # ND: the most data cells one output cell's outline names (a C of 4096 along one axis, as ELEMENT's line)
)
STAGE_RANKS = "the stage draws tensors of rank 1 … 5 (TensorRT builds up to rank 8)"


def _q(p, shapes) -> int:
    """The rank the indices are read at."""
    return len(shapes["indices"]) if p["mode"] == "ELEMENT" else p["indices_rank"]


def _read(p, shape) -> tuple:
    """The indices' shape as the gather reads it: the last `indices_rank` axes in DEFAULT and ND."""
    q = len(shape) if p["mode"] == "ELEMENT" else p["indices_rank"]
    return tuple(shape[len(shape) - q :])


def output_shape(p, shapes) -> tuple:
    data, idx = tuple(shapes["data"]), _read(p, shapes["indices"])
    if p["mode"] == "ELEMENT":
        return idx
    if p["mode"] == "DEFAULT":
        a = p["axis"]
        return data[:a] + idx + data[a + 1 :]
    b, k = p["num_elementwise_dims"], idx[-1]
    return idx[:-1] + data[b + k :]


def check(fail, p, shapes):
    data, full = shapes["data"], shapes["indices"]
    names = DIM_NAMES.get(len(data), ())
    mode = p["mode"]
    if mode == "ELEMENT":
        axis = p["axis"]
        for a, (d, i) in enumerate(zip(data, full)):
            if a != axis and i > d:
                raise fail(
                    "input.indices",
                    f"is {i} along {names[a] if names else a}, where the data has {d}: off the "
                    "axis gathered along, the indices may not reach past the data",
                    full,
                )
        return p
    q = p["indices_rank"]
    lead = tuple(full[: len(full) - q])
    if any(d != 1 for d in lead):
        raise fail(
            "input.indices",
            f"is {tuple(full)}, read at rank {q} (indices_rank): its first {len(lead)} axes must be 1, the rest "
            "are the indices' shape",
            full,
        )
    idx = _read(p, full)
    if mode == "ND":
        b = p["num_elementwise_dims"]
        if q < 1:
            raise fail("indices_rank", "must be at least 1 in ND mode: the last axis holds each index tuple", q)
        if b >= len(data):
            raise fail("num_elementwise_dims", f"must be below the data's rank {len(data)}", b)
        if b > q - 1:
            raise fail(
                "num_elementwise_dims",
                Stricter(
                    f"must be below the indices' rank {q}: their last axis holds each index tuple",
                    "ONNX's GatherND needs batch_dims below the indices' rank; TensorRT builds more, documenting "
                    "no result for it",
                ),
                b,
            )
        if tuple(idx[:b]) != tuple(data[:b]):
            raise fail(
                "input.indices",
                f"its first {b} axes {tuple(idx[:b])} are batch axes (num_elementwise_dims) and must equal the "
                f"data's {tuple(data[:b])}",
                full,
            )
        k = idx[-1]
        if not 1 <= k <= len(data) - b:
            raise fail(
                "input.indices",
                f"its last axis ({k}) is each index tuple's length: 1 … {len(data) - b} (the data's rank less its "
                f"{b} batch axes)",
                full,
            )
    rank = len(output_shape(p, shapes))
    if not 1 <= rank <= 5:
        raise fail(
            "indices_rank",
            Stricter(
                f"gives an output of rank {rank} ({'data rank + indices rank − 1' if mode == 'DEFAULT' else 'indices rank + data rank − tuple length − 1 − batch axes'}): 1 … 5 here",
                STAGE_RANKS,
            ),
            q,
        )
    return p


def cost(p, shapes):
    out = output_shape(p, shapes)
    return out, math.prod(out), "one per output value", "the indices' size"


def _valid(idx, size):
    """The indices with a documented result: within 0 … size − 1 once cast to INT32, which truncates toward 0
    as TensorRT's Cast does (1.7 → 1, −0.5 → 0; TensorRT documents 0 ≤ index < the axis' length)."""
    t = np.trunc(idx)
    return np.isfinite(t) & (t >= 0) & (t < size)


def _gathered(xs, p):
    """(the gathered values in float64, the output cells whose index has no documented result)."""
    data = np.asarray(xs["data"], np.float64)
    with np.errstate(invalid="ignore"):
        full = np.trunc(np.asarray(xs["indices"], np.float64))  # the build's cast to INT32 truncates
    mode = p["mode"]
    if mode == "ELEMENT":
        axis = p["axis"]
        valid = _valid(full, data.shape[axis])
        safe = np.where(valid, full, 0).astype(np.int64)
        window = data[tuple(slice(0, s) if a != axis else slice(None) for a, s in enumerate(full.shape))]
        return np.take_along_axis(window, safe, axis=axis), ~valid
    idx = full.reshape(_read(p, full.shape))
    if mode == "DEFAULT":
        axis = p["axis"]
        valid = _valid(idx, data.shape[axis])
        y = np.take(data, np.where(valid, idx, 0).astype(np.int64), axis=axis)
        bad = (~valid).reshape((1,) * axis + idx.shape + (1,) * (data.ndim - axis - 1))
        return y, np.broadcast_to(bad, y.shape)
    b, k = p["num_elementwise_dims"], idx.shape[-1]
    batch = math.prod(data.shape[:b])
    tuples = idx.reshape(batch, -1, k)
    sizes = np.asarray(data.shape[b : b + k], np.float64)
    valid = _valid(tuples, sizes).all(axis=-1)
    safe = np.where(valid[..., None], tuples, 0).astype(np.int64)
    slices = data.reshape((batch,) + data.shape[b:])
    picked = np.stack([slices[i][tuple(safe[i].T)] for i in range(batch)])  # (batch, tuples, rest…)
    out = output_shape(p, {"data": data.shape, "indices": full.shape})
    bad = np.broadcast_to((~valid).reshape(valid.shape + (1,) * (picked.ndim - 2)), picked.shape)
    return picked.reshape(out), bad.reshape(out)


def reference(xs, p):
    """The gathered data cells, each index truncated to a whole number as the cast to INT32 does; one outside
    0 … size − 1 (or not finite) gives NaN (no documented result: `undefined`)."""
    y, bad = _gathered(xs, p)
    return np.asarray(np.where(bad, np.nan, y), dtype=ref.result_type())


def undefined(xs, p):
    """An index that, truncated to INT32, is outside 0 … the axis' length − 1 (or is not finite): TensorRT
    documents no result for it (a negative index among them: ONNX counts it from the end)."""
    return np.array(_gathered(xs, p)[1])


def build(trt, network, xs, p):
    indices = network.add_cast(xs["indices"], trt.DataType.INT32).get_output(0)  # float32 in, whole numbers
    if p["mode"] != "ELEMENT":  # the page's 4-D indices read at their own rank: the last indices_rank axes
        dims = tuple(indices.shape)
        shuffle = network.add_shuffle(indices)
        shuffle.reshape_dims = dims[len(dims) - p["indices_rank"] :]
        indices = shuffle.get_output(0)
    layer = network.add_gather_v2(xs["data"], indices, trt.GatherMode.__members__[p["mode"]])
    if p["mode"] == "ND":
        layer.num_elementwise_dims = p["num_elementwise_dims"]
    else:
        layer.axis = p["axis"]
    return layer.get_output(0)


def _where(p, shapes, index):
    """(the index cells output `index` reads, in the 4-D indices' own coordinates; the data cells it may read)."""
    data, full = tuple(shapes["data"]), tuple(shapes["indices"])
    index, mode = tuple(index), p["mode"]
    if mode == "ELEMENT":
        axis = p["axis"]
        line = [index[:axis] + (k,) + index[axis + 1 :] for k in range(data[axis])]
        return [index], line
    lead = (0,) * (len(full) - p["indices_rank"])
    if mode == "DEFAULT":
        axis, q = p["axis"], p["indices_rank"]
        at = index[axis : axis + q]
        line = [index[:axis] + (k,) + index[axis + q :] for k in range(data[axis])]
        return [lead + at], line
    b, q = p["num_elementwise_dims"], p["indices_rank"]
    k = full[-1]
    pos, tail = index[: q - 1], index[q - 1 :]
    cells = [lead + pos + (j,) for j in range(k)]
    if math.prod(data[b : b + k]) > BLOCK_CELLS:  # too many to outline for each output cell: the index cells alone
        return cells, []
    return cells, [pos[:b] + tuple(c) + tail for c in np.ndindex(*data[b : b + k])]


def reads(p, shapes, index):
    """Output `index` reads its own index cell(s); the data cell depends on the index's value, so the map names
    every data cell it may read (the line along the axis; in ND, the block the tuple's axes span, up to BLOCK_CELLS)."""
    cells, data = _where(p, shapes, index)
    return {"data": data, "indices": cells}


def cell(xs, p, index, reference_output=None):
    shapes = {n: xs[n].shape for n in ("data", "indices")}
    cells, _ = _where(p, shapes, index)
    values = [float(xs["indices"][c]) for c in cells]
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    mode, data = p["mode"], xs["data"]
    if mode == "ND":
        b = p["num_elementwise_dims"]
        sizes = data.shape[b : b + len(values)]
    else:
        sizes = (data.shape[p["axis"]],)
    if not all(_valid(np.float64(v), s) for v, s in zip(values, sizes)):
        return Cell(
            f"index {', '.join(precise(v) for v in values)}: **{shown}**",
            (),
            (
                "An index, truncated to a whole number (the cast to INT32), must be in 0 … "
                + ", ".join(str(s - 1) for s in sizes)
                + "; this one has no documented result"
                + (
                    " (ONNX counts a negative index from the end; TensorRT documents 0 … size − 1)."
                    if min(values) < 0
                    else "."
                ),
            ),
        )
    ints = tuple(int(v) for v in values)
    index = tuple(index)
    if mode == "ELEMENT":
        axis = p["axis"]
        at = index[:axis] + ints + index[axis + 1 :]
        why = f"The index {ints[0]} replaces the output's own position along axis {axis}."
    elif mode == "DEFAULT":
        axis, q = p["axis"], p["indices_rank"]
        at = index[:axis] + ints + index[axis + q :]
        why = (
            f"The output's axes {axis} … {axis + q - 1} walk the indices; the index there, {ints[0]}, is the "
            f"position along the data's axis {axis}."
        )
    else:
        b, q = p["num_elementwise_dims"], p["indices_rank"]
        at = index[:b] + ints + index[q - 1 :]
        why = (
            f"The tuple {ints} names the data's axes {b} … {b + len(ints) - 1}"
            + (f" within batch {index[:b]}" if b else "")
            + "; the output's last axes walk what follows."
        )
    return Cell(
        f"data{list(at)} = **{shown}**",
        ({"index": ", ".join(map(str, ints)), "data cell": str(at), "value": shown},),
        (why,),
    )


def formula(p: dict) -> str:
    if p["mode"] == "ELEMENT":
        return f"y[i] = data[i with axis {p['axis']} ← indices[i]]"
    if p["mode"] == "DEFAULT":
        return f"y[a, j, c] = data[a, indices[j], c] (axis {p['axis']}: a before it, c after)"
    return f"y[b, j, c] = data[b, indices[b, j], c] ({p['num_elementwise_dims']} batch axes b)"


def explain(p, shapes):
    out, mode = output_shape(p, shapes), p["mode"]
    cast = " The indices come as float32 and are cast to INT32 (no precision touches them)."
    if mode == "ELEMENT":
        return [
            f"ELEMENT mode along axis {p['axis']}: the output has the indices' shape {shapes['indices']}; each cell "
            "copies the data cell its index names on that axis, at its own position on the others." + cast
        ]
    idx = _read(p, shapes["indices"])
    read = f"The indices {tuple(shapes['indices'])} are read at rank {p['indices_rank']} as {idx} (a Shuffle)."
    if mode == "DEFAULT":
        return [
            f"DEFAULT mode along axis {p['axis']}: the data {tuple(shapes['data'])} with that axis replaced by the "
            f"indices' shape {idx}: output {out}, of rank {len(shapes['data'])} + {len(idx)} − 1. " + read + cast
        ]
    b = p["num_elementwise_dims"]
    return [
        f"ND mode, {b} batch axes: each index tuple of {idx[-1]} coordinates names a slice of the data after its "
        f"batch axes; output {out} (the indices' shape less the tuple axis, then the data's axes the tuple does "
        "not name). " + read + cast
    ]


# -- ONNX: GatherElements → ELEMENT, Gather → DEFAULT, GatherND → ND --------------------------------------------
NEGATIVE = (
    "ONNX counts a negative index from the end; TensorRT's ONNX parser passes the indices to IGatherLayer "
    "unchanged, and TensorRT documents only 0 ≤ index < the axis' length: those cells are left undefined here"
)


def onnx_read(node: Node) -> dict:
    data, idx = node.shapes[0], node.shapes[1]
    rank = len(data)
    if node.op == "GatherND":
        b = int(node.attr("batch_dims", 0))
        return {"mode": "ND", "num_elementwise_dims": b, "indices_rank": len(idx)}
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        raise node.fail("axis", f"must lie in −{rank} … {rank - 1}", axis)
    if node.op == "GatherElements":
        return {"mode": "ELEMENT", "axis": axis % rank}
    return {"mode": "DEFAULT", "axis": axis % rank, "indices_rank": len(idx)}


def onnx_differs(node: Node, raw: dict) -> list[str]:
    given = node.consts[1] if len(node.consts) > 1 else None
    return [NEGATIVE] if given is None or (np.asarray(given) < 0).any() else []


def onnx_lift(op: str, name: str, shape: tuple) -> tuple:
    """Each input at rank 4: the data with 1s after (its axes and the axis attribute keep their numbers); the
    indices of Gather and GatherND with 1s before (read back at their own rank by `indices_rank`); GatherElements'
    indices as its data."""
    shape = tuple(shape)
    if name == "indices" and op != "GatherElements":
        return (1,) * (4 - len(shape)) + shape
    return shape + (1,) * (4 - len(shape))


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    indices = g.op("Cast", [xs["indices"]], to=7)  # 7: INT64
    if p["mode"] == "ELEMENT":
        return g.op("GatherElements", [xs["data"], indices], axis=p["axis"])
    indices = g.op("Reshape", [indices, g.ints(_read(p, shapes["indices"]))])
    if p["mode"] == "DEFAULT":
        return g.op("Gather", [xs["data"], indices], axis=p["axis"])
    return g.op("GatherND", [xs["data"], indices], batch_dims=p["num_elementwise_dims"])


def _indices_example(shape):
    """w + h, wrapped to the width: each row reads the data shifted by its row number."""
    index = np.indices(shape)
    return ((index[-1] + index[-2]) % shape[-1]).astype(np.float32)


HOW = "each index looked up by hand"
DATA = {"kind": "spec", "shape": (1, 1, 3, 3)}  # 1 … 9
EXAMPLES = (
    derived(
        "gather",
        "shifted_rows",
        "ELEMENT along W: each row shifted by its number",
        {},
        {"data": DATA, "indices": {"kind": "spec", "shape": (1, 1, 3, 3)}},
        np.float32([[1, 2, 3], [5, 6, 4], [9, 7, 8]]).reshape(1, 1, 3, 3),
        HOW,
        note="Row h reads columns h, h + 1, h + 2 (mod 3): 4 5 6 becomes 5 6 4.",
    ),
    derived(
        "gather",
        "along_h",
        "ELEMENT along H, indices all 2: the last row everywhere",
        {"axis": 2},
        {"data": DATA, "indices": {"kind": "constant", "shape": (1, 1, 2, 3), "value": 2.0}},
        np.float32([[7, 8, 9], [7, 8, 9]]).reshape(1, 1, 2, 3),
        HOW,
        note="The output takes the indices' shape (1, 1, 2, 3).",
    ),
    derived(
        "gather",
        "default_reverse_columns",
        "DEFAULT along W, indices 2, 1, 0: the columns reversed",
        {"mode": "DEFAULT", "axis": 3, "indices_rank": 1},
        {"data": DATA, "indices": {"kind": "ramp", "shape": (1, 1, 1, 3), "low": 2.0, "high": 0.0}},
        np.float32([[3, 2, 1], [6, 5, 4], [9, 8, 7]]).reshape(1, 1, 3, 3),
        HOW,
        note="The indices (2, 1, 0), read at rank 1, replace W: output W is the indices' length, 3.",
    ),
    derived(
        "gather",
        "default_rank_5",
        "DEFAULT along H with 2 × 2 indices: an output of rank 5",
        {"mode": "DEFAULT", "axis": 2, "indices_rank": 2},
        {"data": DATA, "indices": {"kind": "spec", "shape": (1, 1, 2, 2)}},
        np.float32([[[1, 2, 3], [4, 5, 6]], [[4, 5, 6], [1, 2, 3]]]).reshape(1, 1, 2, 2, 3),
        HOW,
        note="Indices [[0, 1], [1, 0]] replace H by their own 2 × 2: rank 4 + 2 − 1 = 5; each names a whole row.",
    ),
    derived(
        "gather",
        "nd_rows_of_n",
        "ND, tuples of one coordinate: N picked 2, 1, 0 (x[[2, 1, 0]])",
        {"mode": "ND", "indices_rank": 2},
        {
            "data": {"kind": "spec", "shape": (3, 1, 2, 2)},
            "indices": {"kind": "ramp", "shape": (1, 1, 3, 1), "low": 2.0, "high": 0.0},
        },
        np.float32([[9, 10, 11, 12], [5, 6, 7, 8], [1, 2, 3, 4]]).reshape(3, 1, 2, 2),
        HOW,
        note="Indices (3, 1): three tuples of one coordinate on N; each names a whole (1, 2, 2) slice.",
    ),
    derived(
        "gather",
        "nd_batch",
        "ND with 1 batch axis: a (C, H) pair per batch, W kept",
        {"mode": "ND", "indices_rank": 2, "num_elementwise_dims": 1},
        {"data": {"kind": "spec", "shape": (2, 2, 2, 3)}, "indices": {"kind": "spec", "shape": (1, 1, 2, 2)}},
        np.float32([[4, 5, 6], [19, 20, 21]]).reshape(2, 3),
        HOW,
        note="Batch 0 reads (c, h) = (0, 1): 4 5 6; batch 1 reads (1, 0): 12 + 6 + 1 … = 19 20 21.",
    ),
)

LAYER = Layer(
    name="gather",
    order=95,
    title="Gather",
    icon=":material/move_item:",
    summary="DEFAULT: slices along an axis (Gather); ELEMENT: one cell per index (GatherElements); ND: index tuples "
    "(GatherND).",
    params=(
        Param(
            "mode",
            "enum",
            "ELEMENT",
            "The GatherMode: ELEMENT (ONNX GatherElements, the output of the indices' shape), DEFAULT (ONNX "
            "Gather, the axis replaced by the indices' shape) or ND (ONNX GatherND, index tuples on the last axis).",
            choices=MODES,
            label="Mode",
        ),
        Param(
            "axis",
            "int",
            3,
            "The axis the indices pick along: 0 = N, 1 = C, 2 = H, 3 = W.",
            low=0,
            high=3,
            step=1,
            used_when=lambda p: p["mode"] != "ND",
            label="Axis",
        ),
        Param(
            "indices_rank",
            "int",
            2,  # the example's indices, (1, 1, 3, 3), read whole: DEFAULT and ND are valid on the page's first touch
            "The rank the indices are read at (DEFAULT, ND): their last this many axes, the first ones 1. DEFAULT's "
            "output has rank 4 + this − 1.",
            low=0,
            high=4,
            step=1,
            used_when=lambda p: p["mode"] != "ELEMENT",
            label="Indices' rank",
        ),
        Param(
            "num_elementwise_dims",
            "int",
            0,
            "ND: the leading axes of data and indices walked together (ONNX's batch_dims); equal in both.",
            low=0,
            high=3,
            step=1,
            used_when=lambda p: p["mode"] == "ND",
            label="Batch axes",
        ),
    ),
    inputs=(
        Input(
            "data",
            "The tensor read; may be a model's constant (an Embedding's table).",
            example=lambda s: arange_pattern(s, 1),
            constant=True,
        ),
        Input(
            "indices",
            "Whole numbers 0 … size − 1 along the axis (cast to INT32, which truncates a fraction; no precision "
            "touches them); may be a model's constant.",
            example=_indices_example,
            constant=True,
            data=False,
        ),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=lambda s: arange_pattern(s, 1),
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    formula=formula,
    ranks=(4,),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    cell_axes=lambda rank: {
        1: ("w",),
        2: ("h", "w"),
        3: ("c", "h", "w"),
        4: ("n", "c", "h", "w"),
        5: ("n", "c", "d", "h", "w"),
    }[rank],
    explain=explain,
    undefined=undefined,
    onnx=OnnxMap(
        ("GatherElements", "Gather", "GatherND"),
        onnx_read,
        onnx_write,
        differs=onnx_differs,
        lift="trailing",
        lift_each=onnx_lift,
    ),
)
