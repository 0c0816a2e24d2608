"""IElementWiseLayer: `add_elementwise(a, b, op)`, two inputs of equal rank whose size-1 axes broadcast."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import DIM_NAMES, arange_pattern, centered_ramp
from ..base.layer import Cell, Input, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

ARITHMETIC = ("SUM", "PROD", "MAX", "MIN", "SUB", "DIV", "POW", "FLOOR_DIV")
LOGICAL = ("AND", "OR", "XOR")  # TensorRT reads BOOL here: a nonzero input is true
COMPARISONS = ("EQUAL", "GREATER", "LESS")  # BOOL out: drawn as 0 and 1
OPERATIONS = ARITHMETIC + LOGICAL + COMPARISONS
SYMBOL = {
    "SUM": "+",
    "PROD": "×",
    "SUB": "−",
    "DIV": "/",
    "POW": "^",
    "FLOOR_DIV": "//",
    "AND": "and",
    "OR": "or",
    "XOR": "xor",
    "EQUAL": "==",
    "GREATER": ">",
    "LESS": "<",
}


def broadcast(shapes: dict) -> tuple:
    """The output's shape: each axis the larger of the two (the other is equal or 1; `check` sees to it)."""
    return tuple(max(a, b) for a, b in zip(shapes["a"], shapes["b"]))


def check(fail, p, shapes):
    a, b = shapes["a"], shapes["b"]
    if len(a) != len(b):
        raise fail("input.b", f"B has rank {len(b)}, A rank {len(a)}: TensorRT broadcasts inputs of equal rank only", b)
    names = DIM_NAMES.get(len(a), tuple(f"axis {i}" for i in range(len(a))))
    for name, m, n in zip(names, a, b):
        if m != n and 1 not in (m, n):
            raise fail(
                "input.b",
                f"B {b} does not broadcast against A {a}: axis {name} is {n} against {m}; each "
                f"axis must be equal or 1 in one of them",
                b,
            )
    return p


def cost(p, shapes):
    out = broadcast(shapes)
    return out, int(np.prod(out)), "one per output value", "the inputs' sizes: N, C, H or W"


def apply(op: str, a, b):
    """The operation on two arrays of one float type (NumPy broadcasts as TensorRT does here)."""
    one = a.dtype.type(1)
    if op in LOGICAL:
        x, y = a != 0, b != 0
        out = x & y if op == "AND" else x | y if op == "OR" else x ^ y
        return out.astype(a.dtype)
    if op in COMPARISONS:
        out = a == b if op == "EQUAL" else a > b if op == "GREATER" else a < b
        return out.astype(a.dtype)
    if op == "FLOOR_DIV":
        return np.floor(a / b)
    f = {
        "SUM": np.add,
        "PROD": np.multiply,
        "MAX": np.maximum,
        "MIN": np.minimum,
        "SUB": np.subtract,
        "DIV": np.divide,
        "POW": np.power,
    }[op]
    return f(a, b) * one


def reference(xs, p):
    """The operation in the result type (float32, or float64 for the truth), broadcast."""
    t = ref.result_type()
    with np.errstate(all="ignore"):  # a division by 0 or a negative base's fractional power: data, not warnings
        return np.asarray(apply(p["operation"], np.asarray(xs["a"], t), np.asarray(xs["b"], t)), dtype=t)


def undefined(xs, p):
    """Cells no rule gives a number: 0 / 0 (IEEE's invalid operation), a negative base to a fractional power, 0 to
    a negative power. x / ±0 of x ≠ 0 is IEEE's ±inf, a value like any other: compared, not masked."""
    a, b = np.broadcast_arrays(np.asarray(xs["a"], np.float64), np.asarray(xs["b"], np.float64))
    op = p["operation"]
    if op in ("DIV", "FLOOR_DIV"):
        return (a == 0) & (b == 0)
    if op == "POW":
        return ((a < 0) & (b != np.round(b))) | ((a == 0) & (b < 0))
    return np.zeros(a.shape, bool)


