"""IUnaryLayer: `add_unary(x, op)`, one function of each value: every UnaryOperation (NOT on BOOL, ISINF and ISNAN
to BOOL, drawn as 0/1)."""

from __future__ import annotations

import math

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import centered_ramp
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

_erf = np.frompyfunc(math.erf, 1, 1)
FUNCTIONS = {
    "EXP": np.exp,
    "LOG": np.log,
    "SQRT": np.sqrt,
    "RECIP": lambda x: 1 / x,
    "ABS": np.abs,
    "NEG": np.negative,
    "SIN": np.sin,
    "COS": np.cos,
    "TAN": np.tan,
    "SINH": np.sinh,
    "COSH": np.cosh,
    "ASIN": np.arcsin,
    "ACOS": np.arccos,
    "ATAN": np.arctan,
    "ASINH": np.arcsinh,
    "ACOSH": np.arccosh,
    "ATANH": np.arctanh,
    "CEIL": np.ceil,
    "FLOOR": np.floor,
    "ERF": lambda x: _erf(x).astype(np.float64),
    "NOT": lambda x: x == 0,
    "SIGN": np.sign,
    "ROUND": np.rint,
    "ISINF": np.isinf,
    "ISNAN": np.isnan,
}
OPERATIONS = tuple(FUNCTIONS)
BOOL_IN, BOOL_OUT = ("NOT",), ("NOT", "ISINF", "ISNAN")
ONNX_OPS = {
    "EXP": "Exp",
    "LOG": "Log",
    "SQRT": "Sqrt",
    "RECIP": "Reciprocal",
    "ABS": "Abs",
    "NEG": "Neg",
    "SIN": "Sin",
    "COS": "Cos",
    "TAN": "Tan",
    "SINH": "Sinh",
    "COSH": "Cosh",
    "ASIN": "Asin",
    "ACOS": "Acos",
    "ATAN": "Atan",
    "ASINH": "Asinh",
    "ACOSH": "Acosh",
    "ATANH": "Atanh",
    "CEIL": "Ceil",
    "FLOOR": "Floor",
    "ERF": "Erf",
    "NOT": "Not",
    "SIGN": "Sign",
    "ROUND": "Round",
    "ISINF": "IsInf",
    "ISNAN": "IsNaN",
}
ONNX_BOOL, ONNX_FLOAT = 9, 1  # TensorProto.BOOL, TensorProto.FLOAT
# Where the function has no finite value (outside its domain, or a pole): the layer's own rule, not an error.
DOMAINS = {
    "LOG": lambda x: x <= 0,
    "SQRT": lambda x: x < 0,
    "RECIP": lambda x: x == 0,
    "ASIN": lambda x: np.abs(x) > 1,
    "ACOS": lambda x: np.abs(x) > 1,
    "ACOSH": lambda x: x < 1,
    "ATANH": lambda x: np.abs(x) >= 1,
}


def reference(x, p):
    """The function in float64 (NumPy's, which rounds correctly or nearly), cast to the result type; ROUND rounds
    half to even, as TensorRT documents."""
    with np.errstate(all="ignore"):
        y = FUNCTIONS[p["operation"]](np.asarray(x, np.float64))
    return np.asarray(y, dtype=ref.result_type())


def undefined(x, p):
    rule = DOMAINS.get(p["operation"])
    return rule(np.asarray(x, np.float64)) if rule else np.zeros(np.shape(x), bool)


def build(trt, network, x, p):
    kind = x.dtype  # the layer's own type (FLOAT, or HALF/BF16 under FP16/BF16)
    if p["operation"] == "NOT":  # NOT reads BOOL: a nonzero value is true
        x = network.add_cast(x, trt.DataType.BOOL).get_output(0)
    y = network.add_unary(x, trt.UnaryOperation.__members__[p["operation"]]).get_output(0)
    if y.dtype == trt.DataType.BOOL:  # NOT, ISINF, ISNAN: BOOL, as 0 and 1 of the input's type
        y = network.add_cast(y, kind).get_output(0)
    return y


def reads(p, shape, index):
    return [tuple(index)]


