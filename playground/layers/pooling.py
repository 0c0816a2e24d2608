"""IPoolingLayer: `add_pooling_nd(x, type, window_size)`, MAX / AVERAGE / MAX_AVERAGE_BLEND, 2-D and 3-D, with
strides, padding, padding modes and the average that excludes padding."""

from __future__ import annotations

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap, auto_pad, explicit_pads
from ..base.params import Param
from . import _window as window

TYPES = ("MAX", "AVERAGE", "MAX_AVERAGE_BLEND")
AVERAGING = ("AVERAGE", "MAX_AVERAGE_BLEND")
WINDOW = "window_size_nd"


def _counted(p: dict, shape: tuple, pre: tuple, post: tuple) -> np.ndarray:
    """Over the padded input: 1 where a cell counts in the average's divisor when padding is included, the input
    and the padding that was asked for; the cells EXPLICIT_ROUND_UP adds so the last window fits do not count
    (Caffe's rule, which the ROUND_UP mode comes from)."""
    asked = window.effective_padding(p)[1] if p["padding_mode"].startswith("EXPLICIT") else post
    counted = np.ones((), bool)
    for n, b, a, q in zip(shape[2:], pre, post, asked):  # an outer product of one mask per axis
        counted = np.multiply.outer(counted, np.arange(b + n + a) < b + n + min(a, q))
    return counted


def _windows(x: np.ndarray, p: dict):
    """For every window cell (row-major): the input under it at every output position (padding 0), whether it is
    an input cell, and whether it counts in an average that includes padding."""
    pre, post, out = window.geometry(p, x.shape, WINDOW)
    pad = list(zip(pre, post))
    padded = np.pad(x, [(0, 0), (0, 0)] + pad)
    valid = np.pad(np.ones(x.shape[2:], bool), pad)
    counted = _counted(p, x.shape, pre, post)
    for start in window.window_cells(p, WINDOW):
        at = tuple(slice(k, k + s * (o - 1) + 1, s) for k, s, o in zip(start, p["stride_nd"], out))
        yield padded[(..., *at)], valid[at], counted[at]


def _pooled(x: np.ndarray, p: dict):
    """(max, average, inside) over every window; `inside` counts the window's input cells. A window of padding only
    has max −inf; an average whose divisor is 0 (exclusive, or only ROUND_UP's uncounted cells) is NaN."""
    x = np.asarray(x, np.float64)
    top = total = inside = count = None
    for v, valid, counted in _windows(x, p):
        masked = np.where(valid, v, -np.inf)
        top = masked if top is None else np.maximum(top, masked)
        total = v if total is None else total + v
        inside = valid.astype(np.float64) if inside is None else inside + valid
        count = counted.astype(np.float64) if count is None else count + counted
    with np.errstate(invalid="ignore", divide="ignore"):
        average = total / (inside if p["average_count_excludes_padding"] else count)
    return top, average, inside


def reference(x, p):
    """Max, average (of the input cells, or of the whole window with padding as zeros) or their blend
    (1 − blend_factor)·max + blend_factor·average (IPoolingLayer::setBlendFactor), over every window. A window
    that reads no input cell has no documented max: NaN there (`undefined`)."""
    top, average, inside = _pooled(x, p)
    if p["type"] == "MAX":
        y = top
    elif p["type"] == "AVERAGE":
        y = average
    else:
        y = (1.0 - p["blend_factor"]) * top + p["blend_factor"] * average
    if p["type"] != "AVERAGE":
        y = np.where(inside > 0, y, np.nan)
    return np.asarray(y, dtype=ref.result_type())


def undefined(x, p):
    """The output cells whose value TensorRT does not document: a max over padding only (MAX and the blend), an
    average over no counted cell."""
    top, average, inside = _pooled(np.zeros(x.shape, np.float32), p)
    no_max = (inside == 0) if p["type"] != "AVERAGE" else np.zeros(inside.shape, bool)
    no_average = np.isnan(average) if p["type"] != "MAX" else np.zeros(inside.shape, bool)
    return np.broadcast_to(no_max | no_average, top.shape).copy()


