"""IPoolingLayer: `add_pooling_nd(x, type, window_size)`, MAX / AVERAGE / MAX_AVERAGE_BLEND, 2-D and 3-D, with
strides, padding, padding modes and the average that excludes padding."""
from __future__ import annotations

import numpy as np

from .. import reference as ref
from .. import window
from ..examples import derived
from ..inputs import arange_pattern
from ..layer import Cell, Layer
from ..numbers import precise
from ..params import Param

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


def reference(x, p):
    """Max, average (of the input cells, or of the whole window with padding as zeros) or their blend
    blend_factor·max + (1 − blend_factor)·average, over every window."""
    t = ref.result_type()
    x = np.asarray(x, np.float64)
    top = total = inside = count = None
    for v, valid, counted in _windows(x, p):
        masked = np.where(valid, v, -np.inf)
        top = masked if top is None else np.maximum(top, masked)
        total = v if total is None else total + v
        inside = valid.astype(np.float64) if inside is None else inside + valid
        count = counted.astype(np.float64) if count is None else count + counted
    average = total / (inside if p["average_count_excludes_padding"] else count)
    if p["type"] == "MAX":
        y = top
    elif p["type"] == "AVERAGE":
        y = average
    else:
        y = p["blend_factor"] * top + (1.0 - p["blend_factor"]) * average
    return np.asarray(y, dtype=t)


def check(fail, p, shape):
    window.check_fits(fail, p, shape, WINDOW)
    pre, post, out = window.geometry(p, shape, WINDOW)
    if p["padding_mode"].startswith("EXPLICIT"):  # the padding asked for (SAME_* pad less than a window)
        pre, post = window.effective_padding(p)
    for axis, (k, s, b, a, o, n) in enumerate(zip(p[WINDOW], p["stride_nd"], pre, post, out, shape[2:])):
        if b >= k or a >= k:
            name = window.padding_named(p, b >= k, a >= k)
            raise fail(name, f"must be smaller than window_size_nd on spatial axis {axis} ({k}): a window of "
                             f"padding only has nothing to pool", p[name])
        if (o - 1) * s - b >= n:
            raise fail("stride_nd", f"on spatial axis {axis} the last window (rounded up) starts past the input: "
                                    f"it would pool padding only", p["stride_nd"])
    return p


def cost(p, shape):
    out = window.geometry(p, shape, WINDOW)[2]
    output = tuple(shape[:2]) + tuple(out)
    per = int(np.prod(p[WINDOW]))
    return (output, int(np.prod(output)) * per, f"{int(np.prod(output)):,} outputs × {per} window cells each",
            "window_size_nd or the input size, or raise stride_nd")


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
    top = max(real)
    divisor = len(real) if p["average_count_excludes_padding"] else int(_divisor(p, x.shape, index))
    average = sum(real) / divisor
    out = float(reference_output[tuple(index)]) if reference_output is not None else None
    shown = precise(out) if out is not None else "?"
    listed = ", ".join(precise(v) for v in real) if len(real) <= 12 else f"{len(real)} values"
    padding = len(values) - len(real)
    notes = [f"The window holds {len(values)} cells: {len(real)} of the input" +
             (f" and {padding} of padding, which " + ("the average leaves out (average_count_excludes_padding)."
              if p["average_count_excludes_padding"] or p["type"] == "MAX" else "count as zeros in the average.")
              if padding else ".")]
    if p["type"] == "MAX":
        line = f"max({listed}) = **{shown}**"
    elif p["type"] == "AVERAGE":
        line = f"({' + '.join(precise(v) for v in real) if len(real) <= 12 else 'Σ'}) / {divisor} = **{shown}**"
    else:
        b = p["blend_factor"]
        line = (f"{precise(b)}·max {precise(top)} + {precise(1 - b)}·average {precise(average)} = **{shown}**")
    return Cell(line, rows, tuple(notes))


def _divisor(p, shape, index):
    """The cells of the window that count when padding is included (the explicit padding, not ROUND_UP's)."""
    pre, post, _ = window.geometry(p, shape, WINDOW)
    counted = _counted(p, shape, pre, post)
    return sum(bool(counted[tuple(c + b for c, b in zip(where, pre))])
               for where in window.cells_read(p, shape, WINDOW, index[2:]))


def explain(p, shape):
    pre, post, out = window.geometry(p, shape, WINDOW)
    rows = []
    for axis, (n, k, s, b, a, o) in enumerate(zip(shape[2:], p[WINDOW], p["stride_nd"], pre, post, out)):
        rows.append(f"axis {axis}: input {n}, window {k}, stride {s}, padding {b} + {a} → {o} outputs")
    text = ["**Output size per axis** (the convolution's arithmetic, dilation 1): " + "; ".join(rows) + "."]
    if p["type"] in AVERAGING:
        text.append("The average divides by the input cells in the window" if p["average_count_excludes_padding"]
                    else "The average divides by the whole window, padding counted as zeros (the cells "
                         "EXPLICIT_ROUND_UP adds to fit the last window are not counted)")
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


