"""The colour rule (protocol.figure_ranges, its one owner): figures that share values share one range, so a cell is
matched across them by eye; an output of another kind keeps its own and says why under it."""

import numpy as np
import pytest

from playground.layers import get_layer
from playground.layers.elementwise import ARITHMETIC, COMPARISONS, LOGICAL
from playground.network.core import evaluate
from playground.serve import protocol


def _figures(layer: str, raw: dict, **kw) -> dict:
    ev = evaluate(layer, raw, None, run=False, build=False, **kw)
    return ev, {f["which"]: f for f in protocol.answer(get_layer(layer), ev)["figures"]}


def _own(a: np.ndarray) -> list[float]:
    return [float(a.min()), float(a.max())]


@pytest.mark.parametrize("op", ["SUM", "SUB", "MAX", "MIN"])
def test_an_elementwise_of_its_operands_kind_draws_operands_and_output_on_one_range(op):
    ev, figs = _figures("elementwise", {"operation": op})
    together = [
        min(_own(a)[0] for a in [*ev.inputs.values(), ev.output]),
        max(_own(a)[1] for a in [*ev.inputs.values(), ev.output]),
    ]
    assert figs["input"]["range"] == figs["input.b"]["range"] == figs["output"]["range"] == together
    assert "scale" not in figs["output"]
    if op == "SUM":  # −4…4 + 1…3 reaches 7, past either operand: the operands are drawn on the sum's range
        assert together[1] > max(_own(a)[1] for a in ev.inputs.values())


@pytest.mark.parametrize(
    "op", [o for o in ARITHMETIC if o not in ("SUM", "SUB", "MAX", "MIN")] + list(COMPARISONS + LOGICAL)
)
def test_an_elementwise_of_another_kind_keeps_the_outputs_own_range_and_says_why(op):
    ev, figs = _figures("elementwise", {"operation": op})
    out = figs["output"]
    finite = ev.output[np.isfinite(ev.output)]
    assert out["range"] == _own(finite)
    why = get_layer("elementwise").output_scale(ev.params)
    assert why and out["scale"] == why
    assert ("0 is false" in why) == (op in COMPARISONS + LOGICAL)
    # the operands keep the scale they share whatever the operation (−4…4 and 1…9 are alike): theirs alone
    operands = [min(_own(a)[0] for a in ev.inputs.values()), max(_own(a)[1] for a in ev.inputs.values())]
    assert figs["input"]["range"] == figs["input.b"]["range"] == operands != out["range"]


def test_a_concatenations_parts_and_output_share_one_range_however_far_apart_the_parts():
    ev, figs = _figures("concatenation", {"count": 4})
    ranges = {w: f["range"] for w, f in figs.items()}
    assert len({tuple(r) for r in ranges.values()}) == 1, ranges
    assert ranges["output"] == _own(ev.output)
    assert _own(ev.inputs["a"])[1] * 10 < ranges["output"][1]  # a part alone spans a tenth of the whole at most


@pytest.mark.parametrize(
    "layer, raw, together",
    [
        ("softmax", {}, False),  # 0…1 on an input's −4…4: its own
        ("activation", {"type": "RELU"}, True),  # within the input's range, its span alike
        ("slice", {}, True),  # its input's values
        ("convolution", {}, False),  # new values
    ],
)
def test_an_undeclared_layer_is_decided_by_its_values(layer, raw, together):
    _, figs = _figures(layer, raw)
    assert (figs["input"]["range"] == figs["output"]["range"]) is together
    assert "scale" not in figs["output"]


def test_indices_a_kernel_and_error_maps_keep_their_own_compare_modes_outputs_share():
    _, figs = _figures("gather", {})
    assert figs["output"]["range"] == figs["input"]["range"]
    idx = next(f for f in figs.values() if f.get("index"))
    assert idx["range"] != figs["output"]["range"]
    ev, figs = _figures("convolution", {"precision": "FP16"}, compare="FP32")
    assert figs["output"]["range"] == figs["compared"]["range"]
    assert (
        figs["kernel"]["range"] == _own(ev.params["kernel"]) or figs["kernel"]["range"][0] == figs["kernel"]["range"][1]
    )
    assert figs["difference"]["magnitude"] and figs["difference"]["range"] != figs["output"]["range"]


def _f(which: str, r, **kw) -> dict:
    return {"which": which, "range": r, **kw}


def test_figure_ranges_rule():
    figs = [_f("input", [-4, 4]), _f("output", [-2, 3])]  # within, alike: one range
    protocol.figure_ranges(figs)
    assert [f["range"] for f in figs] == [[-4, 4], [-4, 4]]
    figs = [_f("input", [-4, 4]), _f("output", [0, 1])]  # within, a ninth of the span: its own
    protocol.figure_ranges(figs)
    assert figs[1]["range"] == [0, 1]
    figs = [_f("input", [-4, 4]), _f("output", [0, 1])]  # …unless its values are its input's
    protocol.figure_ranges(figs, shares=True)
    assert figs[1]["range"] == [-4, 4]
    figs = [_f("input", [-4, 4]), _f("input.b", [1, 3]), _f("output", [-4, 12])]  # declared of their kind
    protocol.figure_ranges(figs, declared="")
    assert [f["range"] for f in figs] == [[-4, 12]] * 3
    figs = [_f("input", [1, 9]), _f("input.b", [100, 900]), _f("output", [0, 1])]  # declared apart, inputs unalike
    protocol.figure_ranges(figs, declared="own scale: why")
    assert [f["range"] for f in figs] == [[1, 9], [100, 900], [0, 1]] and figs[2]["scale"] == "own scale: why"
    figs = [_f("input", None), _f("output", [0, 2]), _f("compared", [0, 3])]  # nothing finite in the input
    protocol.figure_ranges(figs)
    assert [f["range"] for f in figs] == [None, [0, 3], [0, 3]]
