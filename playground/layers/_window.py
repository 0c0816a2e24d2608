"""Sliding windows: the geometry convolution, deconvolution and pooling share, and the channel groups of the
first two.

Per spatial axis: a window of `k` cells, `dilation` apart, stepping by `stride` over the input padded with
`pre` cells before and `post` after, under one of TensorRT's padding modes. The parameters are declared here
once (their TensorRT names, ranges and help), and so is the arithmetic: the padding in force, the output size,
the largest window that fits, and the input cells one output cell reads.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ..base import reference as ref
from ..base.errors import EMPTY_OUTPUT, Stricter
from ..base.params import Param

PADDING_MODES = ref.PADDING_MODES
PADDING_ALIASES = {"CAFFE_ROUND_DOWN": "EXPLICIT_ROUND_DOWN", "CAFFE_ROUND_UP": "EXPLICIT_ROUND_UP"}
MAX_PADDING = 16


def per_axis(name: str, default: int, help: str, low: int, high: int, optional: bool = False, **more) -> Param:
    """A per-spatial-axis ints parameter; its default repeated for every spatial axis of the input."""
    return Param(
        name,
        "ints",
        (lambda p, s: (default,) * (len(s) - 2)) if not optional else None,
        help,
        low=low,
        high=high,
        step=1,
        per_axis=True,
        optional=optional,
        **more,
    )


def padding_params(high: int = MAX_PADDING) -> tuple[Param, ...]:
    """stride_nd, padding_mode, padding_nd, pre_padding and post_padding, as every windowed layer has them. The
    mode comes before the padding it overrides: SAME_* pad to fit, so the explicit padding is unused there (its
    controls disabled, its note naming the mode)."""
    return (
        per_axis("stride_nd", 1, "Step of the window per spatial axis.", 1, 16, label="Stride"),
        Param(
            "padding_mode",
            "enum",
            "EXPLICIT_ROUND_DOWN",
            "How the output size and padding are computed; SAME_* take precedence over all explicit padding.",
            choices=PADDING_MODES,
            aliases=PADDING_ALIASES,
            label="Padding mode",
        ),
        per_axis(
            "padding_nd",
            0,
            "Cells added before and after each spatial axis.",
            0,
            high,
            label="Padding",
            used_when=explicit,
        ),
        per_axis(
            "pre_padding",
            0,
            "Cells before each spatial axis; replaces padding_nd's leading side when set.",
            0,
            high,
            optional=True,
            fallback="padding_nd",
            label="Padding before",
            used_when=explicit,
        ),
        per_axis(
            "post_padding",
            0,
            "Cells after each spatial axis; replaces padding_nd's trailing side when set.",
            0,
            high,
            optional=True,
            fallback="padding_nd",
            label="Padding after",
            used_when=explicit,
        ),
    )


def effective_padding(p: dict) -> tuple[tuple, tuple]:
    """pre/post padding before the padding mode applies: pre_padding/post_padding, where set,
    replace padding_nd (TensorRT's setPaddingNd sets both; setPre/PostPadding override one side)."""
    pre = p["pre_padding"] if p["pre_padding"] is not None else p["padding_nd"]
    post = p["post_padding"] if p["post_padding"] is not None else p["padding_nd"]
    return pre, post


def dilation(p: dict, rank: int) -> tuple:
    """dilation_nd, or 1 per spatial axis for a layer without one (pooling)."""
    return p.get("dilation_nd") or (1,) * rank


def geometry(p: dict, shape: tuple, window: str) -> tuple[tuple, tuple, tuple]:
    """(resolved pre, resolved post, output spatial size) per axis, as TensorRT computes them, for the window
    parameter `window` (kernel_size_nd, window_size_nd) over input `shape`."""
    return _geometry(*_window_args(p, shape, window))


def _window_args(p: dict, shape: tuple, window: str) -> tuple:
    """(spatial size, window, stride, dilation, pre, post, padding mode), hashable: what a window's geometry is of."""
    pre, post = effective_padding(p)
    args = (shape[2:], p[window], p["stride_nd"], dilation(p, len(p[window])), pre, post)
    return (*(v if isinstance(v, (int, np.integer)) else tuple(v) for v in args), p["padding_mode"])


@functools.lru_cache(maxsize=256)  # asked once per output cell (explain.hover_windows: every cell's window)
def _geometry(*args) -> tuple[tuple, tuple, tuple]:
    return ref.conv_padding(*args)


def unchanged_notes(p: dict, shape: tuple, window: str) -> list[str]:
    """Why a padding control set on the first touch draws what the default does, where it does: a side's override
    set to padding_nd's values; EXPLICIT_ROUND_UP where the division it rounds is exact (a stride of 1 always)."""
    out = [
        f"{name}, set to padding_nd's values {tuple(p['padding_nd'])}, changes nothing here: move one to change "
        f"that side alone."
        for name in ("pre_padding", "post_padding")
        if p.get(name) is not None and tuple(p[name]) == tuple(p["padding_nd"]) and explicit(p)
    ]
    return out + _rounding_note(p, shape, window) if window else out


def explicit(p: dict) -> bool:
    """Under an explicit padding mode: SAME_* pad to fit and ignore the explicit padding."""
    return not str(p.get("padding_mode") or "").startswith("SAME")


def _rounding_note(p: dict, shape: tuple, window: str) -> list[str]:
    if p["padding_mode"] != "EXPLICIT_ROUND_UP":
        return []
    pre, post = effective_padding(p)
    spans = [
        size + a + b - (1 + d * (k - 1))
        for size, k, d, a, b in zip(shape[2:], p[window], dilation(p, len(p[window])), pre, post)
    ]
    if any(span % s for span, s in zip(spans, p["stride_nd"])):
        return []
    return [
        "padding_mode EXPLICIT_ROUND_UP changes nothing here: on every axis (size + padding − the window's span) "
        "divides by the stride exactly, so there is nothing to round; a stride that leaves a remainder (2 on an "
        "odd span) shows the extra output row it adds."
    ]


def largest_window(p: dict, shape: tuple) -> tuple | None:
    """Per spatial axis, the largest window whose dilated span fits the padded input under the explicit padding
    modes (a slider's `offers`); None where SAME_* pad to fit any window."""
    if not str(p.get("padding_mode", "")).startswith("EXPLICIT"):
        return None
    pre, post = effective_padding(p)
    return tuple(
        max(1, (size + a + b - 1) // d + 1) for size, a, b, d in zip(shape[2:], pre, post, dilation(p, len(shape) - 2))
    )


def check_fits(fail, p: dict, shape: tuple, window: str) -> None:
    """Under the explicit padding modes the (dilated) window must fit the padded input on every axis."""
    if not p["padding_mode"].startswith("EXPLICIT"):
        return
    pre, post = effective_padding(p)
    for axis, (size, k, d, a, b) in enumerate(zip(shape[2:], p[window], dilation(p, len(p[window])), pre, post)):
        reach = 1 + d * (k - 1)
        if reach > size + a + b:
            name = "dilation_nd" if d > 1 else window
            span = "dilated window" if d > 1 else "window"
            raise fail(
                name,
                Stricter(
                    f"the {span} on spatial axis {axis} spans {reach} cells, more than the padded "
                    f"input ({size} + {a} + {b} = {size + a + b})",
                    EMPTY_OUTPUT,
                ),
                p[name],
            )


def cells_read(p: dict, shape: tuple, window: str, position: tuple) -> list[tuple]:
    """The input coordinates (spatial) output `position` reads, one per window cell in row-major order; outside
    [0, size) they are padding."""
    return _reader(*_window_args(p, shape, window))(position)


@functools.lru_cache(maxsize=256)  # one geometry's, asked once per output cell (the read map's every window)
def _reader(size, kernel, stride, dilation, pre, post, mode):
    return ref.window_reader(
        size, kernel, stride, dilation, _geometry(size, kernel, stride, dilation, pre, post, mode)[0]
    )


def window_cells(p: dict, window: str) -> list[tuple]:
    """Every position inside the window, row-major (the kernel's or the pooling window's own index)."""
    return list(itertools.product(*map(range, p[window])))


def groups_offered(p, shape):
    """The num_groups that divide both C and num_output_maps (convolution and deconvolution split both into
    groups): the only ones the groups slider offers."""
    return [
        g
        for g in range(1, min(shape[1], p["num_output_maps"]) + 1)
        if shape[1] % g == 0 and p["num_output_maps"] % g == 0
    ]


def groups_rule(groups, p, shape):
    if shape[1] % groups:
        return f"must divide the input channels C={shape[1]}"
    if p["num_output_maps"] % groups:
        return f"must divide num_output_maps={p['num_output_maps']}"
    return None


def kernel_preset(window_fn, kernel_shape):
    """A kernel preset defined on one spatial window (`window_fn(spatial shape)`), repeated over the kernel's two
    channel axes, whichever their order: the convolution's (K, C/G), the deconvolution's (C, K/G)."""

    def preset(p, shape):
        ks = kernel_shape(p, shape)
        return np.broadcast_to(window_fn(ks[2:]).astype(np.float32), ks).copy()

    return preset


def centre(ks):
    """1 at the window's centre (the lower middle of an even side), 0 elsewhere: the identity kernel."""
    w = np.zeros(ks)
    w[tuple(k // 2 for k in ks)] = 1.0
    return w


def kernel_and_bias(fail, p: dict, want: tuple, layout: str, note: str = "") -> tuple[np.ndarray, np.ndarray]:
    """The kernel in shape `want` and the bias, one per output map; a single value of either is repeated. A
    wrong count names its parameter and the kernel's `layout` (its axes, spelled out)."""
    maps, kernel = p["num_output_maps"], p["kernel"]
    if kernel.size == 1:
        kernel = np.full(want, kernel.ravel()[0], np.float32)
    if kernel.size != int(np.prod(want)):
        raise fail(
            "kernel", f"needs {layout} = {' × '.join(map(str, want))} = {int(np.prod(want))} values{note}", kernel
        )
    bias = p["bias"].ravel()
    if bias.size == 1:
        bias = np.full(maps, bias[0], np.float32)
    if bias.size != maps:
        raise fail("bias", f"needs 1 or num_output_maps={maps} values", p["bias"])
    return np.ascontiguousarray(kernel.reshape(want)), np.ascontiguousarray(bias)


def padding_named(p: dict, pre_wrong: bool, post_wrong: bool) -> str:
    """The padding parameter to name for a side found wrong: its override where set, else padding_nd."""
    return next(
        (n for n, wrong in (("pre_padding", pre_wrong), ("post_padding", post_wrong)) if wrong and p[n] is not None),
        "padding_nd",
    )


# The weighted windows' own parameters, as the convolution and the deconvolution both declare them.
# Counts a model's layer may have (ResNet's 2048 maps): the work budget bounds them; the sliders span a lesson's.
MAX_MAPS = 4096
OUTPUT_MAPS = Param(
    "num_output_maps", "int", 1, "Output channels K.", low=1, high=MAX_MAPS, step=1, slide=(1, 64), label="Output maps"
)
BIAS = Param(
    "bias",
    "array",
    [0.0],
    "One value per output map (or one for all).",
    low=-1e6,
    high=1e6,
    step=0.5,
    slide=(-100.0, 100.0),
    weight=True,
    label="Bias",
)
DILATION = per_axis("dilation_nd", 1, "Spacing between kernel taps per spatial axis.", 1, 16, label="Dilation")


def groups_param(what: str) -> Param:
    """num_groups, offering only the counts that divide C and num_output_maps; `what` names the layer's operation."""
    return Param(
        "num_groups",
        "int",
        1,
        f"Groups: input channels and output maps split into this many independent {what}.",
        low=1,
        high=MAX_MAPS,
        step=1,
        slide=(1, 64),
        rule=groups_rule,
        offers=groups_offered,
        label="Groups",
    )