def check(fail, p, shape):
    window.check_fits(fail, p, shape, WINDOW)
    if p["type"] in AVERAGING and p["average_count_excludes_padding"]:
        # TensorRT's builder: "the padding size is larger than or equal to the filter size for exclusive-counting
        # pooling" (the padding in force, ROUND_UP's extra cells included). MAX and an average that counts
        # padding build: a window of padding only is then `undefined` or an average of zeros.
        pre, post, _ = window.geometry(p, shape, WINDOW)
        asked = window.effective_padding(p)
        for axis, (k, b, a, b_asked, a_asked) in enumerate(zip(p[WINDOW], pre, post, *asked)):
            if b < k and a < k:
                continue
            # the padding asked for, or else the cells EXPLICIT_ROUND_UP adds for a last window of a long stride
            name = window.padding_named(p, b_asked >= k, a_asked >= k) if max(b_asked, a_asked) >= k else "stride_nd"
            raise fail(
                name,
                f"must leave the padding on spatial axis {axis} ({b} before, {a} after, as "
                f"{p['padding_mode']} pads) smaller than window_size_nd ({k}) when the average "
                f"excludes padding: a window of padding only would divide by 0. TensorRT refuses it; "
                f"MAX, or average_count_excludes_padding false, build",
                p[name],
            )
    return p


def cost(p, shape):
    out = window.geometry(p, shape, WINDOW)[2]
    output = tuple(shape[:2]) + tuple(out)
    per = int(np.prod(p[WINDOW]))
    return (
        output,
        int(np.prod(output)) * per,
        f"{int(np.prod(output)):,} outputs × {per} window cells each",
        "window_size_nd or the input size, or raise stride_nd",
    )


def reads(p, shape, index):
    """The window of output (n, c, [d,] h, w): the cells of its own channel under the window."""
    return [tuple(index[:2]) + where for where in window.cells_read(p, shape, WINDOW, index[2:])]


def cell(x, p, index, reference_output=None):
    """One window: its values, and the max, the average or their blend."""
    cells = reads(p, x.shape, index)
    inside = [all(0 <= v < n for v, n in zip(c, x.shape)) for c in cells]
    values = [float(x[c]) if ok else None for c, ok in zip(cells, inside)]
    real = [v for v in values if v is not None]
    rows = tuple({"input": str(c[2:]), "value": "padding" if v is None else precise(v)} for c, v in zip(cells, values))
    divisor = len(real) if p["average_count_excludes_padding"] else int(_divisor(p, x.shape, index))
    out = float(reference_output[tuple(index)]) if reference_output is not None else None
    shown = precise(out) if out is not None else "?"
    listed = ", ".join(precise(v) for v in real) if len(real) <= 12 else f"{len(real)} values"
    padding = len(values) - len(real)
    notes = [
        f"The window holds {len(values)} cells: {len(real)} of the input"
        + (
            f" and {padding} of padding, which "
            + (
                "the average leaves out (average_count_excludes_padding)."
                if p["average_count_excludes_padding"] or p["type"] == "MAX"
                else "count as zeros in the average."
            )
            if padding
            else "."
        )
    ]
    if not real and p["type"] != "AVERAGE":
        notes.append(
            "This window reads padding only. TensorRT documents no max for it (padding is no value to "
            "take the max of), so the reference shows NaN here instead of inventing one; the engine's "
            "value, where one runs, is what this GPU's kernel happens to give."
        )
        return Cell(f"max of no input cell = **undefined** (shown {shown})", rows, tuple(notes))
    average = sum(real) / divisor if divisor else float("nan")
    if p["type"] == "MAX":
        line = f"max({listed}) = **{shown}**"
    elif p["type"] == "AVERAGE":
        line = f"({' + '.join(precise(v) for v in real) if len(real) <= 12 else 'Σ'}) / {divisor} = **{shown}**"
        if not real:
            line = f"0 (padding only) / {divisor} = **{shown}**"
            notes.append(
                "Padding only, counted as zeros: the average is 0, as TensorRT documents for an average "
                "that includes padding."
            )
    else:
        b = p["blend_factor"]
        line = f"(1 − {precise(b)})·max {precise(max(real))} + {precise(b)}·average {precise(average)} = **{shown}**"
    return Cell(line, rows, tuple(notes))


def _divisor(p, shape, index):
    """The cells of the window that count when padding is included (the explicit padding, not ROUND_UP's)."""
    pre, post, _ = window.geometry(p, shape, WINDOW)
    counted = _counted(p, shape, pre, post)
    return sum(
        bool(counted[tuple(c + b for c, b in zip(where, pre))])
        for where in window.cells_read(p, shape, WINDOW, index[2:])
    )


