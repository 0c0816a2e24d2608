"""IReduceLayer: `add_reduce(x, op, axes, keep_dims)`: SUM, PROD, MAX, MIN or AVG over the axes a bitmask names."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.box import Box
from ..base.errors import Stricter
from ..base.examples import derived
from ..base.inputs import DIM_NAMES, arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

OPERATIONS = ("SUM", "PROD", "MAX", "MIN", "AVG")
NUMPY = {"SUM": np.sum, "PROD": np.prod, "MAX": np.max, "MIN": np.min, "AVG": np.mean}
ONNX_OPS = {"SUM": "ReduceSum", "PROD": "ReduceProd", "MAX": "ReduceMax", "MIN": "ReduceMin", "AVG": "ReduceMean"}
# TensorRT's ONNX parser builds these as a reduce over every spatial axis, kept as 1s (its globalPoolingHelper), so
# they open at any spatial size (a pooling window is at most 15 wide)
GLOBAL_POOLS = {"GlobalAveragePool": "AVG", "GlobalMaxPool": "MAX"}


def axes_of(p: dict, rank: int) -> tuple[int, ...]:
    return tuple(a for a in range(rank) if p["axes"] >> a & 1)


def axes_text(mask: int, shape: tuple) -> str:
    """ "H, W (axes = 12)": the bitmask as the input's axis names."""
    names = DIM_NAMES.get(len(shape), tuple(str(i) for i in range(len(shape))))
    return ", ".join(names[a] for a in range(len(shape)) if mask >> a & 1) + f" (axes = {mask})"


def idle_axes(mask: int, shape: tuple) -> str | None:
    """The axes of size 1 a bitmask names, in words ("N"), where it names some besides others: a mean, sum or
    extreme over one value is that value, so naming them changes nothing. None where it names none (or only those)."""
    names = DIM_NAMES.get(len(shape), tuple(str(i) for i in range(len(shape))))
    idle = [a for a in range(len(shape)) if mask >> a & 1 and shape[a] == 1]
    return ", ".join(names[a] for a in idle) if idle and len(idle) < bin(mask).count("1") else None


def axes_rule(axes, p, shape):
    if axes < 1:
        return "must name at least one axis (a bitmask above 0)"
    if axes >= 1 << len(shape):
        return f"names axis {axes.bit_length() - 1}, but the input has rank {len(shape)} (axes below {1 << len(shape)})"
    return None


def keep_rule(keep, p, shape):
    left = len(shape) - bin(p["axes"]).count("1")
    if not keep and left < 2:
        return Stricter(
            f"off leaves {left} ax{'i' if left == 1 else 'e'}s: keep_dims on, or reduce fewer axes",
            "TensorRT builds it, but the stage draws tensors of rank 2 or more",
        )
    return None


def output_shape(p: dict, shape: tuple) -> tuple:
    axes = axes_of(p, len(shape))
    if p["keep_dims"]:
        return tuple(1 if a in axes else d for a, d in enumerate(shape))
    return tuple(d for a, d in enumerate(shape) if a not in axes)


def cost(p, shape):
    return output_shape(p, shape), int(np.prod(shape)), "one per input value", "the input size: N, C, H or W"


def reference(x, p):
    """In float64 (PROD and SUM over many values: one rounding at the end), cast to the result type."""
    y = NUMPY[p["operation"]](np.asarray(x, np.float64), axis=axes_of(p, x.ndim), keepdims=bool(p["keep_dims"]))
    return np.asarray(y, dtype=ref.result_type())


def build(trt, network, x, p):
    op = trt.ReduceOperation.__members__[p["operation"]]
    return network.add_reduce(x, op, p["axes"], p["keep_dims"]).get_output(0)


def reads(p, shape, index):
    """Every input cell output `index` gathers: its own index along the kept axes, all along the reduced ones."""
    axes = axes_of(p, len(shape))
    kept = iter(index) if not p["keep_dims"] else iter(i for a, i in enumerate(index) if a not in axes)
    fixed = {a: next(kept) for a in range(len(shape)) if a not in axes}
    ranges = [range(shape[a]) if a in axes else (fixed[a],) for a in range(len(shape))]
    return Box(ranges)  # every cell along the reduced axes: held as its bounds


def cell(x, p, index, reference_output=None):
    values = np.asarray(reads(p, x.shape, index).of(x), np.float64).ravel()
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    name = p["operation"].lower() if p["operation"] != "AVG" else "mean"
    terms = ", ".join(precise(float(v)) for v in values) if len(values) <= 12 else f"{len(values)} values"
    return Cell(
        f"{name}({terms}) = **{shown}**", (), (f"{len(values)} input cells along {axes_text(p['axes'], x.shape)}.",)
    )


def formula(p: dict) -> str:
    name = p["operation"].lower() if p["operation"] != "AVG" else "mean"
    return f"y = {name} of x over the axes in the bitmask {p['axes']}" + (", kept as size 1" if p["keep_dims"] else "")


def explain(p, shape):
    out, idle = output_shape(p, shape), idle_axes(p["axes"], shape)
    return [
        f"{p['operation']} over {axes_text(p['axes'], shape)}: {shape} → {out}. TensorRT takes the axes as a "
        "bitmask, bit a for axis a; keep_dims keeps each reduced axis as size 1, else it goes."
    ] + (
        [f"axes: {idle}, of size 1, changes nothing here beside the others (keep_dims keeps it; off, it goes)."]
        if idle and p["keep_dims"]
        else []
    )


