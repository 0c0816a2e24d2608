"""Pure-NumPy reference of the TensorRT layers the playground demonstrates.

One small function per operation, in the style of the ONNX reference evaluator:
no I/O, no TensorRT import, float32 in and out (float64 inside where rounding
matters), ValueError naming every argument when shapes or values do not fit.

Inside `exact()` the functions return their float64 arithmetic unrounded: the truth a precision's error
is measured from (the inputs and weights stay the float32 values the layer is given).
"""

import contextlib
import contextvars
import itertools
import math

import numpy as np

from .budget import REFERENCE_CHUNK_BYTES

ACTIVATION_TYPES = (
    "RELU",
    "SIGMOID",
    "TANH",
    "LEAKY_RELU",
    "ELU",
    "SELU",
    "SOFTSIGN",
    "SOFTPLUS",
    "CLIP",
    "HARD_SIGMOID",
    "SCALED_TANH",
    "THRESHOLDED_RELU",
    "GELU_ERF",
    "GELU_TANH",
)
PADDING_MODES = ("EXPLICIT_ROUND_DOWN", "EXPLICIT_ROUND_UP", "SAME_UPPER", "SAME_LOWER")
SCALE_MODES = ("UNIFORM", "CHANNEL", "ELEMENTWISE")

_erf = np.frompyfunc(math.erf, 1, 1)  # no scipy; math.erf is accurate to about 1 ulp
_RESULT_TYPE = contextvars.ContextVar("result_type", default=np.float32)


@contextlib.contextmanager
def exact():
    """Within: every function here returns float64, its arithmetic without the final rounding to float32."""
    token = _RESULT_TYPE.set(np.float64)
    try:
        yield
    finally:
        _RESULT_TYPE.reset(token)


def result_type():
    """float32, or float64 within `exact()`: the type results (and a layer's own arithmetic) are made in."""
    return _RESULT_TYPE.get()


def _enum_name(value, allowed, what):
    """Accept 'RELU', 'relu' or an enum whose str() ends in '.RELU'."""
    name = str(value).rsplit(".", 1)[-1].upper()
    if name not in allowed:
        raise ValueError(f"unknown {what} {value!r}; expected one of {allowed}")
    return name


def activation(x, type, alpha=0.0, beta=0.0):
    """nvinfer1::ActivationType applied elementwise; alpha/beta as TensorRT uses them."""
    name = _enum_name(type, ACTIVATION_TYPES, "activation type")
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    a, b = float(alpha), float(beta)
    # exp/cube of large inputs may overflow to inf in a branch np.where discards;
    # the final float32 cast may overflow too: both are legitimate, not warnings.
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "RELU":
            y = np.maximum(x, 0.0)
        elif name == "SIGMOID":
            y = 0.5 * (1.0 + np.tanh(0.5 * x))  # same value as 1/(1+e^-x), never overflows
        elif name == "TANH":
            y = np.tanh(x)
        elif name == "LEAKY_RELU":
            y = np.where(x >= 0, x, a * x)
        elif name == "ELU":
            y = np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0.0)))
        elif name == "SELU":
            y = b * np.where(x > 0, x, a * np.expm1(np.minimum(x, 0.0)))
        elif name == "SOFTSIGN":
            y = x / (1.0 + np.abs(x))
        elif name == "SOFTPLUS":
            y = a * np.logaddexp(b * x, 0.0)  # log(exp(bx)+1) without exp overflow
        elif name == "CLIP":
            y = np.maximum(a, np.minimum(b, x))
        elif name == "HARD_SIGMOID":
            y = np.clip(a * x + b, 0.0, 1.0)
        elif name == "SCALED_TANH":
            y = a * np.tanh(b * x)
        elif name == "THRESHOLDED_RELU":
            y = np.where(x > a, x, 0.0)
        elif name == "GELU_ERF":
            y = 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))
        else:  # GELU_TANH
            y = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
        return np.asarray(y, dtype=result_type())


def prelu(x, slopes):
    """Parametric ReLU: x >= 0 ? x : slopes * x, slopes broadcast to x."""
    x = np.asarray(x, dtype=np.float32)
    slopes = np.asarray(slopes, dtype=np.float32)
    try:
        fits = np.broadcast_shapes(slopes.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"prelu: slopes shape {slopes.shape} does not broadcast to x shape {x.shape}")
    t = result_type()
    return np.where(x >= 0, x, slopes.astype(t) * x).astype(t)