def explain(p, shape):
    pre, post, out = window.geometry(p, shape, WINDOW)
    rows = []
    for axis, (n, k, s, b, a, o) in enumerate(zip(shape[2:], p[WINDOW], p["stride_nd"], pre, post, out)):
        rows.append(f"axis {axis}: input {n}, window {k}, stride {s}, padding {b} + {a} → {o} outputs")
    text = ["**Output size per axis** (the convolution's arithmetic, dilation 1): " + "; ".join(rows) + "."]
    text += window.unchanged_notes(p, shape, WINDOW)
    if p["type"] == "MAX_AVERAGE_BLEND":
        text.append(
            f"MAX_AVERAGE_BLEND: (1 − blend_factor)·max + blend_factor·average = "
            f"{precise(1 - p['blend_factor'])}·max + {precise(p['blend_factor'])}·average (blend_factor 0 is "
            f"the max, 1 the average)"
        )
    if p["type"] in AVERAGING:
        text.append(
            "The average divides by the input cells in the window"
            if p["average_count_excludes_padding"]
            else "The average divides by the whole window, padding counted as zeros (the cells "
            "EXPLICIT_ROUND_UP adds to fit the last window are not counted)"
        )
    return text


def build(trt, network, x, p):
    pool = network.add_pooling_nd(x, getattr(trt.PoolingType, p["type"]), p["window_size_nd"])
    pool.stride_nd = p["stride_nd"]
    pool.padding_nd = p["padding_nd"]  # sets pre and post; the two below override one side each
    if p["pre_padding"] is not None:
        pool.pre_padding = p["pre_padding"]
    if p["post_padding"] is not None:
        pool.post_padding = p["post_padding"]
    pool.padding_mode = getattr(trt.PaddingMode, p["padding_mode"])
    pool.blend_factor = p["blend_factor"]
    pool.average_count_excludes_padding = p["average_count_excludes_padding"]
    return pool.get_output(0)


def onnx_read(node: Node) -> dict:
    """MaxPool / AveragePool: kernel_shape, strides, pads or auto_pad, ceil_mode, count_include_pad. TensorRT's
    pooling has no dilation and no indices output. (Their Global forms open as reduce, as TensorRT's parser builds
    them.)"""
    if any(d != 1 for d in node.attr("dilations") or ()):
        raise node.fail("dilations", "must be 1: TensorRT's pooling layer has no dilation", node.attr("dilations"))
    if node.op == "MaxPool" and node.attr("_outputs", 1) > 1:
        raise node.fail("Indices", "is an output TensorRT's pooling layer does not have")
    if node.attr("kernel_shape") is None:
        raise node.fail("kernel_shape", "is required")
    raw = {
        "type": "MAX" if node.op == "MaxPool" else "AVERAGE",
        WINDOW: node.spatial("kernel_shape", 1),
        "stride_nd": node.spatial("strides", 1),
        **auto_pad(node),
    }
    if node.op == "AveragePool":
        raw["average_count_excludes_padding"] = not node.attr("count_include_pad", 0)
    return raw


