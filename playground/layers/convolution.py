"""IConvolutionLayer: `add_convolution_nd` with every attribute, 2-D and 3-D, and the INT8
path (explicit quantize/dequantize, weights fed through `set_input`)."""

from __future__ import annotations

import itertools

import numpy as np

from ..base import precision
from ..base import reference as ref
from ..base.examples import CANCELLING, EXACT, FLOAT32_TABLE, INF, Preset, frozen, lesson, spec_input, table
from ..base.explain import drawn_cells
from ..base.inputs import tile_pattern
from ..base.layer import Cell, Layer
from ..base.numbers import precise
from ..base.onnx_map import Graph, Node, OnnxMap, auto_pad, explicit_pads
from ..base.params import Param
from ..base.precision import QUANTIZED, fake_quantize
from ..base.section import Table, Text
from . import _window as window


def kernel_shape(p: dict, shape: tuple) -> tuple:
    return (p["num_output_maps"], shape[1] // p["num_groups"]) + tuple(p["kernel_size_nd"])


POWERS_MAX = 19  # 10^±19: every product with an input up to 10^19 and every sum of them stays in float32


def powers_of_ten(p, shape):
    """The spec's kernel: 10^4 … 10^-4 over a 3×3 window, so each output digit names the input cell it
    came from; successive (output map, input channel, depth) slices alternate in sign, which is the
    spec's groups ([w, −w]) and 3-D examples. Windows of more than 39 cells (7×6 and up) run the
    exponents 19 … −19 again, so the kernel is finite for every size."""
    ks = kernel_shape(p, shape)
    window = int(np.prod(ks[-2:]))
    exponents = np.arange(window // 2, window // 2 - window, -1)
    exponents = (exponents + POWERS_MAX) % (2 * POWERS_MAX + 1) - POWERS_MAX
    digits = np.power(10.0, exponents).astype(np.float32).reshape(ks[-2:])
    slices = int(np.prod(ks[:-2]))
    signs = np.where(np.arange(slices) % 2 == 0, 1.0, -1.0).astype(np.float32)
    return (signs[:, None, None] * digits).reshape(ks)


def _window(fn):
    return window.kernel_preset(fn, kernel_shape)


def _sobel(ks):
    # d/dW: a centred difference along W, smoothed along the other axes.
    w = np.zeros(ks)
    if ks[-1] >= 3:
        w[..., 0], w[..., -1] = -1.0, 1.0
    return w * (1.0 + window.centre(ks).sum(axis=-1, keepdims=True))


KERNEL_PRESETS = {
    "powers_of_ten": powers_of_ten,
    "ones": _window(np.ones),
    "box_mean": _window(lambda ks: np.full(ks, 1.0 / np.prod(ks))),
    "identity": _window(window.centre),
    "laplacian": _window(lambda ks: np.ones(ks) - np.prod(ks) * window.centre(ks)),
    "sobel_w": _window(_sobel),
    "random": lambda p, s: np.random.default_rng(0).uniform(-1, 1, kernel_shape(p, s)).astype(np.float32),
}


def geometry(p: dict, shape: tuple):
    """(resolved pre, resolved post, output spatial size) per axis, as TensorRT computes them."""
    return window.geometry(p, shape, "kernel_size_nd")


def check(fail, p, shape):
    kernel, bias = window.kernel_and_bias(
        fail, p, kernel_shape(p, shape), "num_output_maps × C/num_groups × kernel_size_nd"
    )
    window.check_fits(fail, p, shape, "kernel_size_nd")
    return {**p, "kernel": kernel, "bias": bias}


def cost(p, shape):
    """(output shape, multiply-adds, how they were counted, what to lower) for the work budget."""
    out = geometry(p, shape)[2]
    per_output = shape[1] // p["num_groups"] * int(np.prod(p["kernel_size_nd"]))
    output = (shape[0], p["num_output_maps"]) + tuple(out)
    return (
        output,
        int(np.prod(output)) * per_output,
        f"{int(np.prod(output)):,} outputs × {per_output} products each",
        "num_output_maps, kernel_size_nd, the input size, or raise stride_nd or num_groups",
    )


def reference(x, p):
    """The convolution of `x` as the layer receives it (the precision's input Q/DQ is applied before); under
    INT8/FP8 the weights go through their own Q/DQ pair, with the same scale."""
    kernel = p["kernel"]
    if p["precision"] in QUANTIZED:
        kernel = fake_quantize(kernel, p["quantize_scale"], p["precision"])
    pre, post = window.effective_padding(p)
    return ref.convolution(
        x, kernel, p["bias"], p["stride_nd"], pre, post, p["dilation_nd"], p["num_groups"], p["padding_mode"]
    )


def notes(p):
    out = []
    pre, post = window.effective_padding(p)
    if p["padding_mode"].startswith("SAME") and any(pre + post):
        out.append(
            f"padding_mode {p['padding_mode']} takes precedence: padding_nd, pre_padding and post_padding are ignored."
        )
    if any(p["padding_nd"]) and (p["pre_padding"] is not None or p["post_padding"] is not None):
        out.append("pre_padding/post_padding take precedence over padding_nd on their side.")
    if p["precision"] in QUANTIZED:
        kind = "int8, clamped to [-128, 127]" if p["precision"] == "INT8" else "FP8 E4M3, clamped to ±448"
        out.append(
            f"{p['precision']} here is explicit quantization: Q/DQ on the input and on the weights (fed through "
            f"set_input); values are rounded to {kind}, with scale {p['quantize_scale']:g}."
        )
    return out


def build(trt, network, x, p):
    maps, size = p["num_output_maps"], p["kernel_size_nd"]
    # a zero bias is none, as TensorRT's ONNX parser gives a Conv without B (empty weights): TensorRT-RTX fuses a
    # convolution with bias weights otherwise (their add goes into the pointwise kernel after it)
    bias = p["bias"] if np.any(p["bias"]) else trt.Weights()
    if p["precision"] in ("INT8", "FP8"):
        # Explicit quantization (the network is STRONGLY_TYPED; there is no INT8 builder flag): the input arrives
        # through its quantize/dequantize pair, and the weights get their own, fed through set_input.
        scale = network.add_constant((), np.array(p["quantize_scale"], np.float32)).get_output(0)
        weights = network.add_constant(p["kernel"].shape, p["kernel"]).get_output(0)
        q = network.add_quantize(weights, scale, trt.DataType.INT8 if p["precision"] == "INT8" else trt.DataType.FP8)
        conv = network.add_convolution_nd(x, maps, size, trt.Weights(), bias)
        conv.set_input(1, network.add_dequantize(q.get_output(0), scale, trt.DataType.FLOAT).get_output(0))
    else:
        conv = network.add_convolution_nd(x, maps, size, p["kernel"], bias)
    conv.num_groups = p["num_groups"]
    conv.stride_nd = p["stride_nd"]
    conv.dilation_nd = p["dilation_nd"]
    conv.padding_nd = p["padding_nd"]  # sets pre and post; the two below override one side each
    if p["pre_padding"] is not None:
        conv.pre_padding = p["pre_padding"]
    if p["post_padding"] is not None:
        conv.post_padding = p["post_padding"]
    conv.padding_mode = getattr(trt.PaddingMode, p["padding_mode"])
    return conv.get_output(0)


def onnx_read(node: Node) -> dict:
    """Conv: W (K, C/group, *kernel) and B as the kernel and bias; auto_pad and pads as the padding."""
    w, b = node.const(1, "W"), node.const(2, "B", required=False)
    if w.ndim != len(node.onnx_shape):
        raise node.fail("W", f"must have rank {len(node.onnx_shape)} (K, C/group, kernel…)", w.shape)
    kernel = w.reshape(w.shape[:2] + (1,) * node.lifted + w.shape[2:])
    given = node.attr("kernel_shape")
    if given is not None and tuple(given) != tuple(w.shape[2:]):
        raise node.fail("kernel_shape", f"must match W's window {tuple(w.shape[2:])}", tuple(given))
    return {
        "num_output_maps": w.shape[0],
        "kernel_size_nd": kernel.shape[2:],
        "num_groups": node.attr("group", 1),
        "kernel": kernel,
        "bias": b if b is not None else 0.0,
        "stride_nd": node.spatial("strides", 1),
        "dilation_nd": node.spatial("dilations", 1),
        **auto_pad(node),
    }


def onnx_write(g: Graph, x: str, p: dict, shape: tuple) -> str:
    """One Conv with the padding TensorRT resolved (SAME_* and ROUND_UP's extra zeros spelled as pads), without B
    where the bias is zero (as `build` gives TensorRT none)."""
    pre, post, _ = geometry(p, shape)
    return g.op(
        "Conv",
        [x, g.const(p["kernel"])] + ([g.const(p["bias"])] if np.any(p["bias"]) else []),
        kernel_shape=list(p["kernel_size_nd"]),
        strides=list(p["stride_nd"]),
        dilations=list(p["dilation_nd"]),
        group=p["num_groups"],
        pads=explicit_pads(pre, post),
    )


def reads(p, shape, index):
    """The input cells output (n, k, [d,] h, w) reads: its group's channels under the window."""
    n, k, position = index[0], index[1], index[2:]
    per_group, g = shape[1] // p["num_groups"], k // (p["num_output_maps"] // p["num_groups"])
    cells = window.cells_read(p, shape, "kernel_size_nd", position)
    return [(n, c) + where for c in range(g * per_group, (g + 1) * per_group) for where in cells]


def cell(x, p, index, reference_output=None):
    """One output cell's products x·w and their sum."""
    c = conv_cell_products(x, p, index, reference_output=reference_output)
    notes = [f"**{c['text']}**"]
    if c["quantized"]:
        clamp = "clamp to [-128, 127]" if c["quantized"] == "INT8" else "clamp to ±448, nearest E4M3 value"
        notes.append(
            f"{c['quantized']}: input values and weights are quantized with scale {p['quantize_scale']:g} "
            f"(round to nearest even, {clamp}) and dequantized before the products."
        )
    if p["num_groups"] > 1:
        notes.append(
            f"num_groups = {p['num_groups']}: output map {index[1]} is in group {c['group']}, which reads "
            f"input channels {c['channels'][0]}–{c['channels'][-1]} only."
        )
    return Cell(conv_products_line(c), tuple(conv_products_table(c)), tuple(notes))


def _int8_spelling(value) -> dict:
    """`int8=true|false`, the convolution's switch before every layer had a precision."""
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        raise ValueError("must be true or false (the old spelling of precision=INT8)")
    return {"precision": "INT8" if text in ("true", "1", "yes", "on") else "FP32"}


# -- examples: the spec's (004_3ac7b230bbcaefc8.txt) and the precision lessons --------------------
CONV_DOC = "004_3ac7b230bbcaefc8.txt"

# Shared by the default, kernel-attribute, num_groups and (summed) 3-D examples.
DEFAULT_TEXT = """
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679"""
CONV_DEFAULT = table(DEFAULT_TEXT, (1, 1, 4, 7))
STRIDE_2_2 = table(
    """
    12345.679 31264.598 23156.49 12345.679
    78912.34  97831.27  89723.16 78912.34""",
    (1, 1, 2, 4),
)
# The spec's CAFFE_ROUND_UP table (its numbers run together in the print: split here). The third
# row's window reads input rows 4, 5 and the zero row that ROUND_UP adds.
ROUND_UP = table(
    """
    12345.679 31264.598 23156.49 12345.679
    78912.34  97831.27  89723.16 78912.34
    45678.9   64597.8   56489.7  45678.9""",
    (1, 1, 3, 4),
)
PAD_1_1 = table(
    """
    1.2045    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456   23.056
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    4507.8    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9   56089.""",
    (1, 1, 6, 9),
)
PAD_1_0 = table(
    """
    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9""",
    (1, 1, 6, 7),
)
PAD_0_1 = table(
    """
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09""",
    (1, 1, 4, 9),
)
PRE_1_1 = table(
    """
    1.2045    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679""",
    (1, 1, 5, 8),
)
PRE_1_0 = table(
    """
    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679""",
    (1, 1, 5, 7),
)
PRE_0_1 = table(
    """
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679""",
    (1, 1, 4, 8),
)
POST_1_1 = table(
    """
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9   56089.""",
    (1, 1, 5, 8),
)
POST_1_0 = table(
    """
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9""",
    (1, 1, 5, 7),
)
POST_0_1 = table(
    """
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09""",
    (1, 1, 4, 8),
)
DILATION_2_2 = table(
    """
    13279.847 21387.955 32198.766 13279.847 21387.955
    46513.277 54621.387 65432.2   46513.277 54621.387""",
    (1, 1, 2, 5),
)
GROUPS_TABLE = frozen(np.concatenate([CONV_DEFAULT, -CONV_DEFAULT], axis=1))  # printed in full, both signs
INT8_TABLE = table(
    """
    726  791  772  726  791  772  726
    1821 1886 1867 1821 1886 1867 1821
    2817 2882 2863 2817 2882 2863 2817
    726  791  772  726  791  772  726""",
    (1, 1, 4, 7),
)

_SPEC_2D = spec_input((1, 1, 6, 9))
_SHAPE_ONLY = "The spec prints only the output shape {shape} for this example, no table."


def _conv(
    name, title, params, expected, shape, section, note=None, *, input=_SPEC_2D, tolerance=FLOAT32_TABLE, printed=True
):
    if expected is None:
        note = _SHAPE_ONLY.format(shape=shape) + (" " + note if note else "")
    return Preset(
        name,
        "convolution",
        title,
        params,
        input,
        expected,
        shape,
        tolerance,
        f"{CONV_DOC} § {section}",
        note,
        printed if expected is not None else False,
    )


_STRIDE_SHAPE_NOTE = (
    "The spec prints this shape as '{printed}', dropping two dimensions: by its own arithmetic it is {shape}."
)
_ALIAS_NOTE = (
    "CAFFE_{kind} is TensorRT 8's name; TensorRT 10 has only EXPLICIT_{kind}, which the playground "
    "takes it as (the same output)."
)
CONVOLUTION = [
    _conv(
        "default",
        "initial example (no attributes changed)",
        {},
        CONV_DEFAULT,
        (1, 1, 4, 7),
        "初始示例代码",
        "The initial example's table is hand-adjusted to the ideal 12345.6789, 23156.4897, … (beyond float32, "
        "the spec says so); the values here are the raw float32 ones the spec prints for the same windows in "
        "the num_groups example. The reference reaches the ideal values within rtol 1e-7.",
    ),
    _conv(
        "kernel_attributes",
        "num_output_maps, kernel_size_nd, kernel, bias set as attributes",
        {
            "num_output_maps": 1,
            "kernel_size_nd": "3,3",
            "kernel": [1e4, 1e3, 100, 10, 1, 0.1, 0.01, 0.001, 0.0001],
            "bias": "0",
        },
        CONV_DEFAULT,
        (1, 1, 4, 7),
        "num_output_maps & kernel_size_nd (kernel_size) & kernel & bias",
        "The spec prints no table: 'the result is the same as the initial example's'.",
        printed=False,
    ),
    _conv("stride_nd_2_2", "stride_nd = (2, 2)", {"stride_nd": "2,2"}, STRIDE_2_2, (1, 1, 2, 4), "stride_nd (stride)"),
    _conv(
        "stride_nd_2_1",
        "stride_nd = (2, 1)",
        {"stride_nd": "2,1"},
        None,
        (1, 1, 2, 7),
        "stride_nd (stride)",
        _STRIDE_SHAPE_NOTE.format(printed="(1,2,7)", shape=(1, 1, 2, 7)),
    ),
    _conv(
        "stride_nd_1_2",
        "stride_nd = (1, 2)",
        {"stride_nd": "1,2"},
        table(
            """
        12345.679 31264.598 23156.49  12345.679
        45678.914 64597.832 56489.723 45678.914
        78912.34  97831.27  89723.16  78912.34
        12345.679 31264.598 23156.49  12345.679""",
            (1, 1, 4, 4),
        ),
        (1, 1, 4, 4),
        "stride_nd (stride)",
        _STRIDE_SHAPE_NOTE.format(printed="(1,4,4)", shape=(1, 1, 4, 4)) + " Its table, printed without the two "
        "outer brackets, is right.",
    ),
    _conv(
        "padding_nd_1_1",
        "padding_nd = (1, 1)",
        {"padding_nd": "1,1"},
        PAD_1_1,
        (1, 1, 6, 9),
        "padding_nd (padding)",
        "The OCR of the print reads '56089 023' in row 3; it is 56089.023.",
    ),
    _conv(
        "padding_nd_1_0", "padding_nd = (1, 0)", {"padding_nd": "1,0"}, PAD_1_0, (1, 1, 6, 7), "padding_nd (padding)"
    ),
    _conv(
        "padding_nd_0_1", "padding_nd = (0, 1)", {"padding_nd": "0,1"}, PAD_0_1, (1, 1, 4, 9), "padding_nd (padding)"
    ),
    _conv("pre_padding_1_1", "pre_padding = (1, 1)", {"pre_padding": "1,1"}, PRE_1_1, (1, 1, 5, 8), "pre_padding"),
    _conv("pre_padding_1_0", "pre_padding = (1, 0)", {"pre_padding": "1,0"}, PRE_1_0, (1, 1, 5, 7), "pre_padding"),
    _conv("pre_padding_0_1", "pre_padding = (0, 1)", {"pre_padding": "0,1"}, PRE_0_1, (1, 1, 4, 8), "pre_padding"),
    _conv("post_padding_1_1", "post_padding = (1, 1)", {"post_padding": "1,1"}, POST_1_1, (1, 1, 5, 8), "post_padding"),
    _conv("post_padding_1_0", "post_padding = (1, 0)", {"post_padding": "1,0"}, POST_1_0, (1, 1, 5, 7), "post_padding"),
    _conv("post_padding_0_1", "post_padding = (0, 1)", {"post_padding": "0,1"}, POST_0_1, (1, 1, 4, 8), "post_padding"),
    _conv(
        "padding_mode_same_upper",
        "padding_mode = SAME_UPPER, stride (2, 2)",
        {"stride_nd": "2,2", "padding_mode": "SAME_UPPER"},
        None,
        (1, 1, 3, 5),
        "padding_mode",
    ),
    _conv(
        "padding_mode_same_lower",
        "padding_mode = SAME_LOWER, stride (2, 2)",
        {"stride_nd": "2,2", "padding_mode": "SAME_LOWER"},
        None,
        (1, 1, 3, 5),
        "padding_mode",
    ),
    _conv(
        "padding_mode_explicit_round_up",
        "padding_mode = EXPLICIT_ROUND_UP, stride (2, 2)",
        {"stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"},
        ROUND_UP,
        (1, 1, 3, 4),
        "padding_mode",
        "The spec prints only the shape here; the table is the one it prints for CAFFE_ROUND_UP, the same mode "
        "under TensorRT 8's name.",
        printed=False,
    ),
    _conv(
        "padding_mode_explicit_round_down",
        "padding_mode = EXPLICIT_ROUND_DOWN, stride (2, 2)",
        {"stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_DOWN"},
        STRIDE_2_2,
        (1, 1, 2, 4),
        "padding_mode",
    ),
    _conv(
        "padding_mode_caffe_round_up",
        "padding_mode = CAFFE_ROUND_UP, stride (2, 2)",
        {"stride_nd": "2,2", "padding_mode": "CAFFE_ROUND_UP"},
        ROUND_UP,
        (1, 1, 3, 4),
        "padding_mode",
        _ALIAS_NOTE.format(kind="ROUND_UP") + " The print runs the numbers of each row together "
        "('12345.67931264.59823156.4912345.679'); they are split here.",
    ),
    _conv(
        "padding_mode_caffe_round_down",
        "padding_mode = CAFFE_ROUND_DOWN, stride (2, 2)",
        {"stride_nd": "2,2", "padding_mode": "CAFFE_ROUND_DOWN"},
        STRIDE_2_2,
        (1, 1, 2, 4),
        "padding_mode",
        _ALIAS_NOTE.format(kind="ROUND_DOWN"),
    ),
    _conv(
        "dilation_nd_2_2",
        "dilation_nd = (2, 2)",
        {"dilation_nd": "2,2"},
        DILATION_2_2,
        (1, 1, 2, 5),
        "dilation_nd (dilation)",
    ),
    _conv(
        "dilation_nd_2_1", "dilation_nd = (2, 1)", {"dilation_nd": "2,1"}, None, (1, 1, 2, 7), "dilation_nd (dilation)"
    ),
    _conv(
        "dilation_nd_1_2", "dilation_nd = (1, 2)", {"dilation_nd": "1,2"}, None, (1, 1, 4, 5), "dilation_nd (dilation)"
    ),
    _conv(
        "num_groups_2",
        "num_groups = 2 (C = 2, kernel [w, −w])",
        {"num_output_maps": 2, "num_groups": 2, "kernel": "powers_of_ten"},
        GROUPS_TABLE,
        (1, 2, 4, 7),
        "num_groups",
        "The powers_of_ten preset alternates the sign per output map, which is the spec's concatenate([w, -w]). "
        "The spec adds: in INT8 mode each group's channel counts must be multiples of 4. Its two channels are alike "
        "(the input pattern spec_repeat), so the maps are w and −w of one plane; the pattern spec gives each channel "
        "its own digits, and each group then reads its own plane.",
        input={"kind": "spec_repeat", "shape": (1, 2, 6, 9)},
    ),  # the spec's two channels alike
    _conv(
        "conv_3d",
        "3-D: depth 2, kernel (2, 3, 3) = [w, −w]",
        {"kernel_size_nd": "2,3,3", "kernel": "powers_of_ten"},
        frozen(np.zeros((1, 1, 1, 4, 7))),
        (1, 1, 1, 4, 7),
        "三维卷积的示例",
        "The spec prints no table: the two depth slices are the num_groups example's two channels summed, "
        "'all elements are 0'. The powers_of_ten preset alternates the sign per depth slice, the spec's "
        "concatenate([w, -w]).",
        input=spec_input((1, 1, 2, 6, 9)),
        tolerance=CANCELLING,
        printed=False,
    ),
    _conv(
        "int8",
        "INT8 quantize/dequantize, scale 1, weights through set_input",
        {"precision": "INT8", "quantize_scale": 1},
        INT8_TABLE,
        (1, 1, 4, 7),
        "set_input 用法",
        "Scale 1 leaves the input at 1…9 and rounds the kernel to 127 127 100 10 1 0 0 0 0 (clamped to int8): "
        "726 = 1·127 + 2·127 + 3·100 + 4·10 + 5·1. The spec's BuilderFlag.INT8 is not needed in TensorRT 10 "
        "(explicit Q/DQ).",
        tolerance=EXACT,
    ),
]


def _lesson(name, title, precision, errors, note):
    """A precision lesson on the spec's convolution (its input, its 3 × 3 powers-of-ten kernel)."""
    return lesson("convolution", name, title, {"precision": precision}, _SPEC_2D, errors, note, shape=(1, 1, 4, 7))


CONVOLUTION += [
    _lesson(
        "fp16_overflow",
        "FP16 overflows above 65504",
        "FP16",
        {"max_abs_error": INF, "max_rel_error": INF},
        "The spec's convolution in FP16. The third output row sums to 78912 … 97831, beyond FP16's largest "
        "value 65504: its 7 cells are +Inf. The others lose their decimals: FP16 steps by 8 between 8192 and "
        "16384, so 12345.6789 becomes 12344, and the kernel's 10⁻⁴ is stored as 1.0014·10⁻⁴.",
    ),
    _lesson(
        "bf16_digits",
        "BF16 keeps the range, not the digits",
        "BF16",
        {"max_abs_error": 169.7, "max_rel_error": 0.003004, "error_units": 0.3846},
        "The same convolution in BF16: float32's range (nothing overflows) with 8 significant bits. 97831.27 "
        "lies where BF16 steps by 512, so the error reaches 170 although it is under half an ε (2⁻⁷) of the "
        "value: the digits the spec's powers-of-ten kernel spells are gone.",
    ),
    _lesson(
        "tf32_operands",
        "TF32 rounds the multiplies' operands",
        "TF32",
        {"max_abs_error": 0.002144, "max_rel_error": 4.693e-8, "error_units": 4.806e-5},
        "TF32 (the builder's TF32 flag) rounds the input and the kernel to 10 mantissa bits and sums in FP32: "
        "1 … 9 and 10⁴ … 1 are exact in it, 0.1, 0.01, 0.001 and 10⁻⁴ are not, so only the last digits move "
        "(a few thousandths). This is why the playground turns TF32 off for FP32.",
    ),
]


SHAPE_COLUMNS = {
    "dilated_kernel": "1+d(k−1)",
    "pre_padding_set": "pre_padding",
    "post_padding_set": "post_padding",
    "pre": "pre (resolved)",
    "post": "post (resolved)",
}


# -- the explanations under the stage ----------------------------------------------------------------------
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


def conv_output_shape(params: dict, input_shape: tuple) -> tuple:
    """(N, K, *spatial): the convolution's output shape."""
    shape = tuple(int(d) for d in input_shape)
    return (shape[0], int(params["num_output_maps"])) + tuple(int(o) for o in geometry(params, shape)[2])


def conv_shape_rows(params: dict, input_shape: tuple) -> list[dict]:
    """One row per spatial axis (D, H, W): the numbers that decide the output size, the formula with
    them written in, and the output size. The arithmetic is the layer's own (geometry, TensorRT's
    nvinfer1::PaddingMode); this writes it out."""
    shape = tuple(int(d) for d in input_shape)
    rank = len(shape) - 2
    if rank not in AXIS_NAMES:
        raise ValueError(f"conv_shape_rows: input shape {shape} must have rank 4 or 5")
    mode = params["padding_mode"]
    eff_pre, eff_post = window.effective_padding(params)
    set_pre, set_post = params["pre_padding"], params["post_padding"]
    res_pre, res_post, out = geometry(params, shape)
    rows = []
    for axis, name in enumerate(AXIS_NAMES[rank]):
        i, k = shape[2 + axis], params["kernel_size_nd"][axis]
        d, s = params["dilation_nd"][axis], params["stride_nd"][axis]
        b, a = eff_pre[axis], eff_post[axis]
        pre, post, o = int(res_pre[axis]), int(res_post[axis]), int(out[axis])
        dk = 1 + d * (k - 1)
        if mode in SAME_MODES:
            formula = (
                f"ceil({i} / {s}) = {o}; padding total = max(0, ({o} − 1)·{s} + {dk} − {i}) = {pre + post} "
                f"→ pre {pre}, post {post}"
            )
        else:
            fn = "floor" if mode == "EXPLICIT_ROUND_DOWN" else "ceil"
            formula = f"{fn}(({i} + {b} + {a} − {dk}) / {s}) + 1 = {o}"
            extra = post - a  # zeros the rounded-up last window reads
            if extra:
                formula += f"; the last window reads {extra} more zero{'s' if extra > 1 else ''} after: post {post}"
        rows.append(
            {
                "axis": name,
                "input": i,
                "kernel": k,
                "dilation": d,
                "dilated_kernel": dk,
                "padding_nd": params["padding_nd"][axis],
                "pre_padding_set": None if set_pre is None else set_pre[axis],
                "post_padding_set": None if set_post is None else set_post[axis],
                "pre": pre,
                "post": post,
                "stride": s,
                "formula": formula,
                "output": o,
            }
        )
    return rows


def padding_in_force(params: dict) -> str:
    """Which padding setting decides the padding now, in one sentence or two."""
    mode = params["padding_mode"]
    nd, pre, post = params["padding_nd"], params["pre_padding"], params["post_padding"]
    tup = lambda t: "(" + ", ".join(map(str, t)) + ")"  # noqa: E731
    if mode in SAME_MODES:
        ignored = [f"padding_nd {tup(nd)}"] + [
            f"{n} {tup(v)}" for n, v in (("pre_padding", pre), ("post_padding", post)) if v is not None
        ]
        return (
            f"In force now: padding_mode {mode}; TensorRT computes the padding itself, so "
            f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} ignored."
        )
    sides = []
    for side, value in (("before", pre), ("after", post)):
        owner = (
            f"{'pre' if side == 'before' else 'post'}_padding {tup(value)}"
            if value is not None
            else f"padding_nd {tup(nd)}"
        )
        sides.append(f"{side}: {owner}")
    overridden = " (padding_nd is overridden on both sides)" if pre is not None and post is not None else ""
    rounding = "rounds down" if mode == "EXPLICIT_ROUND_DOWN" else "rounds up"
    return f"In force now: padding_mode {mode} ({rounding}); {'; '.join(sides)}{overridden}."


def conv_cell_products(x: np.ndarray, params: dict, out_index, reference_output: np.ndarray | None = None) -> dict:
    """The taps that make one output cell (n, k, [d,] h, w): each input value × kernel weight, their sum,
    the bias, and the value, which equals the reference convolution at that cell.

    Input values and weights are the ones the layer computes with in params['precision']: quantized (INT8/FP8,
    with their codes) or rounded (FP16/BF16).
    Returns window (slice index → input (h, w) cells, padding cells outside the grid; the window the
    stage outlines), taps (list of dicts), products_sum, bias, value, reference (the reference output at
    that cell; pass reference_output to save recomputing the convolution) and text."""
    x = np.asarray(x, dtype=np.float32)
    rank = x.ndim - 2
    if rank not in AXIS_NAMES:
        raise ValueError(f"conv_cell_products: input shape {x.shape} must have rank 4 or 5")
    pre, _post, out = geometry(params, x.shape)
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
            tap = {
                "channel": c,
                "input": where,
                "kernel": kpos,
                "padding": not inside,
                "x": xval,
                "w": wval,
                "product": product,
            }
            if quantized:
                tap["x_q"] = _code(qx[(n, c) + where]) if inside else 0
                tap["w_q"] = _code(qw[(k, ci) + kpos])
            taps.append(tap)
    bias = float(params["bias"][k])
    value = float(precision.round_to(np.float32(total + bias), prec))
    if reference_output is None or tuple(np.shape(reference_output)) != out_shape:
        reference_output = precision.emulate(LAYER, x, params)
    reference = float(reference_output[idx])
    padding_taps = sum(t["padding"] for t in taps)
    where = f"input channel{'s' if len(channels) > 1 else ''} {channels[0]}" + (
        f"–{channels[-1]}" if len(channels) > 1 else ""
    )
    zeros = f", {padding_taps} of them on padding zeros" if padding_taps else ""
    text = (
        f"Σ = {precise(value)}: the {len(taps)} products x·w ({where}{zeros}) sum to {precise(total)}, "
        f"plus bias {precise(bias)}"
    )
    return {
        "out_index": idx,
        "out_shape": out_shape,
        "group": group,
        "channels": channels,
        "quantized": prec if quantized else None,
        "taps": taps,
        "window": drawn_cells([(n, t["channel"]) + t["input"] for t in taps], x.shape),
        "products_sum": total,
        "bias": bias,
        "value": value,
        "reference": reference,
        "text": text,
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


def section(ev, ctx):
    """The output size per axis (the shape table), and which padding is in force."""
    unset = ("pre_padding_set", "post_padding_set")  # None or a number: one type per column
    rows = [
        {SHAPE_COLUMNS.get(k, k): ("unset" if v is None else str(v)) if k in unset else v for k, v in row.items()}
        for row in conv_shape_rows(ev.params, ev.input.shape)
    ]
    out = ev.reference.shape
    return [
        Text("**Output size per axis**"),
        Table("shape_table", rows),
        Text(f"Output shape: `{out}` (N = {out[0]}, K = num_output_maps = {out[1]})."),
        Text(PADDING_PRECEDENCE),
        Text(padding_in_force(ev.params)),
    ]


LAYER = Layer(
    name="convolution",
    order=50,
    title="Convolution",
    icon=":material/grid_on:",
    summary="2-D or 3-D convolution (cross-correlation) with groups, strides, padding modes and dilation.",
    params=(
        window.OUTPUT_MAPS,
        Param(
            "kernel_size_nd",
            "ints",
            lambda p, s: tuple(min(3, d) for d in s[2:]),
            "Kernel window per spatial axis (two values for 2-D, three for 3-D).",
            low=1,
            high=15,
            step=1,
            per_axis=True,
            offers=window.largest_window,
            label="Kernel size",
        ),
        window.groups_param("convolutions"),
        Param(
            "kernel",
            "array",
            "powers_of_ten",
            "Weights, shape (K, C/num_groups, *kernel_size_nd), or a preset.",
            presets=KERNEL_PRESETS,
            weight=True,
            label="Kernel",
        ),
        window.BIAS,
        *window.padding_params(),
        window.DILATION,
    ),
    example_shape=(1, 1, 6, 9),
    example_input=tile_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    notes=notes,
    explain=lambda p, shape: window.unchanged_notes(p, shape, "kernel_size_nd"),
    ranks=(4, 5),
    stage_tensors=lambda p: [("Kernel", p["kernel"])],
    legacy={"int8": _int8_spelling},
    tf32=("kernel",),
    examples=tuple(CONVOLUTION),
    reads=reads,
    cell=cell,
    cell_axes=lambda rank: ("n", "k", "d", "h", "w") if rank == 5 else ("n", "k", "h", "w"),
    section=section,
    sums=lambda p: True,
    onnx=OnnxMap(("Conv",), onnx_read, onnx_write),
)