def _axes(node: Node):
    """The node's axes: an input from opset 13 (ReduceSum) or 18 (the others), an attribute before; None: none."""
    return node.const(1, "axes", required=False) if len(node.inputs) > 1 else node.attr("axes")


def onnx_identity(node: Node) -> str | None:
    """`noop_with_empty_axes` with no axes: ONNX's rule returns the input unchanged (TensorRT's parser: an identity)."""
    given = _axes(node)
    if node.attr("noop_with_empty_axes", 0) and (given is None or len(given) == 0):
        return "noop_with_empty_axes is 1 and no axes are given: ONNX returns the input unchanged"
    return None


def onnx_read(node: Node) -> dict:
    """ReduceSum, ReduceProd, ReduceMax, ReduceMin, ReduceMean: `axes` (none: every axis) → the bitmask, `keepdims`
    (noop_with_empty_axes with none: `onnx_identity`); GlobalAveragePool, GlobalMaxPool: AVG, MAX over every axis
    after N and C, kept."""
    rank = len(node.onnx_shape)
    if node.op in GLOBAL_POOLS:
        return {"operation": GLOBAL_POOLS[node.op], "axes": sum(1 << a for a in range(2, rank)), "keep_dims": True}
    op = next(k for k, v in ONNX_OPS.items() if v == node.op)
    given = _axes(node)
    axes = range(rank) if given is None or len(given) == 0 else [int(a) for a in np.ravel(given)]
    if any(not -rank <= a < rank for a in axes):
        raise node.fail("axes", f"must lie in −{rank} … {rank - 1}", list(axes))
    return {
        "operation": op,
        "axes": sum(1 << (a % rank) for a in set(axes)),
        "keep_dims": bool(node.attr("keepdims", 1)),
    }


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    return g.op(ONNX_OPS[p["operation"]], [x, g.ints(axes_of(p, len(shape)))], keepdims=int(p["keep_dims"]))


# -- examples: x = 1 … 12 at (1, 2, 2, 3), by hand ----------------------------------------------------------
X = {"kind": "spec", "shape": (1, 2, 2, 3)}  # channel 0: [[1 2 3] [4 5 6]], channel 1: [[7 8 9] [10 11 12]]
HOW = "sums, products and extremes of x = 1 … 12 by hand"
EXAMPLES = (
    derived(
        "reduce",
        "sum_w",
        "SUM along W (axes = 8)",
        {"operation": "SUM", "axes": 8},
        X,
        np.float32([6, 15, 24, 33]).reshape(1, 2, 2, 1),
        HOW,
    ),
    derived(
        "reduce",
        "avg_hw",
        "AVG over H, W (axes = 12)",
        {"operation": "AVG", "axes": 12},
        X,
        np.float32([3.5, 9.5]).reshape(1, 2, 1, 1),
        HOW,
    ),
    derived(
        "reduce",
        "max_c",
        "MAX over C (axes = 2), keep_dims off",
        {"operation": "MAX", "axes": 2, "keep_dims": False},
        X,
        np.float32([[7, 8, 9], [10, 11, 12]]).reshape(1, 2, 3),
        HOW,
    ),
    derived(
        "reduce",
        "prod_h",
        "PROD along H (axes = 4)",
        {"operation": "PROD", "axes": 4},
        X,
        np.float32([[4, 10, 18], [70, 88, 108]]).reshape(1, 2, 1, 3),
        HOW,
    ),
    derived(
        "reduce",
        "min_all",
        "MIN over C, H, W (axes = 14)",
        {"operation": "MIN", "axes": 14},
        X,
        np.float32([1]).reshape(1, 1, 1, 1),
        HOW,
    ),
)

LAYER = Layer(
    name="reduce",
    order=80,
    title="Reduce",
    icon=":material/compress:",
    summary="y = SUM, PROD, MAX, MIN or AVG of x over the axes a bitmask names; keep_dims keeps them as size 1.",
    params=(
        Param("operation", "enum", "SUM", "The ReduceOperation.", choices=OPERATIONS, label="Operation"),
        Param(
            "axes",
            "int",
            8,
            "Bitmask of the axes reduced: 1 = N, 2 = C, 4 = H, 8 = W (4-D; 5-D: 4 = D, 8 = H, "
            "16 = W); several bits, several axes.",
            low=1,
            high=31,
            step=1,
            rule=axes_rule,
            offers=lambda p, s: list(range(1, 1 << len(s))),
            name_of=axes_text,
            label="Axes",
        ),
        Param(
            "keep_dims",
            "bool",
            True,
            "Keep each reduced axis as size 1 (else the output loses it).",
            rule=keep_rule,
            label="Keep dimensions",
        ),
    ),
    example_shape=(1, 2, 2, 3),
    example_input=lambda shape: arange_pattern(shape, 1),
    reference=reference,
    build=build,
    cost=cost,
    formula=formula,
    ranks=(4, 5),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
    sums=lambda p: p["operation"] in ("SUM", "AVG"),
    onnx=OnnxMap((*ONNX_OPS.values(), *GLOBAL_POOLS), onnx_read, onnx_write, lift="trailing", identity=onnx_identity),
)