def build(trt, network, xs, p):
    a, b = xs["a"], xs["b"]
    kind = a.dtype  # the layer's own type (FLOAT, or HALF/BF16 under FP16/BF16)
    if p["operation"] in ("AND", "OR", "XOR"):  # logical operations read BOOL: a nonzero value is true
        a = network.add_cast(a, trt.DataType.BOOL).get_output(0)
        b = network.add_cast(b, trt.DataType.BOOL).get_output(0)
    y = network.add_elementwise(a, b, trt.ElementWiseOperation.__members__[p["operation"]]).get_output(0)
    if y.dtype == trt.DataType.BOOL:  # a logical or comparison's BOOL, as 0 and 1 of the input's type
        y = network.add_cast(y, kind).get_output(0)
    return y


def reads(p, shapes, index):
    """The cell of each input that output `index` reads: the same index, 0 along a broadcast (size-1) axis."""
    return {n: [tuple(0 if s == 1 else i for i, s in zip(index, shapes[n]))] for n in ("a", "b")}


def cell(xs, p, index, reference_output=None):
    shapes = {n: xs[n].shape for n in ("a", "b")}
    (ia,), (ib,) = reads(p, shapes, index).values()
    va, vb = float(xs["a"][ia]), float(xs["b"][ib])
    op = p["operation"]
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    terms = (
        f"{op.lower()}({precise(va)}, {precise(vb)})"
        if op in ("MAX", "MIN")
        else f"{precise(va)} {SYMBOL[op]} {precise(vb)}"
    )
    rows = (
        {"input": "A", "cell": str(ia), "value": precise(va)},
        {"input": "B", "cell": str(ib), "value": precise(vb)},
    )
    notes = []
    if op in LOGICAL:
        notes.append(
            "TensorRT's logical operations read BOOL: each input is cast to BOOL (nonzero is true) and the "
            "result back to the input's type, 1 for true."
        )
    elif op in COMPARISONS:
        notes.append("A comparison gives BOOL, drawn as 1 for true and 0 for false.")
    if ia != tuple(index) or ib != tuple(index):
        notes.append("A size-1 axis broadcasts: that input's one cell along it is read for every output cell.")
    return Cell(f"{terms} = **{shown}**", rows, tuple(notes))


def output_scale(p: dict) -> str:
    """One colour scale for the operands and the output where the output's values are of the operands' kind, so a
    cell is matched across the figures by eye: a sum or a difference moves a value along the same axis of
    numbers, a MAX or MIN picks one of them. A product or a power is of another magnitude (9 × 9 = 81 on a 1…9
    input would leave the operands pale on the output's scale), a quotient a ratio and a comparison or a logical
    operation 0 and 1: those keep a scale of their own, and say why."""
    op = p["operation"]
    if op in COMPARISONS + LOGICAL:
        return "own scale: 0 is false, 1 is true"
    if op in ("PROD", "POW"):
        return f"own scale: a {'product' if op == 'PROD' else 'power'} is of another magnitude"
    if op in ("DIV", "FLOOR_DIV"):
        return "own scale: a quotient is a ratio"
    return ""


def formula(p: dict) -> str:
    op = p["operation"]
    if op in ("MAX", "MIN"):
        return f"y = {op.lower()}(A, B)"
    if op == "FLOOR_DIV":
        return "y = floor(A / B)"
    if op in COMPARISONS + LOGICAL:
        return f"y = (A {SYMBOL[op]} B) ? 1 : 0"
    return f"y = A {SYMBOL[op]} B"


def explain(p, shapes):
    a, b, out = shapes["a"], shapes["b"], broadcast(shapes)
    names = DIM_NAMES.get(len(a), ())
    spread = [f"{n} of {'A' if m == 1 else 'B'}" for n, m, k in zip(names, a, b) if m != k]
    text = f"A {a} {SYMBOL.get(p['operation'], p['operation'].lower())} B {b} → {out}"
    return [
        text
        + (
            ": broadcast along " + ", ".join(spread) + " (a size-1 axis repeats)."
            if spread
            else ": equal shapes, cell by cell."
        )
    ]


