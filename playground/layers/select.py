"""ISelectLayer: `add_select(condition, then, else)`, ONNX's Where: each output cell is `then`'s where the condition
is true, `else`'s where it is false; the three inputs of equal rank, their size-1 axes broadcast.

TensorRT reads the condition as BOOL. It is given as a float32 input whose nonzero cells are true and cast to BOOL
in the network (`Input.data` False: no precision's cast or Q/DQ pair touches it, as a gather's indices)."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import DIM_NAMES, arange_pattern, centered_ramp
from ..base.layer import Cell, Input, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap

NAMES = ("condition", "then", "else")


def broadcast(shapes: dict) -> tuple:
    return tuple(max(d) for d in zip(*(shapes[n] for n in NAMES)))


def check(fail, p, shapes):
    first = shapes["condition"]
    names = DIM_NAMES.get(len(first), tuple(f"axis {i}" for i in range(len(first))))
    for n in NAMES[1:]:
        if len(shapes[n]) != len(first):
            raise fail(f"input.{n}", f"has rank {len(shapes[n])}, the condition {len(first)}: equal ranks only")
    out = broadcast(shapes)
    for n in NAMES:
        for name, m, s in zip(names, shapes[n], out):
            if m not in (1, s):
                raise fail(
                    f"input.{n}",
                    f"{n} {shapes[n]} does not broadcast against {out}: axis {name} is {m}; each axis must be equal "
                    "or 1 in all three",
                    shapes[n],
                )
    return p


def cost(p, shapes):
    out = broadcast(shapes)
    return out, int(np.prod(out)), "one per output value", "the inputs' sizes: N, C, H or W"


def reference(xs, p):
    """then where the condition is nonzero, else elsewhere (NumPy broadcasts as TensorRT does here)."""
    t = ref.result_type()
    return np.asarray(
        np.where(np.asarray(xs["condition"]) != 0, np.asarray(xs["then"], t), np.asarray(xs["else"], t)), t
    )


def build(trt, network, xs, p):
    condition = network.add_cast(xs["condition"], trt.DataType.BOOL).get_output(0)  # nonzero is true
    return network.add_select(condition, xs["then"], xs["else"]).get_output(0)


def reads(p, shapes, index):
    """The condition's cell and the one of `then` or `else` it picks: the same index, 0 along a size-1 axis (both
    candidates are named: which one depends on the condition's value)."""
    return {n: [tuple(0 if s == 1 else i for i, s in zip(index, shapes[n]))] for n in NAMES}


def cell(xs, p, index, reference_output=None):
    cells = reads(p, {n: xs[n].shape for n in NAMES}, index)
    c, a, b = (float(xs[n][cells[n][0]]) for n in NAMES)
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    picked = "then" if c != 0 else "else"
    rows = tuple({"input": n, "cell": str(cells[n][0]), "value": precise(v)} for n, v in zip(NAMES, (c, a, b)))
    notes = [
        f"The condition {precise(c)} is {'nonzero: true' if c != 0 else '0: false'}, so {picked}'s cell is copied."
    ]
    if any(cells[n][0] != tuple(index) for n in NAMES):
        notes.append("A size-1 axis broadcasts: that input's one cell along it is read for every output cell.")
    return Cell(f"{precise(c)} ? {precise(a)} : {precise(b)} = **{shown}**", rows, tuple(notes))


def formula(p: dict) -> str:
    return "y = condition ≠ 0 ? then : else"


def explain(p, shapes):
    return [
        f"condition {shapes['condition']}, then {shapes['then']}, else {shapes['else']} → {broadcast(shapes)}: the "
        "condition is cast to BOOL (nonzero is true) and picks then's cell or else's; a size-1 axis repeats."
    ]


# -- ONNX: Where(condition BOOL, X, Y) ---------------------------------------------------------------------------
ONNX_BOOL = 9  # TensorProto.BOOL


def onnx_read(node: Node) -> dict:
    if len([i for i in node.inputs if i]) != 3:
        raise node.fail("inputs", "Where takes three: condition, X, Y", len(node.inputs))
    return {}


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    return g.op("Where", [g.op("Cast", [xs["condition"]], to=ONNX_BOOL), xs["then"], xs["else"]])


def _condition_example(shape):
    """A checkerboard of 1 and 0: true where h + w is even."""
    h, w = np.indices(shape)[-2:]
    return ((h + w) % 2 == 0).astype(np.float32)


HOW = "each cell's condition read by hand"
A = {"kind": "spec", "shape": (1, 1, 3, 3)}  # then: 1 … 9
EXAMPLES = (
    derived(
        "select",
        "checkerboard",
        "A checkerboard condition: then on the even cells, else on the odd",
        {},
        {
            "condition": {"kind": "spec", "shape": (1, 1, 3, 3)},
            "then": A,
            "else": {"kind": "spec", "shape": (1, 1, 3, 3)},
        },
        np.float32([[1, -3, 3], [-1, 5, 1], [7, 3, 9]]).reshape(1, 1, 3, 3),
        HOW,
        note="then is 1 … 9, else the ramp −4 … 4: the corners and the centre come from then.",
    ),
    derived(
        "select",
        "relu_by_select",
        "condition = then itself: nonzero, not positive, is true",
        {},
        {
            "condition": {"kind": "ramp", "shape": (1, 1, 3, 3), "low": -4.0, "high": 4.0},
            "then": {"kind": "ramp", "shape": (1, 1, 3, 3), "low": -4.0, "high": 4.0},
            "else": {"kind": "constant", "shape": (1, 1, 1, 1), "value": 0.0},
        },
        np.float32([-4, -3, -2, -1, 0, 1, 2, 3, 4]).reshape(1, 1, 3, 3),
        HOW,
        note="Not a ReLU: every nonzero value is true, the negatives too, so then comes back whole; only its 0 reads else (0).",
    ),
    derived(
        "select",
        "row_condition",
        "A condition of one row, broadcast down H",
        {},
        {
            "condition": {"kind": "constant", "shape": (1, 1, 1, 3), "value": 0.0},
            "then": A,
            "else": {"kind": "spec", "shape": (1, 1, 3, 3)},
        },
        np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3),
        HOW,
        note="A condition of 0s everywhere: else throughout, whatever then holds.",
    ),
)

LAYER = Layer(
    name="select",
    order=66,
    title="Select",
    icon=":material/alt_route:",
    summary="y = condition ? then : else cell by cell (ONNX Where), the condition nonzero for true, size-1 axes "
    "broadcast.",
    params=(),
    inputs=(
        Input(
            "condition",
            "Nonzero is true: cast to BOOL in the network (no precision touches it); may be a model's constant.",
            example=_condition_example,
            constant=True,
            data=False,
        ),
        Input("then", "Copied where the condition is true.", example=lambda s: arange_pattern(s, 1), constant=True),
        Input("else", "Copied where the condition is false.", example=centered_ramp, constant=True),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=_condition_example,
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
    onnx=OnnxMap(("Where",), onnx_read, onnx_write, lift="trailing"),
)
