"""Every example of the spec documents (/work/shared/seeds, 000-004) as a named preset.

A `Preset` is one configuration the spec builds: the parameters as the CLI would take them,
the input it feeds, and what the spec prints for it: the output table (typed as printed,
`expected`) and the output shape (`expected_shape`). `compare` checks an output against it.

The tables are TensorRT's float32 results printed with NumPy's defaults, so float tables are
compared with rtol=1e-6: e.g. the spec prints 97831.27 where float32 rounding of the exact
97831.2654 is 97831.266, and 46513.277 for 46513.2798. Values that look truncated are not:
'45678.9', '4507.8' and '56089.' in the bottom rows of the padding tables, and
'45678.9 64597.8 56489.7 45678.9' in the ROUND_UP table, come from windows whose last kernel
row (weights 1e-2, 1e-3, 1e-4) lies on zero padding, so the decimals stop after one digit;
'23.056' (top-right corner of padding (1, 1)) is 0·1e4 + … + 2·10 + 3·1 + 5·1e-2 + 6·1e-3
exactly; '23056.09' is 23056.089 in float32.

Where the spec disagrees with its own arithmetic, the arithmetic wins and the preset's `note`
says so. Where the spec prints no table, `expected` is None (shape only) unless the values follow
from the spec's own words (e.g. "all elements are 0", "same as the initial example"); then
`printed` is False and the note says where they come from.

No TensorRT and no Streamlit here: this module is data plus two small functions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import reference as ref
from .inputs import make_input
from .layers import LAYERS, get_layer
from .numbers import exact

PRELU_DOC = "000_5872977bfab888fc.txt"
LEAKY_DOC = "001_59716ba8d3a90fcb.txt"
ACTIVATION_DOC = "002_9dc6f1f368def977.txt"
SCALE_DOC = "003_8e3a283905c31e21.txt"
CONV_DOC = "004_3ac7b230bbcaefc8.txt"


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    why: str = ""

    @property
    def text(self) -> str:
        if self.rtol == 0 and self.atol == 0:
            return "exact"
        return f"rtol={self.rtol:g}, atol={self.atol:g}"


FLOAT32_TABLE = Tolerance(1e-6, 0.0, "the spec prints TensorRT's float32 results to about 8 significant digits")
EXACT_SMALL = Tolerance(1e-6, 1e-6, "small values exact in float32; 1e-6 leaves room for a GPU's pow/multiply-add")
EXACT = Tolerance(0.0, 0.0, "integers: INT8 products summed exactly")
CANCELLING = Tolerance(0.0, 0.05, "terms up to 9·10^4 cancel; float32 sums in another order leave a few ulps of "
                                  "10^5 (0.0078 each)")


@dataclass(frozen=True, eq=False)  # eq=False: identity equality and hashing (the arrays are not hashable)
class Preset:
    name: str  # slug, unique within its layer
    layer: str
    title: str  # short English, e.g. "padding_nd = (1, 1)"
    params: dict  # raw values as the CLI takes them: strings, numbers, lists
    input: dict  # make_input keywords: kind ("spec", "constant", …), shape, and the kind's own options
    expected: np.ndarray | None  # the output table (read-only float32), or None: the spec prints the shape only
    expected_shape: tuple
    tolerance: Tolerance
    source: str  # seed file § section
    note: str | None = None  # where the spec's print is wrong, abbreviated, or not a table
    printed: bool = True  # expected is a table the spec prints (False: it follows from the spec's words)
    # A precision lesson (LESSONS): the error figures against FP64 it states (precision.errors' names), to
    # ERRORS_RTOL; None for the spec's examples.
    errors: dict | None = None

    @property
    def is_lesson(self) -> bool:
        return self.errors is not None

    def __post_init__(self):
        if self.expected is not None:
            assert self.expected.shape == self.expected_shape, (self.name, self.expected.shape, self.expected_shape)

    @property
    def input_shape(self) -> tuple:
        return tuple(self.input["shape"])

    def cli_args(self) -> list[str]:
        """`--set NAME=VALUE` arguments for `python -m playground run LAYER` (the input not included)."""
        return [a for name, value in self.params.items() for a in ("--set", f"{name}={_text(value)}")]


@dataclass(frozen=True)
class Comparison:
    matches: bool
    max_abs_diff: float | None  # None: values not compared (no table, or shapes differ)
    shape_ok: bool
    tolerance: str
    message: str


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(exact(v) for v in value)
    return exact(value) if isinstance(value, (int, float)) else str(value)


def table(text: str, shape: tuple) -> np.ndarray:
    """A spec table typed as whitespace-separated numbers, read-only float32 of `shape`."""
    a = np.array(text.split(), dtype=np.float32).reshape(shape)
    a.setflags(write=False)
    return a


def _frozen(a) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float32)
    a.setflags(write=False)
    return a


def _spec(shape) -> dict:
    return {"kind": "spec", "shape": tuple(shape)}


# --- 000 Parametric ReLU ---------------------------------------------------------------------
PRELU_TABLE = table("""
    -2.  -1.5 -1.  -0.5 0. 1. 2. 3. 4.
    -4.  -3.  -2.  -1.  0. 1. 2. 3. 4.
    -8.  -6.  -4.  -2.  0. 1. 2. 3. 4.""", (1, 3, 3, 3))

PRELU = [
    Preset("spec_per_channel", "prelu", "slopes (0.5, 1, 2) per channel",
           {"granularity": "channel", "slopes": "0.5,1,2"}, _spec((1, 3, 3, 3)), PRELU_TABLE, (1, 3, 3, 3),
           EXACT_SMALL, f"{PRELU_DOC} § 初始示例代码",
           note="The spec's table types the second cell of channel 0 as '-1.5.'; by its own arithmetic "
                "(-3 × 0.5) it is -1.5."),
]

# --- 001 leaky ReLU ----------------------------------------------------------------------------
LEAKY_TABLE = table("-0.4 -0.3 -0.2 -0.1 0. 1. 2. 3. 4.", (1, 1, 3, 3))
_LEAKY_TITLES = {
    "scale_relu_sum": "Scale(x·0.1) + Scale(ReLU(x)·0.9), ElementWise SUM",
    "activation": "ActivationType.LEAKY_RELU, alpha 0.1",
    "parametric_relu": "add_parametric_relu, one slope 0.1",
}
LEAKY_RELU = [
    Preset(c, "leaky_relu", _LEAKY_TITLES[c], {"alpha": 0.1, "construction": c}, _spec((1, 1, 3, 3)),
           LEAKY_TABLE, (1, 1, 3, 3), EXACT_SMALL, f"{LEAKY_DOC} § 实现方式",
           note="The spec (C++, no run) prints no input or output; the input is the activation spec's "
                "arange(-4, 5) and the values are leaky ReLU's definition, x if x ≥ 0 else 0.1·x. "
                "All three constructions must give them.", printed=False)
    for c in ("scale_relu_sum", "activation", "parametric_relu")
]

# --- 002 Activation ----------------------------------------------------------------------------
ACTIVATION = [
    Preset("relu", "activation", "ReLU", {"type": "RELU"}, _spec((1, 1, 3, 3)),
           table("0 0 0 0 0 1 2 3 4", (1, 1, 3, 3)), (1, 1, 3, 3), EXACT_SMALL,
           f"{ACTIVATION_DOC} § 2 TensorRT Activate 算子实现",
           note="The spec prints only the shapes (1, 1, 3, 3); the values are max(x, 0) of its input "
                "arange(-4, 5).", printed=False),
    Preset("clip", "activation", "CLIP, alpha = -2, beta = 2", {"type": "CLIP", "alpha": -2, "beta": 2},
           _spec((1, 1, 3, 3)), table("-2 -2 -2 -1 0 1 2 2 2", (1, 1, 3, 3)), (1, 1, 3, 3), EXACT_SMALL,
           f"{ACTIVATION_DOC} § 2 TensorRT Activate 算子实现",
           note="The spec shows the construction (type changed to CLIP, alpha -2, beta 2) but no output; "
                "the values are max(-2, min(2, x)) of arange(-4, 5).", printed=False),
]

# --- 003 Scale ---------------------------------------------------------------------------------
HALF_MINUS_7 = table("""
    -6.5 -6.  -5.5 -5.  -4.5 -4.  -3.5 -3.  -2.5
    -2.  -1.5 -1.  -0.5  0.   0.5  1.   1.5  2.
     2.5  3.   3.5  4.   4.5  5.   5.5  6.   6.5""", (1, 3, 3, 3))
SCALE_CHANNEL_TABLE = table("""
    -2. -1.5 -1. -0.5 0. 0.5 1. 1.5 2.
    -2. -1.5 -1. -0.5 0. 0.5 1. 1.5 2.
    -2. -1.5 -1. -0.5 0. 0.5 1. 1.5 2.""", (1, 3, 3, 3))


def _per_nc(values: str) -> np.ndarray:
    """The add_scale_nd tables: a (2, 2) grid of constants, each filling a 3×4 plane."""
    return _frozen(np.broadcast_to(table(values, (2, 2, 1, 1)), (2, 2, 3, 4)))


_ZEROS_2234 = {"kind": "constant", "shape": (2, 2, 3, 4), "value": 0.0}
SCALE = [
    Preset("uniform", "scale", "UNIFORM: scale 0.5, shift -7, power 1",
           {"mode": "UNIFORM", "scale": "0.5", "shift": "-7", "power": "1"}, _spec((1, 3, 3, 3)),
           HALF_MINUS_7, (1, 3, 3, 3), EXACT_SMALL, f"{SCALE_DOC} § 初始示例代码",
           note="The section 'mode & scale & shift & power' sets the same values as attributes and prints its "
                "output shape as '(3,3,3)', dropping N: it is (1, 3, 3, 3), as in the initial example."),
    Preset("channel", "scale", "CHANNEL: shift (-2.5, -7, -11.5)",
           {"mode": "CHANNEL", "scale": "0.5,0.5,0.5", "shift": "-2.5,-7,-11.5", "power": "1,1,1"},
           _spec((1, 3, 3, 3)), SCALE_CHANNEL_TABLE, (1, 3, 3, 3), EXACT_SMALL,
           f"{SCALE_DOC} § CHANNEL 和 ELEMENTWISE 级的 scale"),
    Preset("elementwise", "scale", "ELEMENTWISE: scale 0.5, shift -7 per element",
           {"mode": "ELEMENTWISE", "scale": "0.5", "shift": "-7", "power": "1"}, _spec((1, 3, 3, 3)),
           HALF_MINUS_7, (1, 3, 3, 3), EXACT_SMALL, f"{SCALE_DOC} § CHANNEL 和 ELEMENTWISE 级的 scale",
           note="The spec passes np.full((3, 3, 3), …) arrays; one value is broadcast to all 27 the same way. "
                "It prints no table but says the result equals the initial example's.", printed=False),
    Preset("channel_axis_0", "scale", "add_scale_nd CHANNEL, channel_axis = 0 (N)",
           {"mode": "CHANNEL", "channel_axis": 0, "scale": "1,1", "shift": "2,3", "power": "1,1"}, _ZEROS_2234,
           _per_nc("2 2 3 3"), (2, 2, 3, 4), EXACT_SMALL, f"{SCALE_DOC} § 使用 add_scale_nd 和 channel_axis"),
    Preset("channel_axis_1", "scale", "add_scale_nd CHANNEL, channel_axis = 1 (C)",
           {"mode": "CHANNEL", "channel_axis": 1, "scale": "1,1", "shift": "2,3", "power": "1,1"}, _ZEROS_2234,
           _per_nc("2 3 2 3"), (2, 2, 3, 4), EXACT_SMALL, f"{SCALE_DOC} § 使用 add_scale_nd 和 channel_axis"),
]

# --- 004 Convolution ---------------------------------------------------------------------------
# Shared by the default, kernel-attribute, num_groups and (summed) 3-D examples.
DEFAULT_TEXT = """
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679"""
CONV_DEFAULT = table(DEFAULT_TEXT, (1, 1, 4, 7))
STRIDE_2_2 = table("""
    12345.679 31264.598 23156.49 12345.679
    78912.34  97831.27  89723.16 78912.34""", (1, 1, 2, 4))
# The spec's CAFFE_ROUND_UP table (its numbers run together in the print: split here). The third
# row's window reads input rows 4, 5 and the zero row that ROUND_UP adds.
ROUND_UP = table("""
    12345.679 31264.598 23156.49 12345.679
    78912.34  97831.27  89723.16 78912.34
    45678.9   64597.8   56489.7  45678.9""", (1, 1, 3, 4))
PAD_1_1 = table("""
    1.2045    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456   23.056
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    4507.8    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9   56089.""", (1, 1, 6, 9))
PAD_1_0 = table("""
    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9""", (1, 1, 6, 7))
PAD_0_1 = table("""
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09""", (1, 1, 4, 9))
PRE_1_1 = table("""
    1.2045    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679""", (1, 1, 5, 8))
PRE_1_0 = table("""
    12.3456   23.1564   31.2645   12.3456   23.1564   31.2645   12.3456
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679""", (1, 1, 5, 7))
PRE_0_1 = table("""
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    4507.801  45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    7801.2046 78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    1204.5078 12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679""", (1, 1, 4, 8))
POST_1_1 = table("""
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9   56089.""", (1, 1, 5, 8))
POST_1_0 = table("""
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679
    45678.9   56489.7   64597.8   45678.9   56489.7   64597.8   45678.9""", (1, 1, 5, 7))
POST_0_1 = table("""
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09
    45678.914 56489.723 64597.832 45678.914 56489.723 64597.832 45678.914 56089.023
    78912.34  89723.16  97831.27  78912.34  89723.16  97831.27  78912.34  89023.055
    12345.679 23156.49  31264.598 12345.679 23156.49  31264.598 12345.679 23056.09""", (1, 1, 4, 8))
DILATION_2_2 = table("""
    13279.847 21387.955 32198.766 13279.847 21387.955
    46513.277 54621.387 65432.2   46513.277 54621.387""", (1, 1, 2, 5))
GROUPS_TABLE = _frozen(np.concatenate([CONV_DEFAULT, -CONV_DEFAULT], axis=1))  # printed in full, both signs
INT8_TABLE = table("""
    726  791  772  726  791  772  726
    1821 1886 1867 1821 1886 1867 1821
    2817 2882 2863 2817 2882 2863 2817
    726  791  772  726  791  772  726""", (1, 1, 4, 7))

_SPEC_2D = _spec((1, 1, 6, 9))
_SHAPE_ONLY = "The spec prints only the output shape {shape} for this example, no table."


def _conv(name, title, params, expected, shape, section, note=None, *, input=_SPEC_2D, tolerance=FLOAT32_TABLE,
          printed=True):
    if expected is None:
        note = _SHAPE_ONLY.format(shape=shape) + (" " + note if note else "")
    return Preset(name, "convolution", title, params, input, expected, shape, tolerance, f"{CONV_DOC} § {section}",
                  note, printed if expected is not None else False)


_STRIDE_SHAPE_NOTE = ("The spec prints this shape as '{printed}', dropping two dimensions: by its own arithmetic "
                      "it is {shape}.")
_ALIAS_NOTE = ("CAFFE_{kind} is TensorRT 8's name; TensorRT 10 has only EXPLICIT_{kind}, which the playground "
               "takes it as (the same output).")
CONVOLUTION = [
    _conv("default", "initial example (no attributes changed)", {}, CONV_DEFAULT, (1, 1, 4, 7), "初始示例代码",
          "The initial example's table is hand-adjusted to the ideal 12345.6789, 23156.4897, … (beyond float32, "
          "the spec says so); the values here are the raw float32 ones the spec prints for the same windows in "
          "the num_groups example. The reference reaches the ideal values within rtol 1e-7."),
    _conv("kernel_attributes", "num_output_maps, kernel_size_nd, kernel, bias set as attributes",
          {"num_output_maps": 1, "kernel_size_nd": "3,3",
           "kernel": [1e4, 1e3, 100, 10, 1, 0.1, 0.01, 0.001, 0.0001], "bias": "0"},
          CONV_DEFAULT, (1, 1, 4, 7), "num_output_maps & kernel_size_nd (kernel_size) & kernel & bias",
          "The spec prints no table: 'the result is the same as the initial example's'.", printed=False),
    _conv("stride_nd_2_2", "stride_nd = (2, 2)", {"stride_nd": "2,2"}, STRIDE_2_2, (1, 1, 2, 4), "stride_nd (stride)"),
    _conv("stride_nd_2_1", "stride_nd = (2, 1)", {"stride_nd": "2,1"}, None, (1, 1, 2, 7), "stride_nd (stride)",
          _STRIDE_SHAPE_NOTE.format(printed="(1,2,7)", shape=(1, 1, 2, 7))),
    _conv("stride_nd_1_2", "stride_nd = (1, 2)", {"stride_nd": "1,2"}, table("""
        12345.679 31264.598 23156.49  12345.679
        45678.914 64597.832 56489.723 45678.914
        78912.34  97831.27  89723.16  78912.34
        12345.679 31264.598 23156.49  12345.679""", (1, 1, 4, 4)), (1, 1, 4, 4), "stride_nd (stride)",
          _STRIDE_SHAPE_NOTE.format(printed="(1,4,4)", shape=(1, 1, 4, 4)) + " Its table, printed without the two "
          "outer brackets, is right."),
    _conv("padding_nd_1_1", "padding_nd = (1, 1)", {"padding_nd": "1,1"}, PAD_1_1, (1, 1, 6, 9), "padding_nd (padding)",
          "The OCR of the print reads '56089 023' in row 3; it is 56089.023."),
    _conv("padding_nd_1_0", "padding_nd = (1, 0)", {"padding_nd": "1,0"}, PAD_1_0, (1, 1, 6, 7),
          "padding_nd (padding)"),
    _conv("padding_nd_0_1", "padding_nd = (0, 1)", {"padding_nd": "0,1"}, PAD_0_1, (1, 1, 4, 9),
          "padding_nd (padding)"),
    _conv("pre_padding_1_1", "pre_padding = (1, 1)", {"pre_padding": "1,1"}, PRE_1_1, (1, 1, 5, 8), "pre_padding"),
    _conv("pre_padding_1_0", "pre_padding = (1, 0)", {"pre_padding": "1,0"}, PRE_1_0, (1, 1, 5, 7), "pre_padding"),
    _conv("pre_padding_0_1", "pre_padding = (0, 1)", {"pre_padding": "0,1"}, PRE_0_1, (1, 1, 4, 8), "pre_padding"),
    _conv("post_padding_1_1", "post_padding = (1, 1)", {"post_padding": "1,1"}, POST_1_1, (1, 1, 5, 8), "post_padding"),
    _conv("post_padding_1_0", "post_padding = (1, 0)", {"post_padding": "1,0"}, POST_1_0, (1, 1, 5, 7), "post_padding"),
    _conv("post_padding_0_1", "post_padding = (0, 1)", {"post_padding": "0,1"}, POST_0_1, (1, 1, 4, 8), "post_padding"),
    _conv("padding_mode_same_upper", "padding_mode = SAME_UPPER, stride (2, 2)",
          {"stride_nd": "2,2", "padding_mode": "SAME_UPPER"}, None, (1, 1, 3, 5), "padding_mode"),
    _conv("padding_mode_same_lower", "padding_mode = SAME_LOWER, stride (2, 2)",
          {"stride_nd": "2,2", "padding_mode": "SAME_LOWER"}, None, (1, 1, 3, 5), "padding_mode"),
    _conv("padding_mode_explicit_round_up", "padding_mode = EXPLICIT_ROUND_UP, stride (2, 2)",
          {"stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_UP"}, ROUND_UP, (1, 1, 3, 4), "padding_mode",
          "The spec prints only the shape here; the table is the one it prints for CAFFE_ROUND_UP, the same mode "
          "under TensorRT 8's name.", printed=False),
    _conv("padding_mode_explicit_round_down", "padding_mode = EXPLICIT_ROUND_DOWN, stride (2, 2)",
          {"stride_nd": "2,2", "padding_mode": "EXPLICIT_ROUND_DOWN"}, STRIDE_2_2, (1, 1, 2, 4), "padding_mode"),
    _conv("padding_mode_caffe_round_up", "padding_mode = CAFFE_ROUND_UP, stride (2, 2)",
          {"stride_nd": "2,2", "padding_mode": "CAFFE_ROUND_UP"}, ROUND_UP, (1, 1, 3, 4), "padding_mode",
          _ALIAS_NOTE.format(kind="ROUND_UP") + " The print runs the numbers of each row together "
          "('12345.67931264.59823156.4912345.679'); they are split here."),
    _conv("padding_mode_caffe_round_down", "padding_mode = CAFFE_ROUND_DOWN, stride (2, 2)",
          {"stride_nd": "2,2", "padding_mode": "CAFFE_ROUND_DOWN"}, STRIDE_2_2, (1, 1, 2, 4), "padding_mode",
          _ALIAS_NOTE.format(kind="ROUND_DOWN")),
    _conv("dilation_nd_2_2", "dilation_nd = (2, 2)", {"dilation_nd": "2,2"}, DILATION_2_2, (1, 1, 2, 5),
          "dilation_nd (dilation)"),
    _conv("dilation_nd_2_1", "dilation_nd = (2, 1)", {"dilation_nd": "2,1"}, None, (1, 1, 2, 7),
          "dilation_nd (dilation)"),
    _conv("dilation_nd_1_2", "dilation_nd = (1, 2)", {"dilation_nd": "1,2"}, None, (1, 1, 4, 5),
          "dilation_nd (dilation)"),
    _conv("num_groups_2", "num_groups = 2 (C = 2, kernel [w, −w])",
          {"num_output_maps": 2, "num_groups": 2, "kernel": "powers_of_ten"}, GROUPS_TABLE, (1, 2, 4, 7), "num_groups",
          "The powers_of_ten preset alternates the sign per output map, which is the spec's concatenate([w, -w]). "
          "The spec adds: in INT8 mode each group's channel counts must be multiples of 4.",
          input=_spec((1, 2, 6, 9))),
    _conv("conv_3d", "3-D: depth 2, kernel (2, 3, 3) = [w, −w]",
          {"kernel_size_nd": "2,3,3", "kernel": "powers_of_ten"},
          _frozen(np.zeros((1, 1, 1, 4, 7))), (1, 1, 1, 4, 7), "三维卷积的示例",
          "The spec prints no table: the two depth slices are the num_groups example's two channels summed, "
          "'all elements are 0'. The powers_of_ten preset alternates the sign per depth slice, the spec's "
          "concatenate([w, -w]).", input=_spec((1, 1, 2, 6, 9)), tolerance=CANCELLING, printed=False),
    _conv("int8", "INT8 quantize/dequantize, scale 1, weights through set_input", {"precision": "INT8", "quantize_scale": 1},
          INT8_TABLE, (1, 1, 4, 7), "set_input 用法",
          "Scale 1 leaves the input at 1…9 and rounds the kernel to 127 127 100 10 1 0 0 0 0 (clamped to int8): "
          "726 = 1·127 + 2·127 + 3·100 + 4·10 + 5·1. The spec's BuilderFlag.INT8 is not needed in TensorRT 10 "
          "(explicit Q/DQ).", tolerance=EXACT),
]

# --- precision lessons: what FP16, BF16, TF32, INT8 and FP8 do (not in the spec) ----------------------------
LESSON_SOURCE = "precision lesson (the playground's own; figures against the layer in FP64)"
ERRORS_RTOL = 1e-3  # the lesson states its figures to 4 significant digits
_RAMP_KNEE = {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -3.0, "high": 1.0}
_RAMP_4 = {"kind": "ramp", "shape": (1, 1, 8, 8), "low": -4.0, "high": 4.0}


def _lesson(layer, name, title, params, input, errors, note) -> Preset:
    shape = (1, 1, 4, 7) if layer == "convolution" else tuple(input["shape"])  # the spec input's 3×3 windows
    return Preset(name, layer, "Precision: " + title, params, input, None, shape,
                  Tolerance(ERRORS_RTOL, 0.0, "the lesson's error figures, to 4 significant digits"), LESSON_SOURCE,
                  note, printed=False, errors=errors)


INF = float("inf")
LESSONS: dict[str, list[Preset]] = {
    "convolution": [
        _lesson("convolution", "fp16_overflow", "FP16 overflows above 65504", {"precision": "FP16"}, _SPEC_2D,
                {"max_abs_error": INF, "max_rel_error": INF},
                "The spec's convolution in FP16. The third output row sums to 78912 … 97831, beyond FP16's largest "
                "value 65504: its 7 cells are +Inf. The others lose their decimals: FP16 steps by 8 between 8192 "
                "and 16384, so 12345.6789 becomes 12344, and the kernel's 10⁻⁴ is stored as 1.0014·10⁻⁴."),
        _lesson("convolution", "bf16_digits", "BF16 keeps the range, not the digits", {"precision": "BF16"},
                _SPEC_2D, {"max_abs_error": 169.7, "max_rel_error": 0.003004, "error_units": 0.3846},
                "The same convolution in BF16: float32's range (nothing overflows) with 8 significant bits. "
                "97831.27 lies where BF16 steps by 512, so the error reaches 170 although it is under half an ε "
                "(2⁻⁷) of the value: the digits the spec's powers-of-ten kernel spells are gone."),
        _lesson("convolution", "tf32_operands", "TF32 rounds the multiplies' operands", {"precision": "TF32"},
                _SPEC_2D, {"max_abs_error": 0.002144, "max_rel_error": 4.693e-8, "error_units": 4.806e-5},
                "TF32 (the builder's TF32 flag) rounds the input and the kernel to 10 mantissa bits and sums in "
                "FP32: 1 … 9 and 10⁴ … 1 are exact in it, 0.1, 0.01, 0.001 and 10⁻⁴ are not, so only the last "
                "digits move (a few thousandths). This is why the playground turns TF32 off for FP32."),
    ],
    "activation": [
        _lesson("activation", "selu_bf16_knee", "SELU near its knee in BF16", {"type": "SELU", "precision": "BF16"},
                _RAMP_KNEE, {"max_abs_error": 0.0118, "max_rel_error": 0.009075, "error_units": 1.162},
                "SELU on −3 … 1 in BF16: the input, alpha (1.6733) and beta (1.0507) are each rounded to 8 bits, "
                "and the output once more, so the error exceeds one ε (2⁻⁷) where the negative branch bends."),
        _lesson("activation", "gelu_bf16_knee", "GELU near its minimum in BF16",
                {"type": "GELU_ERF", "precision": "BF16"}, _RAMP_KNEE,
                {"max_abs_error": 0.002859, "max_rel_error": 0.01822, "error_units": 2.332},
                "GELU on −3 … 1 in BF16: around its minimum (x ≈ −0.75) and its zero the output is small while "
                "the input's rounding is not, so the relative error reaches 2.3 ε."),
        _lesson("activation", "int8_saturation", "INT8 with a scale too small saturates",
                {"type": "RELU", "precision": "INT8", "quantize_scale": 0.01}, _RAMP_4,
                {"max_abs_error": 2.73, "max_rel_error": 0.6825, "error_units": 273.0},
                "Scale 0.01 gives INT8 the range ±1.27: every input above 1.27 is clamped to 127 steps, so 4 "
                "comes out as 1.27 (error 2.73 = 273 steps). Scale 0 (from the data: amax/127) fixes it."),
        _lesson("activation", "fp8_from_data", "FP8 E4M3 with the scale from the data",
                {"type": "RELU", "precision": "FP8", "quantize_scale": 0}, _RAMP_4,
                {"max_abs_error": 0.127, "max_rel_error": 0.05263, "error_units": 0.4211},
                "FP8 E4M3 has 3 mantissa bits: with scale amax/448 every value keeps its range, and is rounded to "
                "within half an ε (2⁻³) of itself."),
    ],
}


PRESETS: dict[str, list[Preset]] = {
    "activation": ACTIVATION,
    "prelu": PRELU,
    "leaky_relu": LEAKY_RELU,
    "scale": SCALE,
    "convolution": CONVOLUTION,
}
assert set(PRESETS) <= set(LAYERS), set(PRESETS) - set(LAYERS)


def all_presets() -> list[Preset]:
    return [p for presets in PRESETS.values() for p in presets]


def examples(layer: str) -> list[Preset]:
    """What a layer page offers: the spec's examples, then the precision lessons."""
    return PRESETS.get(layer, []) + LESSONS.get(layer, [])