# -- ONNX: one op per operation (FLOOR_DIV: Floor of Div); BOOL where ONNX's logical ops and comparisons need it --
ONNX_OPS = {
    "SUM": "Add",
    "PROD": "Mul",
    "MAX": "Max",
    "MIN": "Min",
    "SUB": "Sub",
    "DIV": "Div",
    "POW": "Pow",
    "AND": "And",
    "OR": "Or",
    "XOR": "Xor",
    "EQUAL": "Equal",
    "GREATER": "Greater",
    "LESS": "Less",
}
ONNX_BOOL, ONNX_FLOAT = 9, 1  # TensorProto.BOOL, TensorProto.FLOAT (no onnx import in a layer's declaration)


# ONNX's n-ary ops: a Sum of two is an Add (a ResNet's residual); Mean is a Sum, then a PROD by 1/n (`onnx_then`)
READ_ALSO = {"Sum": "SUM", "Mean": "SUM"}
NARY = ("Sum", "Max", "Min", "Mean")


def onnx_read(node: Node) -> dict:
    """Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean, And, Or, Xor, Equal, Greater, Less: the operation (an n-ary
    op's inputs after the second: `onnx_then`)."""
    op = READ_ALSO.get(node.op) or next(k for k, v in ONNX_OPS.items() if v == node.op)
    given = len([i for i in node.inputs if i])
    if given != 2 and node.op not in NARY:
        raise node.fail("inputs", f"{node.op} of {given} inputs: the layer takes two", given)
    return {"operation": op}


def onnx_identity(node: Node) -> str | None:
    """A Sum, Max, Min or Mean of one input is that input (Mean's PROD by 1/1, which the parser adds, changes
    nothing)."""
    if node.op in NARY and len([i for i in node.inputs if i]) == 1:
        return f"{node.op} of one input is that input"
    return None


def onnx_then(node: Node, raw: dict) -> list:
    """An n-ary Sum, Max, Min or Mean as TensorRT's ONNX parser builds it (onnx-tensorrt's elementwiseHelper): a
    chain of two-input layers, left to right, each step reading the next of the node's inputs (its index: the
    model's tensor or constant); Mean's sum then an ElementWise PROD by 1/n, as the parser's importMean builds it."""
    n = len([i for i in node.inputs if i])
    steps = [("elementwise", raw, {"b": i}) for i in range(2, n)]
    if node.op == "Mean":
        steps.append(("elementwise", {"operation": "PROD"}, {"b": np.full((1, 1, 1, 1), 1 / n, np.float32)}))
    return steps


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    op, a, b = p["operation"], xs["a"], xs["b"]
    if op == "FLOOR_DIV":
        return g.op("Floor", [g.op("Div", [a, b])])
    if op in LOGICAL:  # nonzero is true, as TensorRT's cast to BOOL reads it
        a, b = g.op("Cast", [a], to=ONNX_BOOL), g.op("Cast", [b], to=ONNX_BOOL)
    y = g.op(ONNX_OPS[op], [a, b])
    return g.op("Cast", [y], to=ONNX_FLOAT) if op in LOGICAL + COMPARISONS else y


def _spec_b(shape):
    """B's pattern: 1, 2, 3, … (a divisor and an exponent with no zero)."""
    return arange_pattern(shape, 1)


# -- examples: hand-derived from TensorRT's documented operations --------------------------------------------
A_RAMP = np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3)  # centered_ramp at 1 × 1 × 3 × 3
B_ROW = np.float32([1, 2, 3]).reshape(1, 1, 1, 3)
B_COLUMN = np.float32([1, 2, 3]).reshape(1, 1, 3, 1)


def _two(b_shape, b=None):
    return {"a": {"kind": "spec", "shape": (1, 1, 3, 3)}, "b": b or {"kind": "spec", "shape": b_shape}}


