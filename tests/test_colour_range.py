"""More channels teach something: the spec pattern differs per channel, and the stage's answer carries a colour
range that never stretches rounding noise into colours."""

import json
from pathlib import Path

import numpy as np
import pytest

from playground.base.colours import colour_range
from playground.base.inputs import make_input, tile_pattern
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.serve import protocol

GROUPS = {"num_output_maps": 2, "num_groups": 2, "kernel": "powers_of_ten"}


def _answer(kind: str):
    x = make_input(kind, (1, 4, 6, 9), spec_fn=tile_pattern)
    ev = evaluate("convolution", GROUPS, x, run=False, build=False)
    return ev, {f["which"]: f for f in protocol.answer(get_layer("convolution"), ev)["figures"]}


def test_groups_lesson_on_alike_channels_is_drawn_constant():
    # [w, −w] on two alike channels: 0 up to float32 rounding of terms near 10⁵ (a few 10⁻¹² here)
    ev, figs = _answer("spec_repeat")
    assert np.abs(ev.output).max() < 1e-6 and np.ptp(ev.output) > 0  # the noise is there…
    assert figs["output"]["range"] == [0.0, 0.0]  # …and not given colours
    assert figs["input"]["range"] == [1.0, 9.0]


def test_groups_lesson_on_the_spec_pattern_teaches():
    ev, figs = _answer("spec")  # channel c is channel 0's digits shifted by c cells: the maps read x0 − x1, x2 − x3
    lo, hi = figs["output"]["range"]
    assert hi - lo > 1e4 and (lo, hi) == (float(ev.output.min()), float(ev.output.max()))
    assert not np.array_equal(ev.output[0, 0], ev.output[0, 1]) or not np.array_equal(ev.input[0, 0], ev.input[0, 2])


@pytest.mark.parametrize(
    "values, terms, drawn",
    [
        ([1.0, 1.0 + 2**-20], None, "constant"),  # 8 ε apart: noise of the values' own size
        ([1.0, 1.001], None, "spread"),
        ([0.0, 7.3e-12], 1e5, "constant"),  # noise of terms near 10⁵
        ([0.0, 7.3e-12], None, "spread"),  # with no terms behind it, a tiny tensor keeps its own scale
        ([0.0, 0.5], 1e5, "spread"),  # 0.5 is 64 000 ε of 10⁵ … 2⁻²³ · 16 · 10⁵ = 0.19: a real difference
        ([np.nan, np.inf, 3.0], None, "constant"),
    ],
)
def test_colour_range(values, terms, drawn):
    a = np.array(values, np.float32)
    r = colour_range(a, terms)
    assert (r[0] == r[1]) == (drawn == "constant")
    finite = a[np.isfinite(a)]
    assert finite.min() <= r[0] <= r[1] <= finite.max() or r[0] == r[1] == 0.0


def test_colour_range_of_nothing_finite():
    assert colour_range(np.array([np.nan, -np.inf])) is None


COLOUR_RULE = json.loads((Path(__file__).parent / "fixtures" / "colour_rule.json").read_text())["cases"]


@pytest.mark.parametrize("case", COLOUR_RULE, ids=[c["name"] for c in COLOUR_RULE])
def test_the_server_sends_the_colour_rules_range(case):
    """The server's half of the one colour rule: the range it sends for a tensor's values is the table's
    (tests/js/colour_rule.test.mjs holds heatmap.js to the scale it draws that range on)."""
    values = np.array([float(v) for v in case["values"]], np.float32)
    assert colour_range(values) == case["range"]


@pytest.mark.parametrize(
    "layer, raw, shares",
    [
        ("concatenation", {"count": 3}, True),  # its parts' values, side by side
        ("elementwise", {"operation": "MAX"}, True),
        ("elementwise", {"operation": "SUM"}, False),  # new values
        ("slice", {}, True),
        ("gather", {}, True),  # the data's values (the indices are not values)
        ("softmax", {}, False),
    ],
)
def test_an_output_drawing_its_inputs_values_is_marked_to_share_their_scale(layer, raw, shares):
    """An output whose every value is one of its data inputs' is found so (`shares_values`: protocol.figure_ranges
    draws it on their scale), and an input of indices is marked (`index`: a scale of its own)."""
    L = get_layer(layer)
    ev = evaluate(layer, raw, None, run=False, build=False)
    figs = {f["which"]: f for f in protocol.answer(L, ev)["figures"]}
    assert protocol.shares_values(L, ev) is shares
    assert {w for w, f in figs.items() if f.get("index")} == {protocol.input_figure(L, n) for n in L.index_inputs}