def all_lessons() -> list[Preset]:
    return [p for lessons in LESSONS.values() for p in lessons]


def find(layer: str, name: str) -> Preset:
    for p in examples(layer):
        if p.name == name:
            return p
    if layer not in PRESETS:
        raise KeyError(f"no presets for layer {layer!r}; layers with presets: {', '.join(PRESETS)}")
    raise KeyError(f"{layer} has no preset {name!r}; it has {', '.join(p.name for p in examples(layer))}")


def input_for(preset: Preset) -> np.ndarray:
    """The preset's input tensor (a fresh writable float32 array)."""
    options = dict(preset.input)
    kind, shape = options.pop("kind"), tuple(options.pop("shape"))
    return make_input(kind, shape, spec_fn=get_layer(preset.layer).example_input, **options)


def compare(preset: Preset, output, errors: dict | None = None) -> Comparison:
    """Does `output` (TensorRT's or the reference's) show what the spec prints for this preset? For a lesson:
    are `errors` (precision.errors of that output) the figures it states?"""
    out = np.asarray(output)
    tol = preset.tolerance
    shape_ok = tuple(out.shape) == tuple(preset.expected_shape)
    if not shape_ok:
        return Comparison(False, None, False, tol.text,
                          f"output shape {tuple(out.shape)} differs from the spec's {preset.expected_shape}")
    if preset.is_lesson:
        return _compare_errors(preset, errors or {})
    if preset.expected is None:
        return Comparison(True, None, True, tol.text,
                          f"shape {preset.expected_shape} as the spec prints; the spec prints no table for this "
                          f"example, so only the shape was compared")
    want = preset.expected.astype(np.float64)
    diff = ref.abs_diff(out, want)  # a NaN on one side only is a mismatch
    max_diff = float(diff.max()) if diff.size else 0.0
    bad = diff > tol.atol + tol.rtol * np.abs(want)
    what = "the spec's table" if preset.printed else "the values the spec's text implies"
    if not bad.any():
        within = "exactly" if tol.text == "exact" else f"within {tol.text}"
        return Comparison(True, max_diff, True, tol.text, f"matches {what} {within} (max |diff| {max_diff:.3g})")
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), bad.shape))
    return Comparison(False, max_diff, True, tol.text,
                      f"differs from {what} at {int(bad.sum())} of {bad.size} cells beyond {tol.text}; "
                      f"worst at {where}: got {out[where]!r}, expected {preset.expected[where]!r} "
                      f"(max |diff| {max_diff:.3g})")


def _compare_errors(preset: Preset, errors: dict) -> Comparison:
    off = []
    for name, want in preset.errors.items():
        got = errors.get(name)
        if got is None or not (got == want or abs(got - want) <= ERRORS_RTOL * abs(want)):
            off.append(f"{name} {got!r} (the lesson states {want:g})")
    if off:
        return Comparison(False, None, True, preset.tolerance.text, "error figures differ from the lesson's: "
                          + "; ".join(off))
    stated = ", ".join(f"{k} {v:g}" for k, v in preset.errors.items())
    return Comparison(True, None, True, preset.tolerance.text, f"error figures as the lesson states ({stated})")
