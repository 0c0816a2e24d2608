"""ISoftMaxLayer: `add_softmax(x)` with `.axes`, the bitmask of the one axis it normalises along."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.errors import Stricter
from ..base.examples import derived
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

AXIS_NAMES = {4: "NCHW", 5: "NCDHW"}


def axis_of(p: dict) -> int:
    return int(p["axes"]).bit_length() - 1


def example_input(shape) -> np.ndarray:
    """x = w − h + c: every row along W is k, k+1, k+2, …, every column along H falls by 1, every channel adds 1,
    so each axis gives softmax a different picture (and W shows that a shift changes nothing)."""
    index = np.indices(shape, dtype=np.float32)
    return np.ascontiguousarray(index[-1] - index[-2] + index[1], dtype=np.float32)


def reference(x, p):
    """exp(x − max) / Σ exp(x − max) along the axis (subtracting the max: no overflow, the same result)."""
    x = np.asarray(x, np.float64)
    axis = axis_of(p)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return np.asarray(e / np.sum(e, axis=axis, keepdims=True), dtype=ref.result_type())


def axes_rule(axes, p, shape):
    if axes <= 0 or axes & (axes - 1):
        return Stricter(
            "must set exactly one bit (one axis): 1, 2, 4, 8 or 16",
            "TensorRT documents one axis (ISoftMaxLayer::setAxes); its builder accepts several, with no "
            "documented result",
        )
    if axes >= 1 << len(shape):
        return f"names axis {axes.bit_length() - 1}, but the input has rank {len(shape)} (axes below {1 << len(shape)})"
    return None


def axis_name(axes: int, shape: tuple) -> str:
    """The axis a one-bit mask names, as the input's dimensions are called: 4 is H on a 4-D input, D on a 5-D one."""
    names = ("N", "C", "H", "W") if len(shape) == 4 else ("N", "C", "D", "H", "W")
    return names[axes.bit_length() - 1] if 0 < axes < 1 << len(shape) else "?"


def axes_offered(p, shape):
    return [1 << a for a in range(len(shape))]


def formula(p: dict) -> str:
    a = axis_of(p)
    return f"axes = {p['axes']} = 1 << {a}: y = exp(x) / Σ exp(x) along axis {a}"


def reads(p, shape, index):
    """The cells softmax normalises output `index` with: its line along the axis."""
    axis = axis_of(p)
    return [tuple(index[:axis]) + (i,) + tuple(index[axis + 1 :]) for i in range(shape[axis])]


def cell(x, p, index, reference_output=None):
    cells = reads(p, x.shape, index)
    values = [float(x[c]) for c in cells]
    top = max(values)
    own = float(x[tuple(index)])
    total = sum(np.exp(v - top) for v in values)
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    terms = " + ".join(f"e^{precise(v - top)}" for v in values) if len(values) <= 8 else f"{len(values)} terms"
    line = f"e^{precise(own - top)} / ({terms}) = **{shown}**"
    rows = tuple(
        {
            "input": str(c),
            "x": precise(v),
            "exp(x − max)": precise(float(np.exp(v - top))),
            "share": precise(float(np.exp(v - top) / total)),
        }
        for c, v in zip(cells, values)
    )
    return Cell(
        line,
        rows,
        (
            f"The {len(values)} cells along axis {axis_of(p)} share 1 between them; the largest "
            f"({precise(top)}) is subtracted first, which changes nothing but keeps exp finite.",
        ),
    )


def explain(p, shape):
    a = axis_of(p)
    name = AXIS_NAMES.get(len(shape), "")[a : a + 1]
    return [
        f"Softmax along axis {a}{f' ({name})' if name else ''}: every line of {shape[a]} cells along it sums to "
        f"1. TensorRT takes the axis as a bitmask with one bit set, here 1 << {a} = {p['axes']}.",
        "The output does not change when a constant is added along the axis: softmax(x + k) = softmax(x).",
    ]


