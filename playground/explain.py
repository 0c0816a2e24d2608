"""Explanations next to the heatmaps: the arithmetic behind one layer's output, as data and text.

Pure functions (NumPy and the playground core, no Streamlit): the output-shape arithmetic of a
convolution per axis, the products that sum to one output cell, why a Scale output holds NaN,
an activation's transfer curve, and the three Leaky ReLU constructions side by side.
Parameters are the canonical ones (`Layer.resolve`, `Evaluation.params`).
"""
from __future__ import annotations

import functools
import itertools
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from . import precision, window
from . import reference as ref
from .numbers import precise
from .inputs import DIM_NAMES
from .layers import activation as activation_layer
from .layers import convolution as conv
from .layers import leaky_relu as leaky
from .layers import scale as scale_layer

AXIS_NAMES = {2: ("H", "W"), 3: ("D", "H", "W")}
SAME_MODES = ("SAME_UPPER", "SAME_LOWER")

PADDING_PRECEDENCE = (
    "padding_mode SAME_UPPER / SAME_LOWER takes precedence over everything: TensorRT pads so that "
    "output = ceil(input / stride) and ignores padding_nd, pre_padding and post_padding "
    "(SAME_UPPER puts the odd extra zero after, SAME_LOWER before). "
    "Under EXPLICIT_ROUND_DOWN / EXPLICIT_ROUND_UP, pre_padding and post_padding, where set, replace "
    "padding_nd on their own side (before / after); padding_nd pads whichever side is left unset. "
    "The EXPLICIT_* modes only choose whether the window count rounds down (floor) or up (ceil); "
    "rounding up reads extra zeros after the input."
)

PRELU_FUSION_NOTE = (
    "Many TensorRT layer fusions that include ReLU have no Parametric ReLU version, "
    "so PReLU may run slower than ReLU or LEAKY_RELU."
)


