"""IMatrixMultiplyLayer: `add_matrix_multiply(a, op0, b, op1)`, a matrix product over the last two axes of each
input (a collection of matrices along the leading ones, broadcast where one has size 1)."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Input, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

OPERATIONS = ("NONE", "TRANSPOSE", "VECTOR")


def _matrix(shape: tuple, op: str, second: bool) -> tuple[tuple, int, int]:
    """(batch axes, rows, columns) an input is read as: its last two axes (swapped by TRANSPOSE); VECTOR: its last
    axis a row vector (A) or a column vector (B), the axes before it the batch."""
    if op == "VECTOR":
        return tuple(shape[:-1]), (shape[-1], 1) if second else (1, shape[-1])
    rows, cols = shape[-2:] if op == "NONE" else shape[-2:][::-1]
    return tuple(shape[:-2]), (rows, cols)


def geometry(p: dict, shapes: dict):
    """(batch shape, M, K, N, the output's shape), or the rule broken (a str)."""
    a_batch, (m, k) = _matrix(shapes["a"], p["op0"], False)
    b_batch, (k2, n) = _matrix(shapes["b"], p["op1"], True)
    if len(a_batch) != len(b_batch):
        return (
            f"op0 {p['op0']} and op1 {p['op1']}: A is read with {len(a_batch)} batch axes and B with "
            f"{len(b_batch)}; VECTOR on one input only needs that input one rank below the other (both are "
            f"rank {len(shapes['a'])} here)"
        )
    for i, (x, y) in enumerate(zip(a_batch, b_batch)):
        if x != y and 1 not in (x, y):
            return f"batch axis {i} is {x} in A and {y} in B; each must be equal or 1 in one of them"
    if k != k2:
        return f"A's rows have {k} values and B's columns {k2}: the product needs them equal"
    batch = tuple(max(x, y) for x, y in zip(a_batch, b_batch))
    out = batch + tuple(d for d, vector in ((m, p["op0"] == "VECTOR"), (n, p["op1"] == "VECTOR")) if not vector)
    return batch, m, k, n, out


def check(fail, p, shapes):
    g = geometry(p, shapes)
    if isinstance(g, str):  # a lone VECTOR is the operation's fault; the rest, B's shape against A's
        lone = (p["op0"] == "VECTOR") != (p["op1"] == "VECTOR")
        raise fail(
            ("op0" if p["op0"] == "VECTOR" else "op1") if lone else "input.b",
            g,
            p["op0" if p["op0"] == "VECTOR" else "op1"] if lone else shapes["b"],
        )
    return p


def fit(p, shapes):
    """The page's operand of a TRANSPOSE brought along: stored transposed (its last two axes swapped), so that the
    choice reads the very matrix NONE read on the page's input, and the figure shows the layout it needs."""
    moved = [n for n, op in (("a", p["op0"]), ("b", p["op1"])) if op == "TRANSPOSE" and len(shapes[n]) >= 2]
    if not moved:
        return None
    orders = {n: (*range(len(shapes[n]) - 2), len(shapes[n]) - 1, len(shapes[n]) - 2) for n in moved}
    what = " and ".join(f"{n.upper()} {tuple(shapes[n])} → {tuple(shapes[n][a] for a in orders[n])}" for n in moved)
    return orders, (
        f"Stored transposed for TRANSPOSE: {what}, its last two axes swapped, so the matrix read is the one the "
        "page's input holds (the same product, the operand laid out as TRANSPOSE expects)."
    )


def cost(p, shapes):
    _, _, k, _, out = geometry(p, shapes)
    return out, int(np.prod(out)) * k, "one multiply-add per output value and K", "the inputs' sizes"


def _as_matrices(x, op: str, second: bool):
    if op == "VECTOR":
        return x[..., :, None] if second else x[..., None, :]
    return x if op == "NONE" else np.swapaxes(x, -1, -2)


def reference(xs, p):
    """The product in float64 (one rounding at the end, as a float32 accumulation nearly is), broadcast over the
    batch axes; a VECTOR side's length-1 axis taken out again."""
    a = _as_matrices(np.asarray(xs["a"], np.float64), p["op0"], False)
    b = _as_matrices(np.asarray(xs["b"], np.float64), p["op1"], True)
    y = np.matmul(a, b)
    if p["op1"] == "VECTOR":
        y = y[..., 0]
    if p["op0"] == "VECTOR":
        y = y[..., 0, :] if p["op1"] != "VECTOR" else y[..., 0]
    return np.asarray(y, dtype=ref.result_type())


def build(trt, network, xs, p):
    op = trt.MatrixOperation.__members__
    return network.add_matrix_multiply(xs["a"], op[p["op0"]], xs["b"], op[p["op1"]]).get_output(0)


def reads(p, shapes, index):
    """Output (batch…, i, j) reads row i of A and column j of B (the batch axes broadcast; VECTOR: the one vector)."""
    batch, _, k, _, _ = geometry(p, shapes)
    nb = len(batch)
    bi, rest = tuple(index[:nb]), list(index[nb:])
    i = rest.pop(0) if p["op0"] != "VECTOR" else 0
    j = rest.pop(0) if p["op1"] != "VECTOR" else 0

    def at(name, op, row, col, second):  # the input's own index of matrix cell (row, col) of its read
        own = tuple(0 if s == 1 else v for v, s in zip(bi, shapes[name][:nb]))
        if op == "VECTOR":
            return own + (col if not second else row,)
        return own + ((row, col) if op == "NONE" else (col, row))

    return {
        "a": [at("a", p["op0"], i, t, False) for t in range(k)],
        "b": [at("b", p["op1"], t, j, True) for t in range(k)],
    }


def cell(xs, p, index, reference_output=None):
    shapes = {n: xs[n].shape for n in ("a", "b")}
    cells = reads(p, shapes, index)
    pairs = [(float(xs["a"][ca]), float(xs["b"][cb])) for ca, cb in zip(cells["a"], cells["b"])]
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    terms = " + ".join(f"{precise(u)}·{precise(v)}" for u, v in pairs) if len(pairs) <= 8 else f"{len(pairs)} products"
    rows = tuple(
        {"A": str(ca), "a": precise(u), "B": str(cb), "b": precise(v), "a·b": precise(u * v)}
        for (ca, cb), (u, v) in zip(zip(cells["a"], cells["b"]), pairs)
    )
    return Cell(f"{terms} = **{shown}**", rows, ("A row of A times a column of B: K products summed.",))


def formula(p: dict) -> str:
    name = {"NONE": "{}", "TRANSPOSE": "{}ᵀ", "VECTOR": "{} (vectors)"}
    return f"Y = {name[p['op0']].format('A')} · {name[p['op1']].format('B')}"


def explain(p, shapes):
    batch, m, k, n, out = geometry(p, shapes)
    return [
        f"{len(batch)} batch axes {batch}, each a ({m} × {k}) · ({k} × {n}) product: output {out}, "
        f"{int(np.prod(out)) * k} multiply-adds. A size-1 batch axis of one input repeats against the other's."
    ]


# -- ONNX: MatMul (NumPy's matmul); Gemm, its α and C as TensorRT's ONNX parser builds them (steps after the layer) --
def onnx_read(node: Node) -> dict:
    """MatMul: NumPy's matmul, as TensorRT's ONNX parser builds it: two 1-D inputs VECTOR · VECTOR (a dot product);
    one 1-D input a matrix of one row (A) or one column (B) (`onnx_align`), its length-1 axis dropped from the output
    by its shape; Gemm: transA, transB → TRANSPOSE (α and C: `onnx_then`)."""
    if node.op == "MatMul":
        dot = all(len(shape) == 1 for shape in node.shapes)
        return {"op0": "VECTOR" if dot else "NONE", "op1": "VECTOR" if dot else "NONE"}
    for name, shape in zip("AB", node.shapes):
        if len(shape) != 2:
            raise node.fail(name, f"has rank {len(shape)}: ONNX's Gemm takes matrices (rank 2)", shape)
    return {
        "op0": "TRANSPOSE" if node.attr("transA", 0) else "NONE",
        "op1": "TRANSPOSE" if node.attr("transB", 0) else "NONE",
    }


def onnx_align(op: str, name: str, shape: tuple, rank: int) -> tuple:
    """An input at the node's rank, batch axes as ONNX broadcasts them (1s before); MatMul's 1-D input beside a
    matrix is a row (A: a 1 before it) or a column (B: a 1 after it), as NumPy's matmul reads it and TensorRT's
    parser reshapes it (two 1-D inputs stay vectors: VECTOR · VECTOR)."""
    shape = tuple(shape)
    if len(shape) == 1 and rank > 1:
        shape = shape + (1,) if name == "b" else (1,) + shape
    return (1,) * (rank - len(shape)) + shape


def onnx_then(node: Node, raw: dict) -> list:
    """Gemm's α and C as TensorRT's ONNX parser builds them after the matrix multiply: an ElementWise PROD by α
    (where α ≠ 1), then an ElementWise SUM with β·C (C's PROD by β is on constants: folded), C broadcast as ONNX
    broadcasts it (1s before)."""
    if node.op != "Gemm":
        return []
    steps = []
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    if alpha != 1.0:
        steps.append(("elementwise", {"operation": "PROD"}, {"b": np.full((1, 1, 1, 1), alpha, np.float32)}))
    if len(node.inputs) > 2 and node.inputs[2]:
        c = node.const(2, "C")  # a tensor the model computes: refused by name (the step's B is a constant)
        if c.ndim > 2:
            raise node.fail("C", f"has rank {c.ndim}: ONNX's Gemm takes C of rank 0 … 2", c.shape)
        scaled = np.float32(beta) * np.asarray(c, np.float32)
        steps.append(("elementwise", {"operation": "SUM"}, {"b": scaled.reshape((1,) * (4 - c.ndim) + c.shape)}))
    return steps


def onnx_write(g: Graph, xs: dict, p: dict, shapes: dict) -> str:
    a, b = xs["a"], xs["b"]
    if p["op0"] == "VECTOR" and p["op1"] == "VECTOR":  # dot products along the last axis
        return g.op("ReduceSum", [g.op("Mul", [a, b]), g.ints([-1])], keepdims=0)
    swap = [0, 1, 3, 2]
    if p["op0"] == "TRANSPOSE":
        a = g.op("Transpose", [a], perm=swap)
    if p["op1"] == "TRANSPOSE":
        b = g.op("Transpose", [b], perm=swap)
    return g.op("MatMul", [a, b])


def _b_example(shape):
    """B: 1, 0, −1, 1, 0, −1, … so that each product picks and subtracts A's values."""
    return np.resize(np.float32([1, 0, -1]), int(np.prod(shape))).reshape(shape).astype(np.float32)


# -- examples: worked out by hand --------------------------------------------------------------------------------
A23 = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)  # [[1 2 3] [4 5 6]]
B32 = _b_example((1, 1, 3, 2))  # [[1 0] [-1 1] [0 -1]]
HOW = "matrix products by hand"
EXAMPLES = (
    derived(
        "matrix_multiply",
        "none_none",
        "A (2 × 3) · B (3 × 2)",
        {},
        {"a": {"kind": "spec", "shape": (1, 1, 2, 3)}, "b": {"kind": "spec", "shape": (1, 1, 3, 2)}},
        np.float32([[1 - 2, 2 - 3], [4 - 5, 5 - 6]]).reshape(1, 1, 2, 2),
        HOW,
        note="Row (1, 2, 3) · column (1, −1, 0) = −1; · column (0, 1, −1) = −1.",
    ),
    derived(
        "matrix_multiply",
        "transpose_a",
        "Aᵀ (3 × 2) · B (2 × 3), A given 2 × 3",
        {"op0": "TRANSPOSE"},
        {"a": {"kind": "spec", "shape": (1, 1, 2, 3)}, "b": {"kind": "spec", "shape": (1, 1, 2, 3)}},
        np.float32([[5, 0, -5], [7, 0, -7], [9, 0, -9]]).reshape(1, 1, 3, 3),
        HOW,
        note="B's rows are both (1, 0, −1): each output row is (a + b, 0, −a − b) for Aᵀ's row (a, b).",
    ),
    derived(
        "matrix_multiply",
        "batch_broadcast",
        "B's batch of 1 against A's 2 channels",
        {},
        {"a": {"kind": "spec", "shape": (1, 2, 2, 3)}, "b": {"kind": "spec", "shape": (1, 1, 3, 2)}},
        np.float32([[-1, -1], [-1, -1], [-1, -1], [-1, -1]]).reshape(1, 2, 2, 2),
        HOW,
        note="A's channel 1 is 7 … 12: each row differs by 1 from one entry to the next, so both products "
        "are −1 again.",
    ),
    derived(
        "matrix_multiply",
        "dot",
        "VECTOR · VECTOR: dot products along W",
        {"op0": "VECTOR", "op1": "VECTOR"},
        {"a": {"kind": "spec", "shape": (1, 1, 2, 3)}, "b": {"kind": "constant", "shape": (1, 1, 2, 3), "value": 2.0}},
        np.float32([[12, 30]]).reshape(1, 1, 2),
        HOW,
        note="2·(1 + 2 + 3) = 12, 2·(4 + 5 + 6) = 30.",
    ),
)

