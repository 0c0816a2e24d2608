"""The Details tab under the stage (playground.ui.extras) through Streamlit's AppTest: each layer's section and the
picked output cell's terms, each with a real Evaluation from core.evaluate."""

import numpy as np
import pytest
from apptest import still_figures
from streamlit.testing.v1 import AppTest

from playground.base import numbers
from playground.layers import LAYERS, leaky_relu, prelu
from playground.network import core

TIMEOUT = 30


def _script(layer):
    """The app: one layer's Details tab, its raw parameters and picked cell from session state (a test changes
    them)."""
    import streamlit as st

    from playground.network import core
    from playground.ui import extras
    from playground.ui.view import ViewOptions

    evaluation = core.evaluate(layer, st.session_state.get("raw", {}))
    extras.details(
        evaluation, st.session_state.get("pick"), ViewOptions.of(False), lambda *a, **k: core.evaluate(*a, **k)
    )


def run(layer, raw=None, pick=None):
    at = AppTest.from_function(_script, args=(layer,), default_timeout=TIMEOUT)
    if raw:
        at.session_state["raw"] = raw
    if pick:
        at.session_state["pick"] = pick
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def sigma(at):
    """The picked cell's Σ note: a paragraph of the cell's text under the stage."""
    found = [p for m in at.markdown for p in m.value.split("\n\n") if "Σ =" in p]
    assert len(found) == 1, found
    return found[0]


def test_every_layer_draws_its_details_and_a_layer_that_explains_a_cell_names_it():
    for name, layer in LAYERS.items():
        at = run(name)
        cell = [p for m in at.markdown for p in m.value.split("\n\n") if p.startswith("**One output cell**")]
        assert bool(cell) == (layer.cell is not None), name
        if cell:
            index = (0,) * core.evaluate(name, {}).reference.ndim
            assert f"output{index} = " in cell[0], cell


def test_activation_shows_the_formula():
    at = run("activation", {"type": "CLIP"})
    assert [c.value for c in at.code] == ["y = max((-2), min(2, x))"]
    at = run("activation", {"type": "LEAKY_RELU", "alpha": 0.25})
    assert at.code[0].value == "y = x if x ≥ 0 else 0.25·x"


def test_leaky_relu_compares_three_constructions():
    at = run("leaky_relu", {"alpha": 0.2})
    text = " ".join(m.value for m in at.markdown)
    for label in leaky_relu.CONSTRUCTION_LABELS.values():
        assert label in text
    assert at.success and "agree" in at.success[0].value
    diff = at.dataframe[-1].value  # the pairwise max-difference table
    assert list(diff.columns) == ["construction", "activation", "parametric_relu", "scale_relu_sum"]
    if core.detect().can_build:
        assert len(at.dataframe) == 4  # each construction's engine layers, then the differences
        assert list(at.dataframe[0].value.columns) == ["name", "type", "tactic"]


def test_leaky_relu_latency_bars_and_fusion_note_where_a_gpu_timed_them(monkeypatch):
    real = core.evaluate
    fake_ms = {"activation": 0.011, "parametric_relu": 0.019, "scale_relu_sum": 0.012}

    def timed(layer, raw=None, x=None, **kw):  # as on a GPU that runs the engines
        result = real(layer, raw, x, **kw)
        result.latency_ms = fake_ms[result.params["construction"]]
        return result

    monkeypatch.setattr(core, "evaluate", timed)
    at = run("leaky_relu")
    assert at.info and at.info[0].value == prelu.FUSION_NOTE
    assert [c.key for c in at.get("plotly_chart")] == ["leaky_relu.extra.latency"]
    at.toggle(key="leaky_relu.extra.draw_outputs").set_value(True).run()  # the three outputs, on request
    assert [c.key for c in at.get("plotly_chart")] == ["leaky_relu.extra.latency"]  # a bar chart, no heatmap
    (drawn,) = still_figures(at).values()  # the stage's heatmaps, one row on one colour range
    assert [f["which"] for f in drawn["figures"]] == list(leaky_relu.CONSTRUCTION_LABELS)
    ranges = {tuple(f["range"]) for f in drawn["figures"]}
    together = np.concatenate([f["values"].ravel() for f in drawn["figures"]])
    assert ranges == {(float(together.min()), float(together.max()))}
    at = AppTest.from_function(_script, args=("leaky_relu",), default_timeout=TIMEOUT)
    monkeypatch.setattr(core, "evaluate", real)
    at.run()
    assert not at.info and any(prelu.FUSION_NOTE in c.value for c in at.caption)
    assert not at.get("plotly_chart")


def test_prelu_shows_the_broadcast():
    at = run("prelu")
    assert "slopes (1, 3, 1, 1) broadcast over input (1, 3, 3, 3)" in at.markdown[0].value
    assert at.code[0].value == "slopes(1, 3, 1, 1) = [0.5, 1, 2]"


def test_scale_formula_nan_note_and_coefficient_table():
    at = run("scale")
    assert at.code[0].value == "y = (x·0.5 + (-7))^1" and not at.warning
    at = run("scale", {"power": 0.5, "mode": "CHANNEL"})
    assert at.warning and at.warning[0].value.startswith("13 of 27 output cells are NaN")
    assert list(at.dataframe[0].value["applies to"]) == ["C = 0", "C = 1", "C = 2"]


def test_convolution_shape_table_and_default_cell():
    at = run("convolution")
    table = at.dataframe[0].value
    assert list(table["axis"]) == ["H", "W"] and list(table["output"]) == [4, 7]
    assert table["formula"][0] == "floor((6 + 0 + 0 − 3) / 1) + 1 = 4"
    assert any("In force now" in m.value for m in at.markdown)
    assert sigma(at).startswith("**Σ = 12345.68:")
    products = at.dataframe[-1].value
    assert list(products["w"]) == [0, 1, 2] * 3 and list(products["weight"])[:2] == [10000, 1000]
    assert len(products) == 9 and products["x·weight"].sum() == pytest.approx(12345.6789, rel=1e-6)


def test_convolution_the_picked_cell_changes_the_sum():
    at = run("convolution", pick=(0, 0, 0, 1))
    assert sigma(at).startswith("**Σ = 23156.49:")  # the spec table: window 2 3 1 / 5 6 4 / 8 9 7
    x = core.evaluate("convolution").reference
    assert sigma(run("convolution", pick=(0, 0, 1, 1))).startswith(f"**Σ = {numbers.precise(x[0, 0, 1, 1])}:")


def test_convolution_int8_groups_and_3d():
    at = run("convolution", {"int8": True})
    assert sigma(at).startswith("**Σ = 726:")
    assert {"x int8", "weight int8"} <= set(at.dataframe[-1].value.columns)

    x = np.random.default_rng(0).uniform(-1, 1, (1, 2, 3, 4, 5)).astype(np.float32)
    p = {"num_output_maps": 2, "num_groups": 2, "kernel": "random", "padding_nd": 1}
    at = AppTest.from_function(_script_3d, args=(x, p), default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    expected = core.evaluate("convolution", p, x).reference[0, 1, 0, 0, 0]
    assert sigma(at).startswith(f"**Σ = {numbers.precise(expected)}:") and "input channel 1" in sigma(at)
    assert list(at.dataframe[0].value["axis"]) == ["D", "H", "W"]


def _script_3d(x, p):
    from playground.network import core
    from playground.ui import extras
    from playground.ui.view import ViewOptions

    extras.details(core.evaluate("convolution", p, x), (0, 1, 0, 0, 0), ViewOptions.of(True), core.evaluate)