def onnx_differs(node: Node, raw: dict) -> list[str]:
    """ceil_mode where ONNX drops a last window that would start in the end padding (TensorRT keeps it)."""
    if not node.attr("ceil_mode", 0) or raw["padding_mode"] != "EXPLICIT_ROUND_UP":
        return []
    p = LAYER.resolve(raw, node.shape)
    pre, _, out = window.geometry(p, node.shape, WINDOW)
    dropped = [
        ax for ax, (i, b, o, s) in enumerate(zip(node.shape[2:], pre, out, p["stride_nd"])) if (o - 1) * s >= i + b
    ]
    return (
        [
            f"ceil_mode: ONNX drops a last window that would start in the end padding (spatial axis {dropped[0]}: "
            f"{out[dropped[0]] - 1} windows, not {out[dropped[0]]}); TensorRT's EXPLICIT_ROUND_UP keeps it"
        ]
        if dropped
        else []
    )


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """MaxPool / AveragePool with the padding TensorRT resolved; the blend as (1 − b)·MaxPool + b·AveragePool."""
    pre, post, _ = window.geometry(p, shape, WINDOW)
    common = dict(kernel_shape=list(p[WINDOW]), strides=list(p["stride_nd"]), pads=explicit_pads(pre, post))
    sources = {"MaxPool": x, "AveragePool": x}
    if any(a >= k or b >= k for a, b, k in zip(pre, post, p[WINDOW])):
        # ONNX wants pads smaller than the window: pad first (−inf is no candidate for the max, 0 is the inclusive
        # average's padding), then pool without pads. Exclusive averaging never gets here (the layer refuses it).
        pads = g.ints([0, 0, *pre, 0, 0, *post])
        sources = {
            op: g.op("Pad", [x, pads, g.const(fill)], mode="constant")
            for op, fill in (("MaxPool", -np.inf), ("AveragePool", 0.0))
        }
        common["pads"] = None
    if p["type"] == "MAX":
        return g.op("MaxPool", [sources["MaxPool"]], **common)
    average = g.op(
        "AveragePool",
        [sources["AveragePool"]],
        count_include_pad=int(not p["average_count_excludes_padding"]),
        **common,
    )
    if p["type"] == "AVERAGE":
        return average
    b = p["blend_factor"]
    largest = g.op("Mul", [g.op("MaxPool", [sources["MaxPool"]], **common), g.const(1.0 - b)])
    return g.op("Add", [largest, g.op("Mul", [average, g.const(b)])])


# -- examples, on 1…16 in a 4 × 4 plane (1…32 in two for 3-D): worked out by hand -----------------------------
X4 = {"kind": "spec", "shape": (1, 1, 4, 4)}
HOW = "TensorRT's IPoolingLayer rules on the input 1…16"


def _example(name, title, params, expected, note=None, input=X4, shape=(1, 1, 2, 2)):
    return derived("pooling", name, title, params, input, np.reshape(expected, shape), HOW, note)