def cell(x, p, index, reference_output=None):
    v = float(x[tuple(index)])
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    notes = ()
    if p["operation"] in BOOL_OUT:
        notes = (
            "A BOOL result, drawn as 1 for true and 0 for false"
            + (" (NOT reads its input as BOOL: nonzero is true)." if p["operation"] == "NOT" else "."),
        )
    elif p["operation"] == "ROUND":
        notes = ("ROUND rounds half to even: 0.5 → 0, 1.5 → 2, 2.5 → 2.",)
    return Cell(f"{p['operation'].lower()}({precise(v)}) = **{shown}**", (), notes)


def formula(p: dict) -> str:
    return f"y = {p['operation'].lower()}(x)" + (" ? 1 : 0" if p["operation"] in BOOL_OUT else "")


def onnx_read(node: Node) -> dict:
    return {"operation": next(k for k, v in ONNX_OPS.items() if v == node.op)}


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    op = p["operation"]
    if op in BOOL_IN:
        x = g.op("Cast", [x], to=ONNX_BOOL)
    y = g.op(ONNX_OPS[op], [x])
    return g.op("Cast", [y], to=ONNX_FLOAT) if op in BOOL_OUT else y


# -- examples: by hand -------------------------------------------------------------------------------------
HALVES = {"kind": "ramp", "shape": (1, 1, 3, 3), "low": -2.0, "high": 2.0}  # −2, −1.5, …, 2
RAMP = {"kind": "spec", "shape": (1, 1, 3, 3)}  # −4 … 4


def _ex(name, title, op, input, values, note=None):
    return derived(
        "unary",
        name,
        title,
        {"operation": op},
        input,
        np.float32(values).reshape(1, 1, 3, 3),
        "the function of each value by hand",
        note,
    )


EXAMPLES = (
    _ex(
        "round_half_even",
        "ROUND: halves to even",
        "ROUND",
        HALVES,
        [-2, -2, -1, -0.0, 0, 0, 1, 2, 2],
        "−1.5 → −2, −0.5 → −0, 0.5 → 0, 1.5 → 2: a half goes to the even neighbour, not away from zero.",
    ),
    _ex("floor", "FLOOR", "FLOOR", HALVES, [-2, -2, -1, -1, 0, 0, 1, 1, 2]),
    _ex("ceil", "CEIL", "CEIL", HALVES, [-2, -1, -1, -0.0, 0, 1, 1, 2, 2]),
    _ex("sign", "SIGN", "SIGN", RAMP, [-1, -1, -1, -1, 0, 1, 1, 1, 1]),
    _ex("abs", "ABS", "ABS", RAMP, [4, 3, 2, 1, 0, 1, 2, 3, 4]),
    _ex("not", "NOT: nonzero is true", "NOT", RAMP, [0, 0, 0, 0, 1, 0, 0, 0, 0]),
    _ex("recip", "RECIP of 4", "RECIP", {"kind": "constant", "shape": (1, 1, 3, 3), "value": 4.0}, [0.25] * 9),
    _ex("sqrt", "SQRT of 2.25", "SQRT", {"kind": "constant", "shape": (1, 1, 3, 3), "value": 2.25}, [1.5] * 9),
)

LAYER = Layer(
    name="unary",
    order=85,
    title="Unary",
    icon=":material/functions:",
    summary="y = f(x) for each value: EXP, LOG, SQRT, … ROUND, ISNAN (a BOOL result drawn as 0/1).",
    params=(
        Param(
            "operation",
            "enum",
            "EXP",
            "The UnaryOperation. NOT reads BOOL (nonzero is true); NOT, ISINF and ISNAN "
            "give BOOL, drawn as 0 and 1; ROUND rounds half to even.",
            choices=OPERATIONS,
            label="Function",
        ),
    ),
    example_shape=(1, 1, 3, 3),
    example_input=centered_ramp,
    reference=reference,
    build=build,
    formula=formula,
    ranks=(4, 5),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    undefined=undefined,
    onnx=OnnxMap(tuple(ONNX_OPS.values()), onnx_read, onnx_write, lift="trailing"),
)
