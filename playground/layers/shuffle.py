"""IShuffleLayer: `add_shuffle(x)` with `.first_transpose`, `.reshape_dims` (0 and −1 placeholders,
`.zero_is_placeholder`) and `.second_transpose`. On the input 1, 2, 3, … every value names the cell it came
from, so the output's colours are the trail of the elements."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap
from ..base.params import Param

DRAWN_RANKS = (2, 5)  # the heatmaps draw ranks 2 … 5


def _permutation(values, rank: int) -> str | None:
    if sorted(values) != list(range(rank)):
        return f"must be a permutation of 0 … {rank - 1} (each axis once)"
    return None


def reshaped(p: dict, shape: tuple) -> tuple | None:
    """reshape_dims with its placeholders resolved against the transposed shape: 0 copies that axis (while
    zero_is_placeholder), −1 takes what is left; None when there is no reshape."""
    dims = p["reshape_dims"]
    if dims is None:
        return None
    moved = tuple(shape[a] for a in p["first_transpose"])
    out = [moved[i] if d == 0 and p["zero_is_placeholder"] else d for i, d in enumerate(dims)]
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1]))
        out[out.index(-1)] = int(np.prod(shape)) // known if known else 0
    return tuple(out)


def output_rank(p: dict, shape: tuple) -> int:
    return len(p["reshape_dims"]) if p["reshape_dims"] is not None else len(shape)


def reference(x, p):
    y = np.transpose(np.asarray(x), p["first_transpose"])
    dims = reshaped(p, x.shape)
    if dims is not None:
        y = y.reshape(dims)
    return np.ascontiguousarray(np.transpose(y, p["second_transpose"]), dtype=ref.result_type())


def reshape_rule(dims, p, shape):
    if not DRAWN_RANKS[0] <= len(dims) <= DRAWN_RANKS[1]:
        return "needs {0} to {1} values (the output's rank; the playground draws ranks {0} … {1})".format(*DRAWN_RANKS)
    if sum(d == -1 for d in dims) > 1:
        return "may hold at most one −1 (the size inferred from the others)"
    if any(d < -1 for d in dims):
        return "values must be −1, 0 or positive"
    moved = tuple(shape[a] for a in p["first_transpose"])
    if p["zero_is_placeholder"] and any(d == 0 and i >= len(moved) for i, d in enumerate(dims)):
        return f"a 0 copies the transposed input's axis at its place, and it has only {len(moved)} axes"
    return None


def check(fail, p, shape):
    dims = reshaped(p, shape)
    if dims is not None:
        size, total = int(np.prod(dims)), int(np.prod(shape))
        if 0 in dims:
            why = " (zero_is_placeholder is false, so 0 is a size)" if not p["zero_is_placeholder"] else ""
            raise fail("reshape_dims", f"resolves to {dims}, an empty tensor{why}", p["reshape_dims"])
        if size != total:
            raise fail(
                "reshape_dims", f"resolves to {dims} = {size} values; the input holds {total}", p["reshape_dims"]
            )
    rank = output_rank(p, shape)
    if p["second_transpose"] == tuple(range(len(p["second_transpose"]))):  # an identity follows the rank
        p = {**p, "second_transpose": tuple(range(rank))}
    problem = _permutation(p["second_transpose"], rank)
    if problem:
        raise fail(
            "second_transpose",
            problem + f" of the reshaped tensor's {output_rank(p, shape)} axes",
            p["second_transpose"],
        )
    return p


def cost(p, shape):
    out = reshaped(p, shape) or tuple(shape[a] for a in p["first_transpose"])
    return tuple(out[a] for a in p["second_transpose"]), int(np.prod(shape)), "one per value", "the input size"


def origin(p: dict, shape: tuple, index) -> tuple:
    """The input cell output `index` came from: the three steps undone on the index alone."""
    moved = tuple(shape[a] for a in p["first_transpose"])
    reshaped_index = [0] * len(index)
    for i, a in enumerate(p["second_transpose"]):  # output axis i is the reshaped tensor's axis a
        reshaped_index[a] = int(index[i])
    dims = reshaped(p, shape)
    moved_index = np.unravel_index(np.ravel_multi_index(reshaped_index, dims), moved) if dims else reshaped_index
    at = [0] * len(shape)
    for i, a in enumerate(p["first_transpose"]):  # the transposed tensor's axis i is the input's axis a
        at[a] = int(moved_index[i])
    return tuple(at)


def reads(p, shape, index):
    return [origin(p, shape, index)]


def cell(x, p, index, reference_output=None):
    at = origin(p, x.shape, index)
    return Cell(
        f"input{at} = **{precise(float(x[at]))}**",
        (),
        (f"output{tuple(index)} holds input{at}: a shuffle only moves values, it computes nothing.",),
    )


def explain(p, shape):
    moved = tuple(shape[a] for a in p["first_transpose"])
    steps = [f"first_transpose {p['first_transpose']}: {tuple(shape)} → {moved}"]
    dims = reshaped(p, shape)
    if dims is not None:
        steps.append(
            f"reshape_dims {p['reshape_dims']} → {dims}"
            + (
                " (0 copies the axis at its place, −1 takes what is left)"
                if 0 in p["reshape_dims"] or -1 in p["reshape_dims"]
                else ""
            )
        )
    out = dims or moved
    steps.append(f"second_transpose {p['second_transpose']}: {out} → {tuple(out[a] for a in p['second_transpose'])}")
    idle = (  # said once it is turned off (the default is on), where no 0 in reshape_dims reads it
        [
            "zero_is_placeholder off changes nothing here: it decides only what a 0 in reshape_dims means (on: that "
            "axis copied; off: an axis of length 0)."
        ]
        if not p["zero_is_placeholder"] and not (dims is not None and 0 in p["reshape_dims"])
        else []
    )
    return idle + [
        "**The three steps**, in TensorRT's order:\n\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)),
        "On the input 1, 2, 3, … each value is its cell's row-major position + 1: read the output's values to "
        "see where each element came from.",
    ]


def build(trt, network, x, p):
    layer = network.add_shuffle(x)
    layer.first_transpose = p["first_transpose"]
    layer.zero_is_placeholder = p["zero_is_placeholder"]
    if p["reshape_dims"] is not None:
        layer.reshape_dims = p["reshape_dims"]
    layer.second_transpose = p["second_transpose"]
    return layer.get_output(0)


def onnx_read(node: Node) -> dict:
    """Transpose as the first transpose; Reshape (allowzero), Flatten, Squeeze and Unsqueeze as the reshape."""
    rank, lifted = len(node.onnx_shape), tuple(range(len(node.onnx_shape), len(node.shape)))
    if node.op == "Transpose":
        perm = node.attr("perm") or list(range(rank))[::-1]
        return {"first_transpose": tuple(perm) + lifted}
    if node.op == "Reshape":
        dims = node.const(1, "shape")
        return {
            "reshape_dims": tuple(int(v) for v in dims.ravel()),
            "zero_is_placeholder": not node.attr("allowzero", 0),
        }
    shape = list(node.onnx_shape)
    if node.op == "Flatten":
        axis = node.attr("axis", 1) % (rank + 1) if node.attr("axis", 1) != rank else rank
        return {"reshape_dims": (int(np.prod(shape[:axis])), int(np.prod(shape[axis:])))}
    axes = node.attr("axes") if node.opset < 13 else node.const(1, "axes", required=node.op == "Unsqueeze")
    if node.op == "Squeeze":
        axes = [a % rank for a in axes] if axes is not None else [i for i, d in enumerate(shape) if d == 1]
        return {"reshape_dims": tuple(d for i, d in enumerate(shape) if i not in axes)}
    out_rank = rank + len(axes)
    for a in sorted(int(v) % out_rank for v in np.ravel(axes)):
        shape.insert(a, 1)
    return {"reshape_dims": tuple(shape)}


PASS_THROUGH = ("Identity", "Dropout")  # ONNX nodes that compute nothing at inference


def onnx_identity(node: Node) -> str | None:
    """Identity, and Dropout at inference (opset 7 on: no training_mode, or a constant false; before: is_test 1; the
    ratio then does nothing): TensorRT's ONNX parser builds an identity layer for each. A Dropout that trains, or
    whose mask something reads, is more than its input."""
    if node.op == "Identity":
        return "Identity passes its input through"
    if node.op != "Dropout":
        return None
    if any(node.read[1:]):
        raise node.fail(
            "mask", "is read by another node or is a graph output: only Dropout's output at inference opens"
        )
    if node.opset < 7:
        # Dropout-1 and Dropout-6: "is_test (int, default 0) if nonzero, run dropout in test mode where the output
        # is simply Y = X", so an absent is_test trains (TensorRT's parser reads an absent one as 1: the spec rules).
        if not node.attr("is_test", 0):
            raise node.fail(
                "is_test",
                "must be 1 before opset 7: a Dropout with is_test 0 (its default) trains, dropping values at random",
                node.attr("is_test", 0),
            )
        return f"Dropout at inference (opset {node.opset}, is_test 1; its ratio unused) passes its input through"
    given = len(node.inputs) > 2 and node.inputs[2] != ""
    if given and node.consts[2] is None:
        raise node.fail(
            "training_mode",
            "must be a constant false (an initializer or a Constant node): a Dropout that may train drops values",
        )
    if given and np.any(node.consts[2]):
        raise node.fail("training_mode", "must be false: a Dropout that trains drops values at random", True)
    return "Dropout at inference (training_mode absent or false; its ratio unused) passes its input through"


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """Transpose, Reshape (allowzero where 0 is a size), Transpose: each left out where it changes nothing."""
    y = x
    if list(p["first_transpose"]) != sorted(p["first_transpose"]):
        y = g.op("Transpose", [y], perm=list(p["first_transpose"]))
    if p["reshape_dims"] is not None:
        y = g.op("Reshape", [y, g.ints(p["reshape_dims"])], allowzero=int(not p["zero_is_placeholder"]))
    if list(p["second_transpose"]) != sorted(p["second_transpose"]):
        y = g.op("Transpose", [y], perm=list(p["second_transpose"]))
    return y if y != x else g.op("Identity", [x])


# -- examples on 1 … 24 in shape (1, 2, 3, 4): worked out by hand ---------------------------------------------
X = {"kind": "spec", "shape": (1, 2, 3, 4)}
C0 = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
C1 = [[v + 12 for v in row] for row in C0]


def _example(name, title, params, expected, note):
    return derived(
        "shuffle",
        name,
        title,
        params,
        X,
        np.array(expected, np.float32),
        "IShuffleLayer's three steps on the input 1 … 24",
        note,
    )


EXAMPLES = (
    _example(
        "transpose_hw",
        "first_transpose (0, 1, 3, 2): H and W swapped",
        {"first_transpose": "0,1,3,2"},
        [[np.transpose(C0).tolist(), np.transpose(C1).tolist()]],
        "Each channel's rows become its columns.",
    ),
    _example(
        "nchw_to_nhwc",
        "first_transpose (0, 2, 3, 1): NCHW → NHWC",
        {"first_transpose": "0,2,3,1"},
        [[[[C0[h][w], C1[h][w]] for w in range(4)] for h in range(3)]],
        "The two channels of each pixel end up side by side: (1, 13), (2, 14), …",
    ),
    _example(
        "flatten",
        "reshape_dims (0, −1): flatten",
        {"reshape_dims": "0,-1"},
        [list(range(1, 25))],
        "0 copies N (1), −1 takes the 24 values left: a rank-2 output in the input's order.",
    ),
    _example(
        "merge_hw",
        "reshape_dims (0, 0, −1): H and W merged",
        {"reshape_dims": "0,0,-1"},
        [[list(range(1, 13)), list(range(13, 25))]],
        "Each channel's 3 × 4 plane becomes one row of 12.",
    ),
    _example(
        "deinterleave",
        "reshape (0, −1, 2), second_transpose (0, 2, 1): de-interleave",
        {"reshape_dims": "0,-1,2", "second_transpose": "0,2,1"},
        [[list(range(1, 25, 2)), list(range(2, 25, 2))]],
        "Pairs (1, 2), (3, 4), … become the rows of a 12 × 2 tensor; the second transpose puts the odd "
        "values in the first row and the even ones in the second.",
    ),
)

LAYER = Layer(
    name="shuffle",
    order=100,
    title="Shuffle",
    icon=":material/shuffle:",
    summary="Transpose, reshape (0 and −1 placeholders), transpose again: values move, none changes.",
    params=(
        Param(
            "first_transpose",
            "ints",
            lambda p, s: tuple(range(len(s))),
            "Permutation applied first: output axis i is input axis first_transpose[i].",
            low=0,
            high=4,
            step=1,
            per_dim=True,
            rule=lambda v, p, s: _permutation(v, len(s)),
            offers=lambda p, s: (len(s) - 1,) * len(s),
            permutation=True,
            label="First transpose",
        ),
        Param(
            "zero_is_placeholder",
            "bool",
            True,
            "In reshape_dims, 0 copies the axis at its place (true) or is a size of 0 (false).",
            label="0 copies the input's size",
        ),
        Param(
            "reshape_dims",
            "ints",
            None,
            "The shape after the first transpose, rank 2 … 5 (0: copy that axis, −1: infer); none: no reshape.",
            low=-1,
            high=1 << 20,
            optional=True,
            rule=reshape_rule,
            label="Reshape",
        ),
        Param(
            "second_transpose",
            "ints",
            lambda p, s: tuple(range(output_rank(p, s))),
            "Permutation applied last, of the reshaped tensor's axes (left at an identity, it follows their number).",
            low=0,
            high=4,
            step=1,
            permutation=True,
            label="Second transpose",
        ),
    ),
    example_shape=(1, 2, 3, 4),
    example_input=arange_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    ranks=(4, 5),
    onnx=OnnxMap(
        ("Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", *PASS_THROUGH),
        onnx_read,
        onnx_write,
        lift="trailing",
        identity=onnx_identity,
    ),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
)
