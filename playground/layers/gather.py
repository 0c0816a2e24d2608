"""IGatherLayer in ELEMENT mode: `add_gather_v2(data, indices, GatherMode.ELEMENT)` with `.axis`: each output cell
copies the data cell its index names along the axis (ONNX's GatherElements)."""

from __future__ import annotations

import numpy as np

from .. import reference as ref
from ..examples import derived
from ..inputs import DIM_NAMES, arange_pattern
from ..layer import Cell, Input, Layer
from ..numbers import precise
from ..onnxmap import Graph, Node, OnnxMap
from ..params import Param


def check(fail, p, shapes):
    data, idx, axis = shapes["data"], shapes["indices"], p["axis"]
    names = DIM_NAMES.get(len(data), ())
    for a, (d, i) in enumerate(zip(data, idx)):
        if a != axis and i > d:
            raise fail(
                "input.indices",
                f"is {i} along {names[a] if names else a}, where the data has {d}: off the "
                "axis gathered along, the indices may not reach past the data",
                idx,
            )
    return p


def cost(p, shapes):
    return shapes["indices"], int(np.prod(shapes["indices"])), "one per output value", "the indices' size"


def _valid(idx, size):
    """Whole numbers within 0 … size − 1: the indices with a documented result."""
    return (idx == np.floor(idx)) & (idx >= 0) & (idx < size)


def reference(xs, p):
    """output[i] = data[i with axis ← indices[i]]; an index that is not a whole number in 0 … size − 1 gives NaN (no
    documented result: `undefined`)."""
    data, idx, axis = np.asarray(xs["data"], np.float64), np.asarray(xs["indices"], np.float64), p["axis"]
    valid = _valid(idx, data.shape[axis])
    safe = np.where(valid, idx, 0).astype(np.int64)
    window = data[tuple(slice(0, s) if a != axis else slice(None) for a, s in enumerate(idx.shape))]
    y = np.take_along_axis(window, safe, axis=axis)
    return np.asarray(np.where(valid, y, np.nan), dtype=ref.result_type())


def undefined(xs, p):
    return ~_valid(np.asarray(xs["indices"], np.float64), np.shape(xs["data"])[p["axis"]])


def build(trt, network, xs, p):
    indices = network.add_cast(xs["indices"], trt.DataType.INT32).get_output(0)  # float32 in, whole numbers
    layer = network.add_gather_v2(xs["data"], indices, trt.GatherMode.ELEMENT)
    layer.axis = p["axis"]
    return layer.get_output(0)


def reads(p, shapes, index):
    """Output `index` reads its own index cell; the data cell depends on the index's value, so the map names the
    whole line along the axis it is picked from."""
    axis = p["axis"]
    line = [tuple(index[:axis]) + (k,) + tuple(index[axis + 1 :]) for k in range(shapes["data"][axis])]
    return {"data": line, "indices": [tuple(index)]}


def cell(xs, p, index, reference_output=None):
    axis, k = p["axis"], float(xs["indices"][tuple(index)])
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    if not _valid(np.float64(k), xs["data"].shape[axis]):
        return Cell(
            f"index {precise(k)}: **{shown}**",
            (),
            (
                f"An index must be a whole number in 0 … "
                f"{xs['data'].shape[axis] - 1}; this one has no "
                "documented result.",
            ),
        )
    at = tuple(index[:axis]) + (int(k),) + tuple(index[axis + 1 :])
    return Cell(
        f"data{list(at)} = **{shown}**",
        ({"index": precise(k), "data cell": str(at), "value": shown},),
        (f"The index {int(k)} replaces the output's own position along axis {axis}.",),
    )


def formula(p: dict) -> str:
    return f"y[i] = data[i with axis {p['axis']} ← indices[i]]"


def explain(p, shapes):
    return [
        f"ELEMENT mode along axis {p['axis']}: the output has the indices' shape {shapes['indices']}; each cell "
        "copies the data cell its index names on that axis, at its own position on the others. The indices "
        "come as float32 and are cast to INT32 (no precision touches them)."
    ]


def onnx_read(node: Node) -> dict:
    rank = len(node.onnx_shape)
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        raise node.fail("axis", f"must lie in −{rank} … {rank - 1}", axis)
    return {"axis": axis % rank}


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    return g.op("GatherElements", [xs["data"], g.op("Cast", [xs["indices"]], to=7)], axis=p["axis"])  # 7: INT64


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
        "Along W: each row shifted by its number",
        {},
        {"data": DATA, "indices": {"kind": "spec", "shape": (1, 1, 3, 3)}},
        np.float32([[1, 2, 3], [5, 6, 4], [9, 7, 8]]).reshape(1, 1, 3, 3),
        HOW,
        note="Row h reads columns h, h + 1, h + 2 (mod 3): 4 5 6 becomes 5 6 4.",
    ),
    derived(
        "gather",
        "along_h",
        "Along H, indices all 2: the last row everywhere",
        {"axis": 2},
        {"data": DATA, "indices": {"kind": "constant", "shape": (1, 1, 2, 3), "value": 2.0}},
        np.float32([[7, 8, 9], [7, 8, 9]]).reshape(1, 1, 2, 3),
        HOW,
        note="The output takes the indices' shape (1, 1, 2, 3).",
    ),
)

LAYER = Layer(
    name="gather",
    order=95,
    title="Gather (ELEMENT)",
    icon=":material/move_item:",
    summary="y[i] = data[i with the axis replaced by indices[i]]: GatherElements, the output of the indices' shape.",
    params=(
        Param(
            "axis",
            "int",
            3,
            "The axis the indices pick along: 0 = N, 1 = C, 2 = H, 3 = W.",
            low=0,
            high=3,
            step=1,
            label="Axis",
        ),
    ),
    inputs=(
        Input("data", "The tensor read.", example=lambda s: arange_pattern(s, 1)),
        Input(
            "indices",
            "Whole numbers 0 … size − 1 along the axis (cast to INT32; no precision touches "
            "them); may be a model's constant.",
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
    explain=explain,
    undefined=undefined,
    onnx=OnnxMap(("GatherElements",), onnx_read, onnx_write, lift="trailing"),
)