def scale_coefficient_shape(x_shape, mode, channel_axis=1) -> tuple:
    """The shape of each coefficient, to broadcast against x_shape. UNIFORM: one coefficient; CHANNEL: one
    per index of x.shape[channel_axis]; ELEMENTWISE: one per element of x.shape[channel_axis:]."""
    mode = _enum_name(mode, SCALE_MODES, "scale mode")
    ndim = len(x_shape)
    if not -ndim <= channel_axis < ndim:
        raise ValueError(f"scale: channel_axis {channel_axis} out of range for x shape {tuple(x_shape)}")
    axis = channel_axis % ndim
    return {
        "UNIFORM": (),
        "CHANNEL": (x_shape[axis],) + (1,) * (ndim - axis - 1),
        "ELEMENTWISE": tuple(x_shape[axis:]),
    }[mode]


def scale_coefficients(x_shape, mode, shift, scale, power, channel_axis=1):
    """(scale, shift, power) as float64 arrays of scale_coefficient_shape. None means the TensorRT
    empty-Weights default (shift 0, scale 1, power 1)."""
    mode = _enum_name(mode, SCALE_MODES, "scale mode")
    shape = scale_coefficient_shape(x_shape, mode, channel_axis)

    def coeff(name, value, default):
        if value is None:
            return np.float64(default)
        # TensorRT stores coefficients as float32 Weights, so round them the same way.
        value = np.atleast_1d(np.asarray(value, dtype=np.float32)).astype(np.float64)
        if value.size != math.prod(shape):
            raise ValueError(
                f"scale: mode {mode} needs {math.prod(shape)} {name} coefficient(s) for x shape "
                f"{tuple(x_shape)} and channel_axis {channel_axis}, got {value.size}"
            )
        return value.reshape(shape)

    return coeff("scale", scale, 1.0), coeff("shift", shift, 0.0), coeff("power", power, 1.0)


def scale(x, mode, shift, scale, power, channel_axis=1):
    """IScaleLayer: y = (x * scale + shift) ** power (coefficients as in scale_coefficients)."""
    x = np.asarray(x, dtype=np.float32)
    s, t, p = scale_coefficients(x.shape, mode, shift, scale, power, channel_axis)
    # A negative base with a fractional power is NaN on the GPU too: a result, not a warning.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.asarray((x.astype(np.float64) * s + t) ** p, dtype=result_type())