def build(trt, network, x, p):
    layer = network.add_softmax(x)
    layer.axes = p["axes"]
    return layer.get_output(0)


def onnx_read(node: Node) -> dict:
    """Softmax: `axis` (opset 13 on: default −1, that axis alone; before 13: default 1, and the axes from it on
    flattened into one, which is one axis only where the ones after it have size 1)."""
    rank = len(node.onnx_shape)
    axis = node.attr("axis", -1 if node.opset >= 13 else 1)
    if not -rank <= axis < rank:
        raise node.fail("axis", f"must lie in −{rank} … {rank - 1}", axis)
    axis %= rank
    if node.opset < 13 and int(np.prod(node.onnx_shape[axis + 1 :])) > 1:
        raise node.fail(
            "axis",
            f"before opset 13 Softmax normalises over axes {axis} … {rank - 1} flattened into "
            "one; TensorRT's softmax layer normalises along one axis (export the model at opset "
            "13 or later, or reshape around it)",
            axis,
        )
    return {"axes": 1 << axis}


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    return g.op("Softmax", [x], axis=axis_of(p))


# -- examples on x = w − h + c, shape (1, 2, 3, 4): worked out by hand --------------------------------------
X = {"kind": "spec", "shape": (1, 2, 3, 4)}
E = np.exp(np.arange(4.0))
ALONG_W = E / E.sum()  # softmax(0, 1, 2, 3): every row, whatever its offset
ALONG_H = np.exp(-np.arange(3.0)) / np.exp(-np.arange(3.0)).sum()  # softmax(0, −1, −2): every column
ALONG_C = np.exp(np.arange(2.0)) / np.exp(np.arange(2.0)).sum()  # softmax(0, 1): every channel pair


def _example(name, title, axes, expected, note):
    return derived(
        "softmax",
        name,
        title,
        {"axes": axes},
        X,
        np.broadcast_to(expected, (1, 2, 3, 4)),
        "softmax's definition on the input x = w − h + c",
        note,
    )


EXAMPLES = (
    _example(
        "along_w",
        "axes = 8: along W",
        8,
        ALONG_W,
        "Every row is k, k+1, k+2, k+3 for some k: the same softmax, 0.0321 0.0871 0.2369 0.6439.",
    ),
    _example(
        "along_h",
        "axes = 4: along H",
        4,
        ALONG_H[:, None],
        "Every column falls by 1 per row: softmax(0, −1, −2) = 0.6652 0.2447 0.0900.",
    ),
    _example(
        "along_c",
        "axes = 2: along C (the default)",
        2,
        ALONG_C[:, None, None],
        "Channel 1 is channel 0 plus 1: 0.2689 and 0.7311 at every position.",
    ),
    _example(
        "along_n",
        "axes = 1: along a batch of one",
        1,
        np.ones(1),
        "One cell per line: each output is 1, whatever the input.",
    ),
)

LAYER = Layer(
    name="softmax",
    order=110,
    title="Softmax",
    icon=":material/percent:",
    summary="y = exp(x) / Σ exp(x) along the one axis `axes` names (a bitmask).",
    params=(
        Param(
            "axes",
            "int",
            2,
            "Bitmask of the axis to normalise along (exactly one bit): 1 = N, 2 = C, 4 = H "
            "(4-D) or D (5-D), 8 = W (4-D) or H (5-D), 16 = W (5-D).",
            low=1,
            high=16,
            step=1,
            rule=axes_rule,
            offers=axes_offered,
            name_of=lambda v, s: f"{axis_name(v, s)} (axes = {v})",
            label="Axis",
        ),
    ),
    example_shape=(1, 2, 3, 4),
    example_input=example_input,
    reference=reference,
    build=build,
    formula=formula,
    ranks=(4, 5),
    sums=lambda p: True,
    onnx=OnnxMap(("Softmax",), onnx_read, onnx_write, lift="trailing"),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
)
