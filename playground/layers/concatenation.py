"""IConcatenationLayer: `add_concatenation([a, b, …])` with `.axis`: 2 to 4 inputs joined along one axis, equal in
every other."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import DIM_NAMES, arange_pattern
from ..base.layer import Cell, Input, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

NAMES = ("a", "b", "c", "d")


def used(p: dict) -> tuple[str, ...]:
    return NAMES[: p["count"]]


def check(fail, p, shapes):
    first, axis = shapes["a"], p["axis"]
    if axis >= len(first):
        raise fail("axis", f"must name an axis of the inputs (rank {len(first)}: 0 … {len(first) - 1})", axis)
    names = DIM_NAMES.get(len(first), tuple(f"axis {i}" for i in range(len(first))))
    for n in used(p)[1:]:
        s = shapes[n]
        for i, (x, y) in enumerate(zip(first, s)):
            if i != axis and x != y:
                raise fail(
                    f"input.{n}",
                    f"{n.upper()} {s} differs from A {first} along {names[i]} ({y} against {x}): "
                    f"only the axis joined ({names[axis]}) may differ",
                    s,
                )
    return p


def output_shape(p, shapes) -> tuple:
    out = list(shapes["a"])
    out[p["axis"]] = sum(shapes[n][p["axis"]] for n in used(p))
    return tuple(out)


def cost(p, shapes):
    out = output_shape(p, shapes)
    return out, int(np.prod(out)), "one per value", "the inputs' sizes"


def reference(xs, p):
    return np.concatenate([np.asarray(xs[n], ref.result_type()) for n in used(p)], axis=p["axis"])


def build(trt, network, xs, p):
    layer = network.add_concatenation([xs[n] for n in ("a", "b", "c", "d")[: p["count"]]])
    layer.axis = p["axis"]
    return layer.get_output(0)


def source(p, shapes, index) -> tuple[str, tuple]:
    """(the input output `index` comes from, its index there)."""
    axis, at = p["axis"], index[p["axis"]]
    for n in used(p):
        size = shapes[n][axis]
        if at < size:
            return n, tuple(index[:axis]) + (at,) + tuple(index[axis + 1 :])
        at -= size
    raise IndexError(index)


def reads(p, shapes, index):
    """The one cell an output copies, in the input it comes from (none in the others)."""
    n, own = source(p, shapes, tuple(index))
    return {m: [own] if m == n else [] for m in used(p)}


def cell(xs, p, index, reference_output=None):
    n, own = source(p, {m: xs[m].shape for m in used(p)}, tuple(index))
    offset = sum(xs[m].shape[p["axis"]] for m in used(p)[: used(p).index(n)])
    value = precise(float(xs[n][own]))
    note = (
        f"Along axis {p['axis']} the inputs follow each other: {n.upper()} starts at {offset}, so output "
        f"{index[p['axis']]} is its {own[p['axis']]}."
    )
    return Cell(
        f"{n.upper()}{list(own)} = **{value}**", ({"input": n.upper(), "cell": str(own), "value": value},), (note,)
    )


def formula(p: dict) -> str:
    return f"Y = concat({', '.join(n.upper() for n in used(p))}) along axis {p['axis']}"


def explain(p, shapes):
    axis = p["axis"]
    sizes = " + ".join(str(shapes[n][axis]) for n in used(p))
    return [
        f"{p['count']} inputs joined along axis {axis}: {sizes} = {output_shape(p, shapes)[axis]}; every other "
        f"axis must be equal in all of them (TensorRT does not broadcast here)."
    ]


def onnx_read(node: Node) -> dict:
    """Concat of 2 … 4 inputs: `axis` (negative counts from the end)."""
    count = len([i for i in node.inputs if i])
    if not 2 <= count <= 4:
        raise node.fail("inputs", f"{count} inputs: the layer joins 2 … 4", count)
    rank = len(node.onnx_shape)
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        raise node.fail("axis", f"must lie in −{rank} … {rank - 1}", axis)
    return {"count": count, "axis": axis % rank}


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    return g.op("Concat", [xs[n] for n in used(p)], axis=p["axis"])


def _pattern(start: float, step: float):
    return lambda shape: (arange_pattern(shape, 0) * np.float32(step) + np.float32(start)).astype(np.float32)


# -- examples: by hand ---------------------------------------------------------------------------------------
HOW = "the inputs side by side"
A = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)  # 1 … 6
B = -A  # −1 … −6
C = 10 * A  # 10 … 60
EXAMPLES = (
    derived(
        "concatenation",
        "channels",
        "A and B along C",
        {},
        {"a": {"kind": "spec", "shape": (1, 1, 2, 3)}, "b": {"kind": "spec", "shape": (1, 1, 2, 3)}},
        np.concatenate([A, B], axis=1),
        HOW,
    ),
    derived(
        "concatenation",
        "three_along_w",
        "A, B, C along W, B one column wide",
        {"count": 3, "axis": 3},
        {
            "a": {"kind": "spec", "shape": (1, 1, 2, 3)},
            "b": {"kind": "spec", "shape": (1, 1, 2, 1)},
            "c": {"kind": "spec", "shape": (1, 1, 2, 3)},
        },
        np.float32([[1, 2, 3, -1, 10, 20, 30], [4, 5, 6, -2, 40, 50, 60]]).reshape(1, 1, 2, 7),
        HOW,
        note="B at shape (1, 1, 2, 1) is −1, −2: one column between A and C.",
    ),
    derived(
        "concatenation",
        "four_along_n",
        "four inputs along N",
        {"count": 4, "axis": 0},
        {
            "a": {"kind": "spec", "shape": (1, 1, 1, 2)},
            "b": {"kind": "spec", "shape": (1, 1, 1, 2)},
            "c": {"kind": "spec", "shape": (1, 1, 1, 2)},
            "d": {"kind": "constant", "shape": (1, 1, 1, 2), "value": 0.5},
        },
        np.float32([1, 2, -1, -2, 10, 20, 0.5, 0.5]).reshape(4, 1, 1, 2),
        HOW,
    ),
)

LAYER = Layer(
    name="concatenation",
    order=75,
    title="Concatenation",
    icon=":material/view_column:",
    summary="Y = A, B (, C, D) side by side along one axis; every other axis equal.",
    params=(
        Param(
            "count", "int", 2, "How many inputs are joined (A, B, then C and D).", low=2, high=4, step=1, label="Inputs"
        ),
        Param(
            "axis",
            "int",
            1,
            "The axis they are joined along: 0 = N, 1 = C (TensorRT's default for 4-D), 2 = H, 3 = W.",
            low=0,
            high=3,
            step=1,
            label="Axis",
        ),
    ),
    output_scale=lambda p: "",  # its parts' values side by side: one scale for the parts and the whole
    inputs=(
        Input("a", "The first part.", example=_pattern(1, 1)),
        Input("b", "The second part.", example=_pattern(-1, -1)),
        Input("c", "The third part (3 or 4 inputs).", example=_pattern(10, 10), used_when=lambda p: p["count"] >= 3),
        Input("d", "The fourth part (4 inputs).", example=_pattern(100, 100), used_when=lambda p: p["count"] >= 4),
    ),
    example_shape=(1, 1, 2, 3),
    example_input=_pattern(1, 1),
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
    onnx=OnnxMap(("Concat",), onnx_read, onnx_write, lift="trailing"),
)
