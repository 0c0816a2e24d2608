"""IDeconvolutionLayer: `add_deconvolution_nd` (transposed convolution) with every attribute the convolution has,
2-D and 3-D.

Every input cell scatters its value times the kernel into the output, the kernel's taps `dilation` apart, at
input index · stride; where the scattered windows overlap their contributions add. Padding crops the result.
The kernel is TensorRT's CKRS order: (C, K / num_groups, *kernel_size_nd).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..base import reference as ref
from ..base.examples import derived
from ..base.inputs import arange_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap, explicit_pads
from ..base.params import Param, spatial_names
from ..base.precision import QUANTIZED, fake_quantize
from . import _window as window

KERNEL = "kernel_size_nd"


def kernel_shape(p: dict, shape: tuple) -> tuple:
    return (shape[1], p["num_output_maps"] // p["num_groups"]) + tuple(p[KERNEL])


def _bilinear(ks):
    """The bilinear upsampling kernel (as FCN initialises it): with stride k/2 (k even) and padding k/4 the
    output is the input resized ×(k/2) by linear interpolation, away from the border."""
    w = np.ones(())
    for k in ks:  # a triangle per axis, their outer product
        factor = (k + 1) // 2
        centre = factor - 1 if k % 2 else factor - 0.5
        w = np.multiply.outer(w, 1 - np.abs(np.arange(k) - centre) / factor)
    return w


KERNEL_PRESETS = {
    "ones": window.kernel_preset(np.ones, kernel_shape),
    "identity": window.kernel_preset(window.centre, kernel_shape),
    "bilinear": window.kernel_preset(_bilinear, kernel_shape),
    "random": lambda p, s: np.random.default_rng(0).uniform(-1, 1, kernel_shape(p, s)).astype(np.float32),
}


def geometry(p: dict, shape: tuple) -> tuple[tuple, tuple, tuple]:
    """(cells cropped before, after, output size) per spatial axis, by TensorRT's deconvolution formulas: the
    full scatter spans (I − 1)·S + D·(K − 1) + 1; explicit padding crops pre/post of it, SAME_* crop
    max(D·(K − 1) + 1 − S, 0) (the odd cell after for UPPER, before for LOWER), leaving min(I·S, span)."""
    pre, post = window.effective_padding(p)
    dilation = window.dilation(p, len(shape) - 2)
    out_pre, out_post, out = [], [], []
    for i, k, s, d, b, a in zip(shape[2:], p[KERNEL], p["stride_nd"], dilation, pre, post):
        span = (i - 1) * s + d * (k - 1) + 1
        if p["padding_mode"].startswith("SAME"):
            total = max(span - s * (i - 1) - s, 0)
            b = total // 2 if p["padding_mode"] == "SAME_UPPER" else total - total // 2
            a = total - b
        out_pre.append(b), out_post.append(a), out.append(span - b - a)
    return tuple(out_pre), tuple(out_post), tuple(out)


def reference(x, p):
    """Per kernel tap: every input cell × that tap's weights (per group, Σ over its channels), added into the
    full output at input · stride + tap · dilation; then the padding cropped and the bias added. Under INT8/FP8
    the kernel goes through its own Q/DQ pair with the input's scale (the input's is applied before)."""
    x = np.asarray(x, np.float64)
    n, c = x.shape[:2]
    g, maps = p["num_groups"], p["num_output_maps"]
    kernel = _kernel(p)
    kernel = np.asarray(kernel, np.float64).reshape((g, c // g) + kernel_shape(p, x.shape)[1:])
    pre, post, out = geometry(p, x.shape)
    dilation = window.dilation(p, x.ndim - 2)
    span = [b + o + a for b, o, a in zip(pre, out, post)]  # the full scatter, before the crop
    full = np.zeros((n, g, maps // g, *span))
    grouped = x.reshape((n, g, c // g) + x.shape[2:])
    for tap in window.window_cells(p, KERNEL):
        scattered = np.einsum("ngc...,gck->ngk...", grouped, kernel[(..., *tap)])
        at = tuple(
            slice(t * d, t * d + (i - 1) * s + 1, s) for t, d, i, s in zip(tap, dilation, x.shape[2:], p["stride_nd"])
        )
        full[(slice(None), slice(None), slice(None), *at)] += scattered
    crop = tuple(slice(b, b + o) for b, o in zip(pre, out))
    y = full.reshape((n, maps, *span))[(slice(None), slice(None), *crop)]
    y = y + np.asarray(p["bias"], np.float64).reshape((1, maps) + (1,) * len(out))
    return np.asarray(y, dtype=ref.result_type())


def _kernel(p):
    """The weights the engine computes with: through the Q/DQ pair under INT8/FP8."""
    if p["precision"] in QUANTIZED:
        return fake_quantize(p["kernel"], p["quantize_scale"], p["precision"])
    return p["kernel"]


def notes(p):
    if p["precision"] not in QUANTIZED:
        return []
    kind = "int8, clamped to [-128, 127]" if p["precision"] == "INT8" else "FP8 E4M3, clamped to ±448"
    return [
        f"{p['precision']} here is explicit quantization: Q/DQ on the input and on the weights (fed through "
        f"set_input); values are rounded to {kind}, with scale {p['quantize_scale']:g}."
    ]


def check(fail, p, shape):
    kernel, bias = window.kernel_and_bias(
        fail, p, kernel_shape(p, shape), "C × num_output_maps/num_groups × kernel_size_nd", " (TensorRT's CKRS order)"
    )
    p = {**p, "kernel": kernel, "bias": bias}
    pre, post, out = geometry(p, shape)
    for ax, o, b, a in zip(spatial_names(len(shape)), out, pre, post):
        if o < 1:
            name = window.padding_named(p, b > 0, a > 0)
            raise fail(name, f"on axis {ax} crops {b} + {a} cells of {o + b + a}: the output would be empty", p[name])
    return p


def cost(p, shape):
    out = geometry(p, shape)[2]
    output = (shape[0], p["num_output_maps"]) + tuple(out)
    per_input = p["num_output_maps"] // p["num_groups"] * int(np.prod(p[KERNEL]))
    inputs = int(np.prod(shape))
    return (
        output,
        inputs * per_input,
        f"{inputs:,} input cells × {per_input} scattered products each",
        "num_output_maps, kernel_size_nd, the input size, or raise num_groups",
    )


def _landing(p, shape, index):
    """Output index (n, k, [d,] h, w): every (input channel, input position, kernel tap) that lands on it."""
    n, k, position = index[0], index[1], index[2:]
    per_group, maps = shape[1] // p["num_groups"], p["num_output_maps"] // p["num_groups"]
    g = k // maps
    pre = geometry(p, shape)[0]
    dilation = window.dilation(p, len(shape) - 2)
    found = []
    for tap in window.window_cells(p, KERNEL):
        where = []
        for o, b, t, d, s, i in zip(position, pre, tap, dilation, p["stride_nd"], shape[2:]):
            q, r = divmod(o + b - t * d, s)
            if r or not 0 <= q < i:
                break
            where.append(q)
        else:
            found += [(c, tuple(where), tap) for c in range(g * per_group, (g + 1) * per_group)]
    return n, k - g * maps, found


def reads(p, shape, index):
    """The input cells that scatter into output `index`: the transposed window."""
    n, _, found = _landing(p, shape, index)
    return sorted({(n, c) + where for c, where, _ in found})


def cell(x, p, index, reference_output=None):
    """The products that land on one output cell: input value × the weight of the tap that carries it there."""
    n, local, found = _landing(p, x.shape, index)
    kernel = _kernel(p)
    if p["precision"] in QUANTIZED:  # the values the engine multiplies: both through their Q/DQ pairs
        x = fake_quantize(x, p["quantize_scale"], p["precision"])
    terms = [(float(x[(n, c) + where]), float(kernel[(c, local) + tap]), c, where, tap) for c, where, tap in found]
    bias = float(p["bias"][index[1]])
    shown = precise(float(reference_output[tuple(index)])) if reference_output is not None else "?"
    plus = f" + {precise(bias)}" if bias else ""
    if not terms:
        line = f"no input cell lands here{': bias ' + precise(bias) if bias else ''} = **{shown}**"
    elif len(terms) <= 12:
        line = " + ".join(f"{precise(v)}·{precise(w)}" for v, w, *_ in terms) + f"{plus} = **{shown}**"
    else:
        line = f"Σ of {len(terms)} products{plus} = **{shown}**"
    rows = tuple(
        {
            "c": c,
            "input": str(where),
            "tap": str(tap),
            "x": precise(v),
            "weight": precise(w),
            "x·weight": precise(v * w),
        }
        for v, w, c, where, tap in terms
    )
    taps = int(np.prod(p[KERNEL]))
    notes = [
        f"An input cell i reaches output o through tap t where o = i·stride + t·dilation − pre_padding: "
        f"{len({t for *_, t in found})} of the kernel's {taps} taps land here."
    ]
    if p["precision"] in QUANTIZED:
        notes.append(
            f"{p['precision']}: the input values and the weights are quantized with scale "
            f"{p['quantize_scale']:g} (Q/DQ on both, the weights' fed through set_input)."
        )
    if p["num_groups"] > 1:
        maps = p["num_output_maps"] // p["num_groups"]
        per_group = x.shape[1] // p["num_groups"]
        g = index[1] // maps
        notes.append(
            f"num_groups = {p['num_groups']}: output map {index[1]} is in group {g}, which input channels "
            f"{g * per_group}–{(g + 1) * per_group - 1} scatter into."
        )
    return Cell(line, rows, tuple(notes))


def explain(p, shape):
    pre, post, out = geometry(p, shape)
    dilation = window.dilation(p, len(shape) - 2)
    rows = [
        f"{ax}: ({i} − 1)·{s} + {d}·({k} − 1) + 1 − {b} − {a} = {o}"
        for ax, i, k, s, d, b, a, o in zip(
            spatial_names(len(shape)), shape[2:], p[KERNEL], p["stride_nd"], dilation, pre, post, out
        )
    ]
    text = [
        "**Output size per axis**, (I − 1)·stride + dilation·(kernel − 1) + 1 − cropped: " + "; ".join(rows) + ".",
        "Each input cell scatters value × kernel into the output, starting at its index × stride; where the "
        "windows overlap (stride below the dilated kernel) the products add, and where they leave gaps "
        "(stride above it) only the bias remains. It is the convolution with the same attributes run "
        "backwards: that convolution maps this output's size back to the input's.",
    ]
    text += window.unchanged_notes(p, shape, None)
    if p["padding_mode"] == "EXPLICIT_ROUND_UP":
        text.append(
            "padding_mode EXPLICIT_ROUND_UP changes nothing here: a deconvolution's output size has no division to "
            "round (the explicit modes crop the padding as given); SAME_UPPER and SAME_LOWER change it."
        )
    if p["padding_mode"].startswith("SAME"):
        text.append(
            f"{p['padding_mode']} crops max(dilation·(kernel − 1) + 1 − stride, 0) cells per axis, the odd "
            f"one {'after' if p['padding_mode'] == 'SAME_UPPER' else 'before'}: the output is input × stride "
            f"where the kernel reaches that far. padding_nd, pre_padding and post_padding are ignored."
        )
    return text


def build(trt, network, x, p):
    maps, size = p["num_output_maps"], p["kernel_size_nd"]
    if p["precision"] in ("INT8", "FP8"):
        # Explicit quantization, as the convolution: the input arrives through its Q/DQ pair and the kernel gets its
        # own, fed through set_input (weights given as Weights would stay FP32).
        scale = network.add_constant((), np.array(p["quantize_scale"], np.float32)).get_output(0)
        weights = network.add_constant(p["kernel"].shape, p["kernel"]).get_output(0)
        q = network.add_quantize(weights, scale, trt.DataType.INT8 if p["precision"] == "INT8" else trt.DataType.FP8)
        deconv = network.add_deconvolution_nd(x, maps, size, trt.Weights(), p["bias"])
        deconv.set_input(1, network.add_dequantize(q.get_output(0), scale, trt.DataType.FLOAT).get_output(0))
    else:
        deconv = network.add_deconvolution_nd(x, maps, size, p["kernel"], p["bias"])
    deconv.num_groups = p["num_groups"]
    deconv.stride_nd = p["stride_nd"]
    deconv.dilation_nd = p["dilation_nd"]
    deconv.padding_nd = p["padding_nd"]  # sets pre and post; the two below override one side each
    if p["pre_padding"] is not None:
        deconv.pre_padding = p["pre_padding"]
    if p["post_padding"] is not None:
        deconv.post_padding = p["post_padding"]
    deconv.padding_mode = getattr(trt.PaddingMode, p["padding_mode"])
    return deconv.get_output(0)


def onnx_read(node: Node) -> dict:
    """ConvTranspose: W (C, K/group, *kernel) is TensorRT's CKRS layout; pads, auto_pad, output_padding and
    output_shape become the cells cropped before and after (TensorRT has no output_padding: it comes off the end
    crop, where there is one)."""
    w, b = node.const(1, "W"), node.const(2, "B", required=False)
    if w.ndim != len(node.onnx_shape):
        raise node.fail("W", f"must have rank {len(node.onnx_shape)} (C, K/group, kernel…)", w.shape)
    kernel = w.reshape(w.shape[:2] + (1,) * node.lifted + w.shape[2:])
    groups = node.attr("group", 1)
    strides, dilations = node.spatial("strides", 1), node.spatial("dilations", 1)
    extra = node.spatial("output_padding", 0)
    mode = node.attr("auto_pad", "NOTSET")
    pre, post = node.pads() if mode == "NOTSET" else ((0,) * len(strides),) * 2
    sizes = node.attr("output_shape")
    if sizes is not None or mode in ("SAME_UPPER", "SAME_LOWER"):
        wanted = (
            node.spatial("output_shape", 1)
            if sizes is not None
            else tuple(i * s for i, s in zip(node.shape[2:], strides))
        )
        pre, post = [], []
        for i, k, s, d, o, e in zip(node.shape[2:], kernel.shape[2:], strides, dilations, wanted, extra):
            total = s * (i - 1) + e + d * (k - 1) + 1 - o
            if total < 0:
                raise node.fail("output_shape", f"{o} is more than the {o + total} cells the scatter spans", sizes)
            first = total // 2 if mode == "SAME_UPPER" else total - total // 2
            pre.append(first), post.append(total - first)
    elif mode not in ("NOTSET", "VALID"):
        raise node.fail("auto_pad", "must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", mode)
    post = tuple(a - e for a, e in zip(post, extra))
    if min(post) < 0:
        raise node.fail(
            "output_padding",
            "is more than the end padding: TensorRT's deconvolution has no "
            "output_padding (the cells it adds would hold the bias alone)",
            extra,
        )
    return {
        "num_output_maps": w.shape[1] * groups,
        "kernel_size_nd": kernel.shape[2:],
        "num_groups": groups,
        "kernel": kernel,
        "bias": b if b is not None else 0.0,
        "stride_nd": strides,
        "dilation_nd": dilations,
        "padding_mode": "EXPLICIT_ROUND_DOWN",
        "padding_nd": 0,
        "pre_padding": tuple(pre),
        "post_padding": tuple(post),
    }


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    pre, post, _ = geometry(p, shape)
    return g.op(
        "ConvTranspose",
        [x, g.const(p["kernel"]), g.const(p["bias"])],
        kernel_shape=list(p[KERNEL]),
        strides=list(p["stride_nd"]),
        dilations=list(window.dilation(p, len(shape) - 2)),
        group=p["num_groups"],
        pads=explicit_pads(pre, post),
    )


# Padding crops a deconvolution's output: the shared declarations, with help that says so.
_CROPS = {
    "padding_nd": "Cells cropped from the start and the end of the output per spatial axis.",
    "pre_padding": "Cells cropped from the start of each spatial axis; replaces padding_nd's leading side when set.",
    "post_padding": "Cells cropped from the end of each spatial axis; replaces padding_nd's trailing side when set.",
}
PADDING = tuple(replace(q, help=_CROPS.get(q.name, q.help)) for q in window.padding_params())


def limits(p, backend):
    """TensorRT for RTX 1.7's builder refuses what full TensorRT builds: BF16 deconvolutions, and a stride above 1
    with a dilation above 1 ("Strided & Dilated Deconv are currently not supported")."""
    if backend != "tensorrt_rtx":
        return None
    if p["precision"] == "BF16":
        return "TensorRT for RTX builds no BF16 deconvolution (full TensorRT does)"
    if max(p["stride_nd"]) > 1 and max(window.dilation(p, len(p["stride_nd"]))) > 1:
        return "TensorRT for RTX builds no deconvolution with both a stride and a dilation above 1 (full TensorRT does)"
    return None


# -- examples on 1…9 in a 3 × 3 plane: worked out by hand ---------------------------------------------------
HOW = "TensorRT's IDeconvolutionLayer rules on the input 1…9"
X3 = {"kind": "spec", "shape": (1, 1, 3, 3)}
OVERLAP = [
    [1, 1, 3, 2, 5, 3, 3],
    [1, 1, 3, 2, 5, 3, 3],
    [5, 5, 12, 7, 16, 9, 9],
    [4, 4, 9, 5, 11, 6, 6],
    [11, 11, 24, 13, 28, 15, 15],
    [7, 7, 15, 8, 17, 9, 9],
    [7, 7, 15, 8, 17, 9, 9],
]
# bilinear ×2: out[h, w] = Σ (3i + j + 1)·a(h, i)·a(w, j) = 3·M(h)·S(w) + S(h)·M(w) + S(h)·S(w), where per axis
# S = Σ_i a (the weights reaching an output cell) and M = Σ_i i·a, a = 0.25 0.75 0.75 0.25 placed every 2, crop 1.
S = np.array([0.75, 1, 1, 1, 1, 0.75])
M = np.array([0, 0.25, 0.75, 1.25, 1.75, 1.5])


def _example(name, title, params, expected, note, input=X3):
    """`expected` without its leading axes of one (the input's rank says how many)."""
    expected = np.asarray(expected, np.float64)
    return derived(
        "deconvolution",
        name,
        title,
        params,
        input,
        expected.reshape((1,) * (len(input["shape"]) - expected.ndim) + expected.shape),
        HOW,
        note,
    )


EXAMPLES = (
    _example(
        "ones_3x3",
        "kernel 3 × 3 of ones, stride 1 (the defaults)",
        {},
        [[1, 3, 6, 5, 3], [5, 12, 21, 16, 9], [12, 27, 45, 33, 18], [11, 24, 39, 28, 15], [7, 15, 24, 17, 9]],
        "Output (3 − 1)·1 + 3 = 5 per axis. Each input cell adds itself to the 3 × 3 block below and right of "
        "it, so every output cell sums the input cells within reach: the centre, 45, is all nine.",
    ),
    _example(
        "zero_insertion",
        "kernel 1 × 1, stride 2: zeros between the cells",
        {"kernel_size_nd": "1,1", "stride_nd": "2,2"},
        [[1, 0, 2, 0, 3], [0] * 5, [4, 0, 5, 0, 6], [0] * 5, [7, 0, 8, 0, 9]],
        "Output (3 − 1)·2 + 1 = 5. Each cell lands at index × 2 and nothing reaches the cells between: the "
        "zeros a transposed convolution inserts.",
    ),
    _example(
        "nearest_x2",
        "kernel 2 × 2 of ones, stride 2: each cell a 2 × 2 block",
        {"kernel_size_nd": "2,2", "stride_nd": "2,2"},
        np.kron(np.arange(1, 10).reshape(3, 3), np.ones((2, 2))),
        "Output (3 − 1)·2 + 2 = 6. The windows tile the output exactly (stride = kernel): nearest-neighbour "
        "upsampling.",
    ),
    _example(
        "overlap",
        "kernel 3 × 3 of ones, stride 2: windows overlap",
        {"stride_nd": "2,2"},
        OVERLAP,
        "Output (3 − 1)·2 + 3 = 7. Output rows and columns 2 and 4 are reached from two input rows or columns: "
        "(2, 2) = 1 + 2 + 4 + 5 = 12, (4, 4) = 5 + 6 + 8 + 9 = 28; the checkerboard of transposed "
        "convolutions.",
    ),
    _example(
        "padding_crops",
        "padding_nd = (1, 1) crops the output",
        {"padding_nd": "1,1"},
        [[12, 21, 16], [27, 45, 33], [24, 39, 28]],
        "The defaults' 5 × 5 output without its outer ring: (3 − 1)·1 + 3 − 1 − 1 = 3.",
    ),
    _example(
        "same_upper",
        "SAME_UPPER, stride 2: output = input × 2",
        {"stride_nd": "2,2", "padding_mode": "SAME_UPPER"},
        np.array(OVERLAP)[:6, :6],
        "SAME_* crop max(3 − 2, 0) = 1 cell per axis, SAME_UPPER after: the overlap example without its last "
        "row and column, 3 × 2 = 6.",
    ),
    _example(
        "dilation_2",
        "kernel 2 × 2 of ones, dilation 2",
        {"kernel_size_nd": "2,2", "dilation_nd": "2,2"},
        [[1, 2, 4, 2, 3], [4, 5, 10, 5, 6], [8, 10, 20, 10, 12], [4, 5, 10, 5, 6], [7, 8, 16, 8, 9]],
        "The taps are 2 apart, so a cell reaches o and o + 2 per axis: output (3 − 1) + 2·1 + 1 = 5; the "
        "centre is reached by the four corners, 1 + 3 + 7 + 9 = 20.",
    ),
    _example(
        "bilinear_x2",
        "bilinear kernel 4 × 4, stride 2, padding 1: ×2 upsampling",
        {"kernel_size_nd": "4,4", "stride_nd": "2,2", "padding_nd": "1,1", "kernel": "bilinear"},
        3 * np.outer(M, S) + np.outer(S, M) + np.outer(S, S),
        "The weights 0.25 0.75 0.75 0.25 per axis, placed every 2 and cropped by 1: output (3 − 1)·2 + 4 − 2 "
        "= 6. Inside it is the input resized by linear interpolation, HALF_PIXEL ((2, 2) = 4: 0.75 of the way "
        "from 1 to 5, plus 0.75); the border cells get only 0.75 of the weight.",
    ),
    _example(
        "groups_2",
        "num_groups = 2: each channel its own map",
        {"num_output_maps": 2, "num_groups": 2, "kernel_size_nd": "2,2", "stride_nd": "2,2"},
        np.stack(
            [
                np.kron(np.arange(1, 10).reshape(3, 3), np.ones((2, 2))),
                np.kron(np.arange(10, 19).reshape(3, 3), np.ones((2, 2))),
            ]
        ),
        "Input 1…18 in two channels. With two groups channel 0 scatters into map 0 only and channel 1 into "
        "map 1: each is upsampled on its own.",
        input={"kind": "spec", "shape": (1, 2, 3, 3)},
    ),
    _example(
        "channels_add",
        "num_groups = 1: the channels add",
        {"kernel_size_nd": "2,2", "stride_nd": "2,2"},
        np.kron(np.arange(1, 10).reshape(3, 3) + np.arange(10, 19).reshape(3, 3), np.ones((2, 2))),
        "The same input with one map and one group: both channels scatter into it, 1 + 10 = 11 in the top left block.",
        input={"kind": "spec", "shape": (1, 2, 3, 3)},
    ),
    _example(
        "nearest_x2_3d",
        "3-D: kernel 2 × 2 × 2 of ones, stride 2",
        {"kernel_size_nd": "2,2,2", "stride_nd": "2,2,2"},
        np.kron(np.arange(1, 9).reshape(2, 2, 2), np.ones((2, 2, 2))),
        "Input 1…8 in a 2 × 2 × 2 block: every cell becomes a 2 × 2 × 2 block of a 4 × 4 × 4 output.",
        input={"kind": "spec", "shape": (1, 1, 2, 2, 2)},
    ),
)

LAYER = Layer(
    name="deconvolution",
    order=70,
    title="Deconvolution",
    icon=":material/open_in_full:",
    summary="Transposed convolution: every input cell scatters value × kernel into the output, 2-D or 3-D.",
    params=(
        window.OUTPUT_MAPS,
        window.per_axis(
            KERNEL, 3, "Kernel window per spatial axis (two values for 2-D, three for 3-D).", 1, 15, label="Kernel size"
        ),
        window.groups_param("deconvolutions"),
        Param(
            "kernel",
            "array",
            "ones",
            "Weights, shape (C, K/num_groups, *kernel_size_nd) (TensorRT's CKRS order), or a preset.",
            presets=KERNEL_PRESETS,
            weight=True,
            label="Kernel",
        ),
        window.BIAS,
        *PADDING,
        window.DILATION,
    ),
    example_shape=(1, 1, 3, 3),
    example_input=arange_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    notes=notes,
    ranks=(4, 5),
    stage_tensors=lambda p: [("Kernel", p["kernel"])],
    tf32=("kernel",),
    examples=EXAMPLES,
    reads=reads,
    cell=cell,
    explain=explain,
    cell_axes=lambda rank: ("n", "k", "d", "h", "w") if rank == 5 else ("n", "k", "h", "w"),
    limits=limits,
    sums=lambda p: True,
    onnx=OnnxMap(("ConvTranspose",), onnx_read, onnx_write),
)