HOW = "TensorRT's ElementWiseOperation, size-1 axes broadcast"
EXAMPLES = (
    derived(
        "elementwise",
        "sum_row",
        "SUM, B a row broadcast down H",
        {"operation": "SUM"},
        _two((1, 1, 1, 3)),
        A_RAMP + B_ROW,
        HOW,
    ),
    derived(
        "elementwise",
        "sub_column",
        "SUB, B a column broadcast along W",
        {"operation": "SUB"},
        _two((1, 1, 3, 1)),
        A_RAMP - B_COLUMN,
        HOW,
    ),
    derived(
        "elementwise",
        "div",
        "DIV, equal shapes",
        {"operation": "DIV"},
        _two((1, 1, 3, 3)),
        A_RAMP / np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3),
        HOW,
        tolerance=None,
    ),
    derived(
        "elementwise",
        "floor_div",
        "FLOOR_DIV rounds toward −∞",
        {"operation": "FLOOR_DIV"},
        _two((1, 1, 1, 3)),
        np.float32([[-4, -2, -1], [-1, 0, 0], [2, 1, 1]]).reshape(1, 1, 3, 3),
        HOW,
        note="−4 // 1 = −4, −3 // 2 = −2, −2 // 3 = −1: floor, not truncation toward 0.",
    ),
    derived(
        "elementwise",
        "pow",
        "POW, integer exponents",
        {"operation": "POW"},
        _two((1, 1, 1, 3)),
        np.float32([[-4, 9, -8], [-1, 0, 1], [2, 9, 64]]).reshape(1, 1, 3, 3),
        HOW,
    ),
    derived(
        "elementwise",
        "max",
        "MAX with a constant 0: a ReLU",
        {"operation": "MAX"},
        _two(None, {"kind": "constant", "shape": (1, 1, 1, 1), "value": 0.0}),
        np.maximum(A_RAMP, 0),
        HOW,
    ),
    derived(
        "elementwise",
        "greater",
        "GREATER, BOOL drawn as 0/1",
        {"operation": "GREATER"},
        _two((1, 1, 1, 3)),
        (A_RAMP > B_ROW).astype(np.float32),
        HOW,
    ),
    derived(
        "elementwise",
        "xor",
        "XOR: nonzero is true",
        {"operation": "XOR"},
        _two(None, {"kind": "checkerboard", "shape": (1, 1, 3, 3), "low": 0.0, "high": 1.0}),
        np.float32([[0, 1, 0], [1, 1, 1], [0, 1, 0]]).reshape(1, 1, 3, 3),
        HOW,
        note="A is 0 only at its centre; B's checkerboard is 1 where h + w is even (the corners and the centre).",
    ),
)

LAYER = Layer(
    name="elementwise",
    order=60,
    title="ElementWise",
    icon=":material/join:",
    summary="y = A op B cell by cell (SUM, PROD, MAX, …, comparisons as 0/1), size-1 axes broadcast.",
    params=(
        Param(
            "operation",
            "enum",
            "SUM",
            "The ElementWiseOperation: arithmetic (SUM, PROD, MAX, MIN, SUB, DIV, POW, "
            "FLOOR_DIV), logical on BOOL (AND, OR, XOR: a nonzero input is true) or a comparison (EQUAL, GREATER, "
            "LESS); a BOOL result is drawn as 0 and 1.",
            choices=OPERATIONS,
            label="Operation",
        ),
    ),
    inputs=(
        Input("a", "The first operand.", example=centered_ramp),
        Input("b", "The second operand; its size-1 axes broadcast (so may A's).", example=_spec_b, constant=True),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=centered_ramp,
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
    sums=lambda p: p["operation"] in ("SUM", "SUB"),
    output_scale=output_scale,
    onnx=OnnxMap(
        (*ONNX_OPS.values(), *READ_ALSO),
        onnx_read,
        onnx_write,
        lift="trailing",
        then=onnx_then,
        identity=onnx_identity,
    ),
)