# -- examples, on 1…16 in a 4 × 4 plane (1…32 in two for 3-D): worked out by hand -----------------------------
X4 = {"kind": "spec", "shape": (1, 1, 4, 4)}
HOW = "TensorRT's IPoolingLayer rules on the input 1…16"


def _example(name, title, params, expected, note=None, input=X4, shape=(1, 1, 2, 2)):
    return derived("pooling", name, title, params, input, np.reshape(expected, shape), HOW, note)


EXAMPLES = (
    _example("max_2x2", "MAX, window 2 × 2, stride 2", {"type": "MAX", "stride_nd": "2,2"}, [6, 8, 14, 16],
             "Each output is the largest of its 2 × 2 block: 6 = max(1, 2, 5, 6)."),
    _example("average_2x2", "AVERAGE, window 2 × 2, stride 2", {"type": "AVERAGE", "stride_nd": "2,2"},
             [3.5, 5.5, 11.5, 13.5], "3.5 = (1 + 2 + 5 + 6) / 4."),
    _example("average_padding_excluded", "AVERAGE, padding 1, padding excluded",
             {"type": "AVERAGE", "stride_nd": "2,2", "padding_nd": "1,1"}, [1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16],
             "Output 3 × 3 ((4 + 2 − 2) / 2 + 1). The corner window holds one input cell, 1, and three of padding: "
             "its average is 1 / 1.", shape=(1, 1, 3, 3)),
    _example("average_padding_included", "AVERAGE, padding 1, padding counted",
             {"type": "AVERAGE", "stride_nd": "2,2", "padding_nd": "1,1", "average_count_excludes_padding": False},
             [0.25, 1.25, 1, 3.5, 8.5, 5, 3.25, 7.25, 4],
             "The same windows, each divided by 4: the corner is 1 / 4 = 0.25, the centre (6 + 7 + 10 + 11) / 4 = "
             "8.5 as before.", shape=(1, 1, 3, 3)),
    _example("blend_half", "MAX_AVERAGE_BLEND, blend_factor 0.5",
             {"type": "MAX_AVERAGE_BLEND", "stride_nd": "2,2", "blend_factor": 0.5}, [4.75, 6.75, 12.75, 14.75],
             "0.5·max + 0.5·average: 0.5·6 + 0.5·3.5 = 4.75."),
    _example("round_up_max", "MAX, window 3, stride 2, EXPLICIT_ROUND_UP",
             {"type": "MAX", "window_size_nd": "3,3", "stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"},
             [11, 12, 15, 16], "Rounding down gives one window ((4 − 3) / 2 + 1 = 1); rounding up gives 2 per axis, "
             "the second reading input rows 2–3 and one row past the input."),
    _example("round_up_average", "AVERAGE, window 3, stride 2, EXPLICIT_ROUND_UP",
             {"type": "AVERAGE", "window_size_nd": "3,3", "stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"},
             [6, 7.5, 12, 13.5], "The windows past the input average their input cells only: (11 + 12 + 15 + 16) "
             "/ 4 = 13.5."),
    _example("max_3d", "3-D MAX, window 2 × 2 × 2, stride 2", {"type": "MAX", "window_size_nd": "2,2,2",
                                                                "stride_nd": "2,2,2"},
             [22, 24, 30, 32], "Input 1…32 in two 4 × 4 planes; each window spans both, so the maxima are the "
             "second plane's: max(17, 18, 21, 22, 1, 2, 5, 6) = 22.", input={"kind": "spec", "shape": (1, 1, 2, 4, 4)},
             shape=(1, 1, 1, 2, 2)),
)

LAYER = Layer(
    name="pooling",
    order=60,
    title="Pooling",
    icon=":material/filter_center_focus:",
    summary="Max, average or their blend over a sliding window, 2-D or 3-D, with strides and padding modes.",
    params=(
        Param("type", "enum", "MAX", "Pooling type (trt.PoolingType).", choices=TYPES),
        window.per_axis(WINDOW, 2, "Window per spatial axis.", 1, 15, offers=window.largest_window),
        *window.padding_params(high=14),
        Param("blend_factor", "float", 0.0, "MAX_AVERAGE_BLEND: blend_factor·max + (1 − blend_factor)·average.",
              low=0.0, high=1.0, step=0.05, used_when=lambda p: p["type"] == "MAX_AVERAGE_BLEND"),
        Param("average_count_excludes_padding", "bool", True, "The average divides by the input cells in the "
              "window only (true) or by the whole window, padding counted as zeros (false).",
              used_when=lambda p: p["type"] in AVERAGING),
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
)