def abs_diff(a, b):
    """|a − b| elementwise (float64), where NaN against NaN and an infinity against the same one
    count as equal, and a NaN against anything else as +inf."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b)
    d = np.where((np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b)), 0.0, d)
    return np.where(np.isnan(d), np.inf, d)


def max_abs_diff(a, b) -> float:
    """max of abs_diff; +inf when the shapes differ, 0 for empty arrays."""
    if np.shape(a) != np.shape(b):
        return math.inf
    d = abs_diff(a, b)
    return float(d.max()) if d.size else 0.0


def _ints(name, value, n):
    """An int or a length-n int sequence, as a tuple; ValueError otherwise."""
    if type(value) is tuple and len(value) == n and all(type(v) is int for v in value):
        return value  # already so (a read map asks once per output cell: the general path is most of its time)
    values = (value,) * n if isinstance(value, (int, np.integer)) or np.ndim(value) == 0 else tuple(value)
    if len(values) != n or any(int(v) != v for v in values):
        raise ValueError(f"{name} must be an int or {n} ints, got {value!r}")
    return tuple(int(v) for v in values)


def conv_padding(input_size, kernel_size, stride, dilation, pre_padding, post_padding, padding_mode):
    """Resolve TensorRT PaddingMode per spatial axis: (pre, post, output_size).

    EXPLICIT_ROUND_UP grows post so the last window lies inside the padded
    input; SAME_* ignore the given pre/post (nvinfer1::PaddingMode formulas).
    """
    mode = _enum_name(padding_mode, PADDING_MODES, "padding mode")
    args = dict(
        input_size=input_size,
        kernel_size=kernel_size,
        stride=stride,
        dilation=dilation,
        pre_padding=pre_padding,
        post_padding=post_padding,
        padding_mode=mode,
    )
    n = 1 if np.ndim(input_size) == 0 else len(input_size)
    try:
        I, K, S, D, B, A = (_ints(k, v, n) for k, v in list(args.items())[:6])
    except ValueError as e:
        raise ValueError(f"conv_padding: {e}; arguments {args}") from None
    if n < 1 or min(I + K + S + D) < 1 or min(B + A) < 0:
        raise ValueError(
            f"conv_padding: need >= 1 axis, sizes, strides and dilations >= 1, paddings >= 0; arguments {args}"
        )
    resolved = []
    for axis, (i, k, s, d, b, a) in enumerate(zip(I, K, S, D, B, A)):
        dk = 1 + d * (k - 1)
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-i // s)
            total = max(0, (o - 1) * s + dk - i)
            b = total // 2 if mode == "SAME_UPPER" else total - total // 2
            a = total - b
        else:
            span = i + b + a - dk
            o = (span // s if mode == "EXPLICIT_ROUND_DOWN" else -(-span // s)) + 1
            a += max(0, (o - 1) * s + dk - (i + b + a))  # zeros the rounded-up last window reads
        if o < 1:
            raise ValueError(
                f"conv_padding: axis {axis} output size {o} < 1 (dilated kernel {dk}, "
                f"padded input {i + b + a}); arguments {args}"
            )
        resolved.append((b, a, o))
    return tuple(zip(*resolved))  # (pre, post, out)


def convolution(
    x,
    kernel,
    bias=None,
    stride=None,
    pre_padding=None,
    post_padding=None,
    dilation=None,
    num_groups=1,
    padding_mode="EXPLICIT_ROUND_DOWN",
):
    """IConvolutionLayer: grouped, strided, dilated, zero-padded cross-correlation (no kernel flip).

    x is (N, C, H, W) or (N, C, D, H, W); kernel is (K, C / num_groups, *spatial); bias is (K,).
    """
    x = np.asarray(x, dtype=np.float32)
    kernel = np.asarray(kernel, dtype=np.float32)
    bias = None if bias is None else np.asarray(bias, dtype=np.float32)
    args = (
        f"x {x.shape}, kernel {kernel.shape}, bias {None if bias is None else bias.shape}, stride {stride}, "
        f"pre_padding {pre_padding}, post_padding {post_padding}, dilation {dilation}, "
        f"num_groups {num_groups}, padding_mode {padding_mode}"
    )
    g = num_groups
    if (
        x.ndim not in (4, 5)
        or kernel.ndim != x.ndim
        or not isinstance(g, (int, np.integer))
        or g < 1
        or x.shape[1] % g
        or kernel.shape[0] % g
        or kernel.shape[1] * g != x.shape[1]
        or (bias is not None and bias.shape != kernel.shape[:1])
    ):
        raise ValueError(
            f"convolution: need x rank 4 or 5, kernel (K, C/num_groups, *spatial) with K and C "
            f"divisible by num_groups, bias (K,) or None; got {args}"
        )
    n = x.ndim - 2
    try:
        stride, dilation, pre, post = (
            _ints(name, default if v is None else v, n)
            for name, v, default in (
                ("stride", stride, 1),
                ("dilation", dilation, 1),
                ("pre_padding", pre_padding, 0),
                ("post_padding", post_padding, 0),
            )
        )
        pre, post, out = conv_padding(x.shape[2:], kernel.shape[2:], stride, dilation, pre, post, padding_mode)
    except ValueError as e:
        raise ValueError(f"convolution: {e}; {args}") from None

    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(pre, post)))
    span = [1 + d * (k - 1) for d, k in zip(dilation, kernel.shape[2:])]
    # windows[n, c, *out_pos, *kernel_pos]: a strided view, no copy until einsum needs one
    windows = np.lib.stride_tricks.sliding_window_view(xp, span, axis=tuple(range(2, 2 + n)))
    windows = windows[
        (slice(None),) * 2
        + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride))
        + tuple(slice(None, None, d) for d in dilation)
    ]
    windows = windows.reshape(x.shape[0], g, x.shape[1] // g, *windows.shape[2:])
    w = kernel.astype(np.float64).reshape(g, kernel.shape[0] // g, *kernel.shape[1:])
    o_, k_ = "xyz"[:n], "uvw"[:n]
    # einsum copies the windows it multiplies: a slice of output rows at a time bounds that copy.
    row_bytes = 8 * x.shape[0] * x.shape[1] * int(np.prod(out[1:])) * int(np.prod(kernel.shape[2:]))
    rows = max(1, REFERENCE_CHUNK_BYTES // max(row_bytes, 1))
    y = np.empty((x.shape[0], g, kernel.shape[0] // g, *out))
    for r in range(0, out[0], rows):
        y[:, :, :, r : r + rows] = np.einsum(
            f"ngc{o_}{k_},gkc{k_}->ngk{o_}", windows[:, :, :, r : r + rows], w, optimize=True
        )
    y = y.reshape(x.shape[0], kernel.shape[0], *out)
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * n)
    return y.astype(result_type())


def reciprocal(scale):
    """float32(1 / scale): what a quantize multiplies by. TensorRT's developer guide ("Working with Quantized
    Types") says quantization "uses the reciprocal scale, followed by rounding and clamping"; the API reference's
    round(x / scale) is the same up to the last bit, and that bit decides a tie: scale 0.1, x = −3.2500002 gives
    −32.5 by division (→ −32) and −32.500004 by the reciprocal (→ −33). PyTorch's fake_quantize, which TensorRT's
    quantization toolkits train with, also multiplies by the float32 reciprocal (bench/gpu_crosscheck.py checks it
    on the GPU)."""
    return np.float32(1) / np.asarray(scale, dtype=np.float32)


def quantize_int8(x, scale):
    """IQuantizeLayer to int8: clip(round_half_to_even(x · (1 / scale)), -128, 127) in float32 (`reciprocal`);
    scale broadcasts to x."""
    x, scale = np.asarray(x, dtype=np.float32), np.asarray(scale, dtype=np.float32)
    if not np.all(scale > 0):
        raise ValueError(f"quantize_int8: scale must be > 0, got {scale} for x shape {x.shape}")
    return np.clip(np.rint(x * reciprocal(scale)), -128, 127).astype(np.int8)


def dequantize(q, scale):
    """IDequantizeLayer: float32 q * scale; scale broadcasts to q."""
    return np.asarray(q, dtype=np.float32) * np.asarray(scale, dtype=np.float32)


def receptive_field(out_index, input_size, kernel_size, stride, dilation, pre_padding):
    """Input coordinates read by output position out_index, one tuple per kernel position (row-major).

    Coordinates outside [0, input_size) are padding.
    """
    return window_reader(input_size, kernel_size, stride, dilation, pre_padding)(out_index)


def window_reader(input_size, kernel_size, stride, dilation, pre_padding):
    """receptive_field of one window's geometry, checked once: a function of out_index (a read map asks it once per
    output cell, all of one geometry: checking the geometry again for each cell was most of its time)."""
    n = 1 if np.ndim(input_size) == 0 else len(input_size)

    def args(out_index=None):  # an error's only
        return ("" if out_index is None else f"out_index {out_index}, ") + (
            f"input_size {input_size}, kernel_size {kernel_size}, "
            f"stride {stride}, dilation {dilation}, pre_padding {pre_padding}"
        )

    try:
        _, K, S, D, B = (
            _ints(name, v, n)
            for name, v in zip(
                ("input_size", "kernel_size", "stride", "dilation", "pre_padding"),
                (input_size, kernel_size, stride, dilation, pre_padding),
            )
        )
    except ValueError as e:
        raise ValueError(f"receptive_field: {e}; {args()}") from None
    if min(B) < 0 or min(K + S + D) < 1:
        raise ValueError(f"receptive_field: negative padding or non-positive kernel/stride/dilation; {args()}")
    # each axis's offsets from the window's corner (ki * d), crossed in row-major order per output position
    axes = tuple((s, b, [ki * d for ki in range(k)]) for s, b, k, d in zip(S, B, K, D))

    def read(out_index):
        try:
            o = _ints("out_index", out_index, n)
        except ValueError as e:
            raise ValueError(f"receptive_field: {e}; {args(out_index)}") from None
        if min(o) < 0:
            raise ValueError(f"receptive_field: negative index; {args(out_index)}")
        return list(itertools.product(*([oi * s - b + off for off in offs] for oi, (s, b, offs) in zip(o, axes))))

    return read