# ------------------------------------------------------------------------------------ activation
def activation_curve(type: str, alpha: float = 0.0, beta: float = 0.0, x_range=(-6.0, 6.0), n: int = 601):
    """(xs, ys): the activation's transfer curve sampled at n points over x_range (float32, via the reference)."""
    lo, hi = (float(v) for v in x_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or n < 2:
        raise ValueError(f"activation_curve: need a finite x_range with low < high and n >= 2, got {x_range}, n={n}")
    xs = np.linspace(lo, hi, int(n)).astype(np.float32)
    return xs, ref.activation(xs, type, alpha, beta)


def activation_formula(p: dict) -> str:
    """The type's formula with the current alpha and beta written in, e.g. 'y = max(-2, min(2, x))'."""
    return activation_layer.formula(p)


def curve_range(x: np.ndarray, base=(-6.0, 6.0), margin: float = 0.1) -> tuple[float, float]:
    """base widened to hold every finite value of x, plus a margin, so the tensor's marks lie on the curve."""
    f = np.asarray(x, dtype=np.float64)
    f = f[np.isfinite(f)]
    lo, hi = float(base[0]), float(base[1])
    if f.size:
        lo, hi = min(lo, float(f.min())), max(hi, float(f.max()))
    pad = (hi - lo) * margin / 2
    return lo - pad, hi + pad


# ------------------------------------------------------------------------------- convolution shape
def conv_output_shape(params: dict, input_shape: tuple) -> tuple:
    """(N, K, *spatial): the convolution's output shape."""
    shape = tuple(int(d) for d in input_shape)
    return (shape[0], int(params["num_output_maps"])) + tuple(int(o) for o in conv.geometry(params, shape)[2])


def conv_shape_rows(params: dict, input_shape: tuple) -> list[dict]:
    """One row per spatial axis (D, H, W): the numbers that decide the output size, the formula with
    them written in, and the output size. The arithmetic is the layer's own (conv.geometry, TensorRT's
    nvinfer1::PaddingMode); this writes it out."""
    shape = tuple(int(d) for d in input_shape)
    rank = len(shape) - 2
    if rank not in AXIS_NAMES:
        raise ValueError(f"conv_shape_rows: input shape {shape} must have rank 4 or 5")
    mode = params["padding_mode"]
    eff_pre, eff_post = window.effective_padding(params)
    set_pre, set_post = params["pre_padding"], params["post_padding"]
    res_pre, res_post, out = conv.geometry(params, shape)
    rows = []
    for axis, name in enumerate(AXIS_NAMES[rank]):
        i, k = shape[2 + axis], params["kernel_size_nd"][axis]
        d, s = params["dilation_nd"][axis], params["stride_nd"][axis]
        b, a = eff_pre[axis], eff_post[axis]
        pre, post, o = int(res_pre[axis]), int(res_post[axis]), int(out[axis])
        dk = 1 + d * (k - 1)
        if mode in SAME_MODES:
            formula = (f"ceil({i} / {s}) = {o}; padding total = max(0, ({o} − 1)·{s} + {dk} − {i}) = {pre + post} "
                       f"→ pre {pre}, post {post}")
        else:
            fn = "floor" if mode == "EXPLICIT_ROUND_DOWN" else "ceil"
            formula = f"{fn}(({i} + {b} + {a} − {dk}) / {s}) + 1 = {o}"
            extra = post - a  # zeros the rounded-up last window reads
            if extra:
                formula += f"; the last window reads {extra} more zero{'s' if extra > 1 else ''} after: post {post}"
        rows.append({
            "axis": name, "input": i, "kernel": k, "dilation": d, "dilated_kernel": dk,
            "padding_nd": params["padding_nd"][axis],
            "pre_padding_set": None if set_pre is None else set_pre[axis],
            "post_padding_set": None if set_post is None else set_post[axis],
            "pre": pre, "post": post, "stride": s, "formula": formula, "output": o,
        })
    return rows


def padding_in_force(params: dict) -> str:
    """Which padding setting decides the padding now, in one sentence or two."""
    mode = params["padding_mode"]
    nd, pre, post = params["padding_nd"], params["pre_padding"], params["post_padding"]
    tup = lambda t: "(" + ", ".join(map(str, t)) + ")"  # noqa: E731
    if mode in SAME_MODES:
        ignored = [f"padding_nd {tup(nd)}"] + [f"{n} {tup(v)}" for n, v in (("pre_padding", pre), ("post_padding", post))
                                                if v is not None]
        return (f"In force now: padding_mode {mode}; TensorRT computes the padding itself, so "
                f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} ignored.")
    sides = []
    for side, value in (("before", pre), ("after", post)):
        owner = f"{'pre' if side == 'before' else 'post'}_padding {tup(value)}" if value is not None else f"padding_nd {tup(nd)}"
        sides.append(f"{side}: {owner}")
    overridden = " (padding_nd is overridden on both sides)" if pre is not None and post is not None else ""
    rounding = "rounds down" if mode == "EXPLICIT_ROUND_DOWN" else "rounds up"
    return f"In force now: padding_mode {mode} ({rounding}); {'; '.join(sides)}{overridden}."


# ------------------------------------------------------------------------------ convolution cell
def conv_cell_products(x: np.ndarray, params: dict, out_index, reference_output: np.ndarray | None = None) -> dict:
    """The taps that make one output cell (n, k, [d,] h, w): each input value × kernel weight, their sum,
    the bias, and the value, which equals the reference convolution at that cell.

    Input values and weights are the ones the layer computes with in params['precision']: quantized (INT8/FP8,
    with their codes) or rounded (FP16/BF16).
    Returns window (slice index → input (h, w) cells, padding cells outside the grid; for tensor_figure's
    `highlight`), taps (list of dicts), products_sum, bias, value, reference (the reference output at
    that cell; pass reference_output to save recomputing the convolution) and text."""
    x = np.asarray(x, dtype=np.float32)
    rank = x.ndim - 2
    if rank not in AXIS_NAMES:
        raise ValueError(f"conv_cell_products: input shape {x.shape} must have rank 4 or 5")
    pre, _post, out = conv.geometry(params, x.shape)
    kernel, K, G = params["kernel"], params["num_output_maps"], params["num_groups"]
    out_shape = (x.shape[0], K) + tuple(out)
    idx = tuple(int(v) for v in out_index)
    if len(idx) != len(out_shape) or any(not 0 <= v < n for v, n in zip(idx, out_shape)):
        raise ValueError(f"conv_cell_products: output index {tuple(out_index)} is outside the output shape {out_shape}")
    n, k, pos = idx[0], idx[1], idx[2:]

    xv, wv = x, kernel
    prec, s = params["precision"], params["quantize_scale"]
    quantized = prec in precision.QUANTIZED
    if quantized:  # quantized once; the taps read the codes and their dequantized floats
        qx, qw = precision.quantize(x, s, prec), precision.quantize(kernel, s, prec)
        xv, wv = qx * np.float32(s), qw * np.float32(s)
    else:
        xv, wv = precision.round_to(x, prec), precision.round_to(kernel, prec)
    c_per_group, k_per_group = x.shape[1] // G, K // G
    group = k // k_per_group
    channels = list(range(group * c_per_group, (group + 1) * c_per_group))
    size, ksize = x.shape[2:], tuple(params["kernel_size_nd"])
    coords = ref.receptive_field(pos, size, ksize, params["stride_nd"], params["dilation_nd"], pre)
    kpositions = list(itertools.product(*map(range, ksize)))

    taps, total = [], 0.0
    for ci, c in enumerate(channels):
        for kpos, where in zip(kpositions, coords):
            inside = all(0 <= v < m for v, m in zip(where, size))
            xval = float(xv[(n, c) + where]) if inside else 0.0
            wval = float(wv[(k, ci) + kpos])
            product = xval * wval
            total += product
            tap = {"channel": c, "input": where, "kernel": kpos, "padding": not inside,
                   "x": xval, "w": wval, "product": product}
            if quantized:
                tap["x_q"] = _code(qx[(n, c) + where]) if inside else 0
                tap["w_q"] = _code(qw[(k, ci) + kpos])
            taps.append(tap)
    bias = float(params["bias"][k])
    value = float(precision.round_to(np.float32(total + bias), prec))
    if reference_output is None or tuple(np.shape(reference_output)) != out_shape:
        reference_output = precision.emulate(conv.LAYER, x, params)
    reference = float(reference_output[idx])
    padding_taps = sum(t["padding"] for t in taps)
    where = f"input channel{'s' if len(channels) > 1 else ''} {channels[0]}" + (
        f"–{channels[-1]}" if len(channels) > 1 else "")
    zeros = f", {padding_taps} of them on padding zeros" if padding_taps else ""
    text = (f"Σ = {precise(value)}: the {len(taps)} products x·w ({where}{zeros}) sum to {precise(total)}, "
            f"plus bias {precise(bias)}")
    return {
        "out_index": idx, "out_shape": out_shape, "group": group, "channels": channels,
        "quantized": prec if quantized else None, "taps": taps,
        "window": drawn_cells([(n, t["channel"]) + t["input"] for t in taps], x.shape), "products_sum": total,
        "bias": bias, "value": value, "reference": reference, "text": text,
    }


def _code(v) -> int | float:
    """A quantized code as it reads: an int8 integer, or an FP8 value."""
    return int(v) if float(v).is_integer() else float(v)


def conv_products_table(cell: dict) -> list[dict]:
    """conv_cell_products' taps as table rows (one per tap), for display: the input channel and coordinates
    (c, [d,] h, w; outside the input = padding), the kernel position, x, the weight and their product."""
    rows = []
    for t in cell["taps"]:
        names = AXIS_NAMES[len(t["input"])]
        row = {"c": t["channel"]}
        row.update({name.lower(): v for name, v in zip(names, t["input"])})
        row["kernel"] = "(" + ", ".join(map(str, t["kernel"])) + ")"
        row["padding"] = t["padding"]
        if cell["quantized"]:
            q = cell["quantized"].lower()
            row[f"x {q}"], row[f"weight {q}"] = t["x_q"], t["w_q"]
        row.update({"x": t["x"], "weight": t["w"], "x·weight": t["product"]})
        rows.append(row)
    return rows


def conv_products_line(cell: dict, limit: int = 12) -> str:
    """Σ written out where it is short (the spec's 3 × 3 windows), else the summary sentence."""
    taps = cell["taps"]
    if len(taps) > limit:
        return cell["text"]
    terms = " + ".join(f"{precise(t['x'])}·{precise(t['w'])}" for t in taps)
    bias = f" + {precise(cell['bias'])}" if cell["bias"] else ""
    return f"{terms}{bias} = **{precise(cell['value'])}**"


HOVER_MAX_CELLS = 256  # output cells whose windows go to the browser for hover outlines (spec-sized outputs)


def drawn_cells(reads, input_shape: tuple) -> dict[int, list[tuple[int, int]]]:
    """Full input indices as the input heatmap draws them: slice index (plots.slices order) -> (h, w) cells,
    each once; cells outside the input's h and w are padding (drawn dashed), an index outside its other axes
    (depth padding, another batch) has no slice to be drawn in."""
    shape = tuple(int(d) for d in input_shape)
    lead = shape[:-2]
    out: dict[int, list[tuple[int, int]]] = {}
    for index in reads:
        head = tuple(int(v) for v in index[:-2])
        if any(not 0 <= v < n for v, n in zip(head, lead)):
            continue
        cells = out.setdefault(int(np.ravel_multi_index(head, lead)) if lead else 0, [])
        cell = (int(index[-2]), int(index[-1]))
        if cell not in cells:
            cells.append(cell)
    return out


def hover_windows(layer, params: dict, input_shape: tuple, output_shape: tuple) -> dict[str, list[list[int]]] | None:
    """Every output cell's input cells, for outlining them on hover: "n,c,[d,]h,w" -> [[input slice, h, w], ...].
    None for outputs too large to send. Geometry only, so it is remembered by the parameters that are not
    arrays (an array's shape follows from the others)."""
    if layer.reads is None or int(np.prod(output_shape)) > HOVER_MAX_CELLS:
        return None
    geometry = tuple((k, v) for k, v in params.items() if not isinstance(v, np.ndarray))
    return _hover_windows(layer.name, geometry, tuple(int(d) for d in input_shape), tuple(output_shape))


@functools.lru_cache(maxsize=64)
def _hover_windows(name: str, geometry: tuple, shape: tuple, out_shape: tuple) -> dict[str, list[list[int]]]:
    from .layers import get_layer
    reads, params = get_layer(name).reads, dict(geometry)
    return {",".join(map(str, index)): [[s, h, w] for s, cells in drawn_cells(reads(params, shape, index), shape).items()
                                        for h, w in cells]
            for index in np.ndindex(*out_shape)}


def output_slice_index(out_index, out_shape) -> int:
    """Position of the slice holding out_index in plots.slices order."""
    lead = tuple(out_shape[:-2])
    return int(np.ravel_multi_index(tuple(out_index[:-2]), lead)) if lead else 0


# ----------------------------------------------------------------------------------------- scale
def _coefficients(params: dict, shape: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scale, shift, power broadcast to the input shape (float64), as ref.scale applies them."""
    coefficients = ref.scale_coefficients(shape, params["mode"], params["shift"], params["scale"], params["power"],
                                          params["channel_axis"])
    return tuple(np.broadcast_to(c, shape) for c in coefficients)


def scale_nan_explanation(x: np.ndarray, params: dict, reference_output: np.ndarray | None = None) -> str | None:
    """None when y = (x·scale + shift)^power has no NaN; else how many cells are NaN and why, with an example.
    reference_output: y where the caller has it (saves recomputing the layer)."""
    x = np.asarray(x, dtype=np.float32)
    y = reference_output
    if y is None or np.shape(y) != x.shape:
        y = ref.scale(x, params["mode"], params["shift"], params["scale"], params["power"], params["channel_axis"])
    nan = np.isnan(y)
    count = int(nan.sum())
    if not count:
        return None
    s, t, p = _coefficients(params, x.shape)
    with np.errstate(all="ignore"):
        base = x.astype(np.float64) * s + t
    fractional = np.mod(p, 1) != 0
    negative_fractional = nan & (base < 0) & fractional
    from_input = nan & np.isnan(x)
    parts = []
    if negative_fractional.any():
        parts.append(f"{int(negative_fractional.sum())} where the base x·scale + shift is negative and the power is "
                     f"fractional: a negative number to a fractional power has no real result")
    if from_input.any():
        parts.append(f"{int(from_input.sum())} where the input itself is NaN")
    other = nan & ~negative_fractional & ~from_input
    if other.any():
        parts.append(f"{int(other.sum())} from Inf arithmetic (e.g. Inf·0 or Inf − Inf in x·scale + shift)")
    pick = negative_fractional if negative_fractional.any() else nan
    where = tuple(int(v) for v in np.argwhere(pick)[0])
    example = (f"Example: cell {where}: x = {precise(x[where])}, base = {precise(x[where])}·{precise(s[where])} + "
               f"({precise(t[where])}) = {precise(base[where])}, and ({precise(base[where])})^{precise(p[where])} = NaN.")
    return (f"{count} of {y.size} output cells are NaN, in TensorRT and in the reference alike: "
            + "; ".join(parts) + ". " + example)


def scale_coefficient_rows(params: dict, input_shape: tuple, limit: int = 12) -> tuple[list[dict], str]:
    """Which scale/shift/power applies where: rows (at most `limit`) and a sentence on mode + channel_axis."""
    shape = tuple(int(d) for d in input_shape)
    mode, axis = params["mode"], params["channel_axis"]
    names = DIM_NAMES.get(len(shape), tuple(f"axis{i}" for i in range(len(shape))))
    values = lambda i: {c: float(params[c][i]) for c in ("scale", "shift", "power")}  # noqa: E731
    if mode == "UNIFORM":
        return [{"applies to": "every element", **values(0)}], "UNIFORM: one scale, shift and power for the whole tensor."
    count = scale_layer.coefficient_count(mode, shape, axis)
    if mode == "CHANNEL":
        rows = [{"applies to": f"{names[axis]} = {i}", **values(i)} for i in range(min(count, limit))]
        what = (f"CHANNEL with channel_axis {axis} ({names[axis]}): one set per index of axis {axis}, "
                f"{count} in all, shared by every other position.")
    else:
        sub = shape[axis:]
        label = ", ".join(names[axis:])
        rows = [{"applies to": f"({label}) = {tuple(int(v) for v in np.unravel_index(i, sub))}", **values(i)}
                for i in range(min(count, limit))]
        what = (f"ELEMENTWISE with channel_axis {axis}: one set per element of axes {axis}… ({label}, shape {sub}), "
                f"{count} in all, repeated over the axes before it.")
    if count > limit:
        what += f" First {limit} shown."
    return rows, what


def scale_formula(params: dict) -> str:
    return scale_layer.formula(params)


# ----------------------------------------------------------------------------------------- prelu
def prelu_broadcast(params: dict, input_shape: tuple) -> str:
    """'slopes (1, 3, 1, 1) broadcast over input (1, 3, 3, 3): one slope per channel, repeated along N, H, W'."""
    shape = tuple(int(d) for d in input_shape)
    sshape = tuple(int(d) for d in np.shape(params["slopes"]))
    names = DIM_NAMES.get(len(shape), tuple(f"axis{i}" for i in range(len(shape))))
    per = [n for n, a, b in zip(names, sshape, shape) if a == b and b > 1]
    rest = [n for n in names if n not in per]
    count = int(np.prod(sshape))
    if not per:
        what = "one slope for every element"
    elif per == ["C"]:
        what = f"one slope per channel, repeated along {', '.join(rest)}"
    else:
        what = f"one slope per ({', '.join(per)}) position, repeated along {', '.join(rest)}"
    return (f"slopes {sshape} broadcast over input {shape}: {what} "
            f"({count} slope value{'s' if count != 1 else ''}).")


# ------------------------------------------------------------------------------------ leaky relu
@functools.lru_cache(maxsize=1)
def _leaky_builds() -> ThreadPoolExecutor:
    """Kept for the process: in the busy server, starting three threads took ~10 ms of a slider change."""
    return ThreadPoolExecutor(len(leaky.CONSTRUCTIONS), thread_name_prefix="leaky-build")


def leaky_comparison(x: np.ndarray, alpha: float, evaluate_fn: Callable | None = None, own=None) -> dict:
    """Evaluate the three Leaky ReLU constructions on x with the same alpha.

    evaluate_fn(layer, raw_params, x, run=True) -> Evaluation (core.evaluate when None); own: the caller's
    Evaluation of one construction on this x and alpha, used as it is. Returns
    constructions, outputs, sources ('tensorrt' | 'reference'), max_diff (3×3 matrix of pairwise
    max |difference|), layers (the engine's layer dicts per construction), latency_ms (None without
    a GPU) and errors (None where the engine built)."""
    if evaluate_fn is None:
        from .core import evaluate as evaluate_fn
    names = leaky.CONSTRUCTIONS
    configs = {c: {"alpha": alpha, "construction": c} for c in names}
    todo = [c for c in names if own is None or c != own.params["construction"]]
    # Built side by side (engine's builder pool); where a GPU runs them, run one at a time so the latencies compare.
    evals = dict(zip(todo, _leaky_builds().map(lambda c: evaluate_fn("leaky_relu", configs[c], x, run=False), todo)))
    for c, e in evals.items():
        if e.backend.can_run and e.engine_status in ("built", "cached"):
            evals[c] = evaluate_fn("leaky_relu", configs[c], x)
    if own is not None:
        evals[own.params["construction"]] = own
    evals = {c: evals[c] for c in names}
    outputs = {c: e.output for c, e in evals.items()}
    diff = np.array([[ref.max_abs_diff(outputs[a], outputs[b]) for b in names] for a in names])
    return {
        "constructions": names,
        "outputs": outputs,
        "sources": {c: e.output_source for c, e in evals.items()},
        "max_diff": diff,
        "layers": {c: list(e.report.layers) if e.report else [] for c, e in evals.items()},
        "latency_ms": {c: e.latency_ms for c, e in evals.items()},
        "errors": {c: e.error for c, e in evals.items()},
    }


CONSTRUCTION_LABELS = {
    "activation": "ActivationType.LEAKY_RELU",
    "parametric_relu": "add_parametric_relu (one slope)",
    "scale_relu_sum": "Scale + ReLU + Scale + SUM",
}
