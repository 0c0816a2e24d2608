"""The vocabulary of a layer's examples (`Layer.examples`): every example of the spec documents (000-004) and
the precision lessons, as `Preset`s. playground.network.presets finds them and compares outputs with them.

A `Preset` is one configuration: the parameters as the CLI would take them, the input it feeds, and what is
documented for it. A spec example has the output table the spec prints (typed as printed, `expected`) and the
output shape (`expected_shape`); a lesson states its error figures against FP64 (`errors`).

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

No TensorRT, no Streamlit and no layer here: data types and small helpers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .numbers import exact


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
CANCELLING = Tolerance(
    0.0, 0.05, "terms up to 9·10^4 cancel; float32 sums in another order leave a few ulps of 10^5 (0.0078 each)"
)


@dataclass(frozen=True, eq=False)  # eq=False: identity equality and hashing (the arrays are not hashable)
class Preset:
    name: str  # slug, unique within its layer
    layer: str
    title: str  # short English, e.g. "padding_nd = (1, 1)"
    params: dict  # raw values as the CLI takes them: strings, numbers, lists
    # make_input keywords: kind ("spec", "constant", …), shape, and the kind's own options; for a layer of several
    # inputs, {input name: those keywords}.
    input: dict
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

    @property
    def hand_derived(self) -> bool:
        """A layer the spec does not cover: its table is worked out by hand from TensorRT's documented rules."""
        return self.source.startswith(HAND_DERIVED)

    @property
    def kind(self) -> str:
        """What the page calls it: "Spec example", "Example" (hand-derived) or "Lesson"."""
        return "Lesson" if self.is_lesson else "Example" if self.hand_derived else "Spec example"

    @property
    def documented(self) -> str:
        """Whose output it states: "the spec", "the hand derivation" or "the lesson"."""
        return "the lesson" if self.is_lesson else "the hand derivation" if self.hand_derived else "the spec"

    @property
    def table_name(self) -> str:
        if self.hand_derived:
            return "the hand-derived table"
        return "the spec's table" if self.printed else "the values the spec's text implies"

    def __post_init__(self):
        if self.expected is not None:
            assert self.expected.shape == self.expected_shape, (self.name, self.expected.shape, self.expected_shape)

    @property
    def input_shape(self):
        """Its input's shape; {input name: shape} where `input` names several (a layer of several inputs)."""
        if "shape" not in self.input:
            return {n: tuple(i["shape"]) for n, i in self.input.items()}
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


def frozen(a) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float32)
    a.setflags(write=False)
    return a


def spec_input(shape) -> dict:
    return {"kind": "spec", "shape": tuple(shape)}


HAND_DERIVED = "hand-derived"  # the source of an example of a layer beyond the spec's five: "hand-derived: how"


def derived(layer, name, title, params, input, expected, how, note=None, tolerance=None) -> Preset:
    """An example of a layer the spec does not cover: `expected` is worked out by hand (`how` says from what)."""
    expected = frozen(expected)
    return Preset(
        name,
        layer,
        title,
        params,
        input,
        expected,
        expected.shape,
        tolerance or EXACT_HAND,
        f"{HAND_DERIVED}: {how}",
        note,
    )


EXACT_HAND = Tolerance(1e-6, 1e-6, "small sums and quotients, exact or within float32 rounding")
LESSON_SOURCE = "precision lesson (the playground's own; figures against the layer in FP64)"
ERRORS_RTOL = 1e-3  # the lesson states its figures to 4 significant digits


def lesson(layer, name, title, params, input, errors, note, shape=None) -> Preset:
    """A precision lesson: `errors` are the figures it states; `shape` its output's (default: the input's)."""
    shape = tuple(input["shape"]) if shape is None else tuple(shape)
    return Preset(
        name,
        layer,
        "Precision: " + title,
        params,
        input,
        None,
        shape,
        Tolerance(ERRORS_RTOL, 0.0, "the lesson's error figures, to 4 significant digits"),
        LESSON_SOURCE,
        note,
        printed=False,
        errors=errors,
    )


INF = float("inf")
