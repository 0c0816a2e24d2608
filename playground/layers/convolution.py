"""IConvolutionLayer: `add_convolution_nd` with every attribute, 2-D and 3-D, and the INT8
path (explicit quantize/dequantize, weights fed through `set_input`)."""
from __future__ import annotations

import numpy as np

from .. import reference as ref
from ..inputs import tile_pattern
from ..layer import Layer
from ..params import Param
from ..precision import QUANTIZED, fake_quantize

PADDING_ALIASES = {"CAFFE_ROUND_DOWN": "EXPLICIT_ROUND_DOWN", "CAFFE_ROUND_UP": "EXPLICIT_ROUND_UP"}


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
    """A preset defined on one spatial window, repeated over output maps and input channels."""
    def preset(p, shape):
        ks = kernel_shape(p, shape)
        return np.broadcast_to(fn(ks[2:]).astype(np.float32), ks).copy()
    return preset


def _centre(ks):
    w = np.zeros(ks)
    w[tuple(k // 2 for k in ks)] = 1.0
    return w


def _sobel(ks):
    # d/dW: a centred difference along W, smoothed along the other axes.
    w = np.zeros(ks)
    if ks[-1] >= 3:
        w[..., 0], w[..., -1] = -1.0, 1.0
    return w * (1.0 + _centre(ks).sum(axis=-1, keepdims=True))


KERNEL_PRESETS = {
    "powers_of_ten": powers_of_ten,
    "ones": _window(np.ones),
    "box_mean": _window(lambda ks: np.full(ks, 1.0 / np.prod(ks))),
    "identity": _window(_centre),
    "laplacian": _window(lambda ks: np.ones(ks) - np.prod(ks) * _centre(ks)),
    "sobel_w": _window(_sobel),
    "random": lambda p, s: np.random.default_rng(0).uniform(-1, 1, kernel_shape(p, s)).astype(np.float32),
}


def effective_padding(p: dict) -> tuple[tuple, tuple]:
    """pre/post padding before the padding mode applies: pre_padding/post_padding, where set,
    replace padding_nd (TensorRT's setPaddingNd sets both; setPre/PostPadding override one side)."""
    pre = p["pre_padding"] if p["pre_padding"] is not None else p["padding_nd"]
    post = p["post_padding"] if p["post_padding"] is not None else p["padding_nd"]
    return pre, post


def geometry(p: dict, shape: tuple):
    """(resolved pre, resolved post, output spatial size) per axis, as TensorRT computes them."""
    pre, post = effective_padding(p)
    return ref.conv_padding(shape[2:], p["kernel_size_nd"], p["stride_nd"], p["dilation_nd"], pre, post,
                            p["padding_mode"])


def groups_offered(p, shape):
    """The group counts that divide both C and num_output_maps: the only ones the groups slider offers."""
    return [g for g in range(1, min(shape[1], p["num_output_maps"]) + 1)
            if shape[1] % g == 0 and p["num_output_maps"] % g == 0]


def kernel_size_offered(p, shape):
    """Per spatial axis, the largest kernel whose dilated window fits the padded input (explicit padding
    modes; the slider also stops at the declared maximum); None where SAME_* pad to fit any kernel."""
    if not str(p.get("padding_mode", "")).startswith("EXPLICIT"):
        return None
    pre, post = effective_padding(p)
    return tuple(max(1, (size + a + b - 1) // d + 1) for size, a, b, d in zip(shape[2:], pre, post, p["dilation_nd"]))


def groups_rule(groups, p, shape):
    if shape[1] % groups:
        return f"must divide the input channels C={shape[1]}"
    if p["num_output_maps"] % groups:
        return f"must divide num_output_maps={p['num_output_maps']}"
    return None


def check(fail, p, shape):
    maps, want = p["num_output_maps"], kernel_shape(p, shape)
    kernel = p["kernel"]
    if kernel.size == 1:
        kernel = np.full(want, kernel.ravel()[0], np.float32)
    if kernel.size != int(np.prod(want)):
        raise fail("kernel", f"needs num_output_maps × C/num_groups × kernel_size_nd = {' × '.join(map(str, want))} "
                             f"= {int(np.prod(want))} values", kernel)
    bias = p["bias"].ravel()
    if bias.size == 1:
        bias = np.full(maps, bias[0], np.float32)
    if bias.size != maps:
        raise fail("bias", f"needs 1 or num_output_maps={maps} values", p["bias"])
    pre, post = effective_padding(p)
    for axis, (size, k, d, a, b) in enumerate(zip(shape[2:], p["kernel_size_nd"], p["dilation_nd"], pre, post)):
        reach = 1 + d * (k - 1)
        if p["padding_mode"].startswith("EXPLICIT") and reach > size + a + b:
            name = "dilation_nd" if d > 1 else "kernel_size_nd"
            raise fail(name, f"the dilated kernel on spatial axis {axis} spans {reach} cells, more than the "
                             f"padded input ({size} + {a} + {b} = {size + a + b})", p[name])
    return {**p, "kernel": np.ascontiguousarray(kernel.reshape(want)), "bias": np.ascontiguousarray(bias)}


def cost(p, shape):
    """(output shape, multiply-adds, how they were counted, what to lower) for the work budget."""
    pre, post = effective_padding(p)
    out = ref.conv_padding(shape[2:], p["kernel_size_nd"], p["stride_nd"], p["dilation_nd"], pre, post,
                           p["padding_mode"])[2]
    per_output = shape[1] // p["num_groups"] * int(np.prod(p["kernel_size_nd"]))
    output = (shape[0], p["num_output_maps"]) + tuple(out)
    return (output, int(np.prod(output)) * per_output, f"{int(np.prod(output)):,} outputs × {per_output} products each",
            "num_output_maps, kernel_size_nd, the input size, or raise stride_nd or num_groups")


def reference(x, p):
    """The convolution of `x` as the layer receives it (the precision's input Q/DQ is applied before); under
    INT8/FP8 the weights go through their own Q/DQ pair, with the same scale."""
    kernel = p["kernel"]
    if p["precision"] in QUANTIZED:
        kernel = fake_quantize(kernel, p["quantize_scale"], p["precision"])
    pre, post = effective_padding(p)
    return ref.convolution(x, kernel, p["bias"], p["stride_nd"], pre, post, p["dilation_nd"], p["num_groups"],
                           p["padding_mode"])


def notes(p):
    out = []
    pre, post = effective_padding(p)
    if p["padding_mode"].startswith("SAME") and any(pre + post):
        out.append(f"padding_mode {p['padding_mode']} takes precedence: padding_nd, pre_padding and post_padding are ignored.")
    if any(p["padding_nd"]) and (p["pre_padding"] is not None or p["post_padding"] is not None):
        out.append("pre_padding/post_padding take precedence over padding_nd on their side.")
    if p["precision"] in QUANTIZED:
        kind = "int8, clamped to [-128, 127]" if p["precision"] == "INT8" else "FP8 E4M3, clamped to ±448"
        out.append(f"{p['precision']} here is explicit quantization: Q/DQ on the input and on the weights (fed through "
                   f"set_input); values are rounded to {kind}, with scale {p['quantize_scale']:g}.")
    return out


def build(trt, network, x, p):
    maps, size = p["num_output_maps"], p["kernel_size_nd"]
    if p["precision"] in ("INT8", "FP8"):
        # Explicit quantization (the network is STRONGLY_TYPED; there is no INT8 builder flag): the input arrives
        # through its quantize/dequantize pair, and the weights get their own, fed through set_input.
        scale = network.add_constant((), np.array(p["quantize_scale"], np.float32)).get_output(0)
        weights = network.add_constant(p["kernel"].shape, p["kernel"]).get_output(0)
        q = network.add_quantize(weights, scale, trt.DataType.INT8 if p["precision"] == "INT8" else trt.DataType.FP8)
        conv = network.add_convolution_nd(x, maps, size, trt.Weights(), p["bias"])
        conv.set_input(1, network.add_dequantize(q.get_output(0), scale, trt.DataType.FLOAT).get_output(0))
    else:
        conv = network.add_convolution_nd(x, maps, size, p["kernel"], p["bias"])
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


def _int8_spelling(value) -> dict:
    """`int8=true|false`, the convolution's switch before every layer had a precision."""
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        raise ValueError("must be true or false (the old spelling of precision=INT8)")
    return {"precision": "INT8" if text in ("true", "1", "yes", "on") else "FP32"}


def _per_axis(name, default, help, low, high, optional=False):
    return Param(name, "ints", (lambda p, s: (default,) * (len(s) - 2)) if not optional else None, help,
                 low=low, high=high, step=1, per_axis=True, optional=optional)


LAYER = Layer(
    name="convolution",
    title="Convolution",
    icon=":material/grid_on:",
    summary="2-D or 3-D convolution (cross-correlation) with groups, strides, padding modes and dilation.",
    params=(
        Param("num_output_maps", "int", 1, "Output channels K.", low=1, high=64, step=1),
        Param("kernel_size_nd", "ints", lambda p, s: tuple(min(3, d) for d in s[2:]),
              "Kernel window per spatial axis (two values for 2-D, three for 3-D).", low=1, high=15, step=1, per_axis=True,
              offers=kernel_size_offered),
        Param("num_groups", "int", 1, "Groups: input channels and output maps split into this many independent convolutions.",
              low=1, high=64, step=1, rule=groups_rule, offers=groups_offered),
        Param("kernel", "array", "powers_of_ten", "Weights, shape (K, C/num_groups, *kernel_size_nd), or a preset.",
              presets=KERNEL_PRESETS),
        Param("bias", "array", [0.0], "One value per output map (or one for all).", low=-1e6, high=1e6, step=0.5,
              slide=(-100.0, 100.0)),
        _per_axis("stride_nd", 1, "Step of the window per spatial axis.", 1, 16),
        _per_axis("padding_nd", 0, "Zeros added before and after each spatial axis.", 0, 16),
        _per_axis("pre_padding", 0, "Zeros before each spatial axis; replaces padding_nd's leading side when set.",
                  0, 16, optional=True),
        _per_axis("post_padding", 0, "Zeros after each spatial axis; replaces padding_nd's trailing side when set.",
                  0, 16, optional=True),
        Param("padding_mode", "enum", "EXPLICIT_ROUND_DOWN",
              "How the output size and padding are computed; SAME_* take precedence over all explicit padding.",
              choices=ref.PADDING_MODES, aliases=PADDING_ALIASES),
        _per_axis("dilation_nd", 1, "Spacing between kernel taps per spatial axis.", 1, 16),
    ),
    example_shape=(1, 1, 6, 9),
    example_input=tile_pattern,
    reference=reference,
    build=build,
    check=check,
    cost=cost,
    notes=notes,
    ranks=(4, 5),
    stage_tensors=lambda p: [("Kernel", p["kernel"])],
    legacy={"int8": _int8_spelling},
    tf32=("kernel",),
)