EXAMPLES = (
    _example(
        "max_2x2",
        "MAX, window 2 × 2, stride 2",
        {"type": "MAX", "stride_nd": "2,2"},
        [6, 8, 14, 16],
        "Each output is the largest of its 2 × 2 block: 6 = max(1, 2, 5, 6).",
    ),
    _example(
        "average_2x2",
        "AVERAGE, window 2 × 2, stride 2",
        {"type": "AVERAGE", "stride_nd": "2,2"},
        [3.5, 5.5, 11.5, 13.5],
        "3.5 = (1 + 2 + 5 + 6) / 4.",
    ),
    _example(
        "average_padding_excluded",
        "AVERAGE, padding 1, padding excluded",
        {"type": "AVERAGE", "stride_nd": "2,2", "padding_nd": "1,1"},
        [1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16],
        "Output 3 × 3 ((4 + 2 − 2) / 2 + 1). The corner window holds one input cell, 1, and three of padding: "
        "its average is 1 / 1.",
        shape=(1, 1, 3, 3),
    ),
    _example(
        "average_padding_included",
        "AVERAGE, padding 1, padding counted",
        {"type": "AVERAGE", "stride_nd": "2,2", "padding_nd": "1,1", "average_count_excludes_padding": False},
        [0.25, 1.25, 1, 3.5, 8.5, 5, 3.25, 7.25, 4],
        "The same windows, each divided by 4: the corner is 1 / 4 = 0.25, the centre (6 + 7 + 10 + 11) / 4 = "
        "8.5 as before.",
        shape=(1, 1, 3, 3),
    ),
    _example(
        "blend_0",
        "MAX_AVERAGE_BLEND, blend_factor 0 (the default): the max",
        {"type": "MAX_AVERAGE_BLEND", "stride_nd": "2,2", "blend_factor": 0},
        [6, 8, 14, 16],
        "(1 − 0)·max + 0·average: the blend's default is the max, 6 = max(1, 2, 5, 6).",
    ),
    _example(
        "blend_quarter",
        "MAX_AVERAGE_BLEND, blend_factor 0.25",
        {"type": "MAX_AVERAGE_BLEND", "stride_nd": "2,2", "blend_factor": 0.25},
        [5.375, 7.375, 13.375, 15.375],
        "(1 − 0.25)·max + 0.25·average: 0.75·6 + 0.25·3.5 = 5.375, nearer the max than the average.",
    ),
    _example(
        "blend_1",
        "MAX_AVERAGE_BLEND, blend_factor 1: the average",
        {"type": "MAX_AVERAGE_BLEND", "stride_nd": "2,2", "blend_factor": 1},
        [3.5, 5.5, 11.5, 13.5],
        "(1 − 1)·max + 1·average: the average, 3.5 = (1 + 2 + 5 + 6) / 4.",
    ),
    _example(
        "round_up_max",
        "MAX, window 3, stride 2, EXPLICIT_ROUND_UP",
        {"type": "MAX", "window_size_nd": "3,3", "stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"},
        [11, 12, 15, 16],
        "Rounding down gives one window ((4 − 3) / 2 + 1 = 1); rounding up gives 2 per axis, "
        "the second reading input rows 2–3 and one row past the input.",
    ),
    _example(
        "round_up_average",
        "AVERAGE, window 3, stride 2, EXPLICIT_ROUND_UP",
        {"type": "AVERAGE", "window_size_nd": "3,3", "stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"},
        [6, 7.5, 12, 13.5],
        "The windows past the input average their input cells only: (11 + 12 + 15 + 16) / 4 = 13.5.",
    ),
    _example(
        "padding_only_average",
        "AVERAGE over a window of padding only, padding counted",
        {
            "type": "AVERAGE",
            "window_size_nd": "3,2",
            "stride_nd": "2,2",
            "post_padding": "2,0",
            "padding_mode": "EXPLICIT_ROUND_UP",
            "average_count_excludes_padding": False,
        },
        [6.5, 8.5, 10, 56 / 6, 64 / 6, 35 / 3, 0, 0, 0],
        "Input 1 … 20 in 4 × 5. Rows: windows at 0, 2, 4 (ROUND_UP: (4 + 2 − 3) / 2 rounds up to 2, + 1); "
        "the last reads rows 4–6, padding only, and its average of zeros is 0. The divisor counts the input and "
        "the padding asked for, not ROUND_UP's extra row 6 and column 5: (11 + 12 + 16 + 17) / 6 = 9.33 in the "
        "middle row; (5 + 10 + 15) / 3 = 10 in the last column.",
        input={"kind": "spec", "shape": (1, 1, 4, 5)},
        shape=(1, 1, 3, 3),
    ),
    _example(
        "max_3d",
        "3-D MAX, window 2 × 2 × 2, stride 2",
        {"type": "MAX", "window_size_nd": "2,2,2", "stride_nd": "2,2,2"},
        [22, 24, 30, 32],
        "Input 1…32 in two 4 × 4 planes; each window spans both, so the maxima are the "
        "second plane's: max(17, 18, 21, 22, 1, 2, 5, 6) = 22.",
        input={"kind": "spec", "shape": (1, 1, 2, 4, 4)},
        shape=(1, 1, 1, 2, 2),
    ),
)

LAYER = Layer(
    name="pooling",
    order=60,
    title="Pooling",
    icon=":material/filter_center_focus:",
    summary="Max, average or their blend over a sliding window, 2-D or 3-D, with strides and padding modes.",
    params=(
        Param("type", "enum", "MAX", "Pooling type (trt.PoolingType).", choices=TYPES, label="Type"),
        window.per_axis(WINDOW, 2, "Window per spatial axis.", 1, 15, offers=window.largest_window, label="Window"),
        *window.padding_params(high=14),
        Param(
            "blend_factor",
            "float",
            0.0,
            "MAX_AVERAGE_BLEND: (1 − blend_factor)·max + blend_factor·average; 0 is the max, 1 the average.",
            low=0.0,
            high=1.0,
            step=0.05,
            used_when=lambda p: p["type"] == "MAX_AVERAGE_BLEND",
            label="Blend factor",
        ),
        Param(
            "average_count_excludes_padding",
            "bool",
            True,
            "The average divides by the input cells in the "
            "window only (true) or by the whole window, padding counted as zeros (false).",
            used_when=lambda p: p["type"] in AVERAGING,
            label="Average excludes padding",
        ),
    ),
    example_shape=(1, 1, 4, 4),
    example_input=arange_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    ranks=(4, 5),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
    undefined=undefined,
    sums=lambda p: p["type"] in AVERAGING,
    onnx=OnnxMap(("MaxPool", "AveragePool"), onnx_read, onnx_write, onnx_differs),
)