LAYER = Layer(
    name="matrix_multiply",
    order=70,
    title="Matrix Multiply",
    icon=":material/grid_on:",
    summary="Y = op0(A) · op1(B) over the last two axes (NONE, TRANSPOSE, or VECTOR), batch axes broadcast.",
    params=(
        Param(
            "op0",
            "enum",
            "NONE",
            "How A is read: NONE its last two axes as a matrix, TRANSPOSE swapped, VECTOR "
            "its last axis as row vectors.",
            choices=OPERATIONS,
            label="A's operation",
        ),
        Param(
            "op1",
            "enum",
            "NONE",
            "How B is read: NONE its last two axes as a matrix, TRANSPOSE swapped, VECTOR "
            "its last axis as column vectors.",
            choices=OPERATIONS,
            label="B's operation",
        ),
    ),
    inputs=(
        Input("a", "The left matrix (its last two axes).", example=arange_pattern),
        Input(
            "b",
            "The right matrix; may be a model's constant (weights).",
            example_shape=(1, 1, 3, 2),
            example=_b_example,
            constant=True,
        ),
    ),
    example_shape=(1, 1, 2, 3),
    example_input=arange_pattern,
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
    fit=fit,
    sums=lambda p: True,
    onnx=OnnxMap(("MatMul", "Gemm"), onnx_read, onnx_write, lift="leading", align=onnx_align, then=onnx_then),
)
