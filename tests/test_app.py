"""The Streamlit app through AppTest: every page renders, every kind of widget changes what is
shown, invalid combinations are reported without a traceback and the last result stays, stale.

The numbers checked are the ones the page prints as text: the shape line, the heatmaps' stats
captions ("shape … · min … · max …") and the engine panel.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from playground.layers import LAYERS

from apptest import figure_captions, heatmaps, open_tab, switch_to_layer

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 30  # the first TensorRT build in a process takes about a second; a loaded CI box more


def open_page(layer: str, **query) -> AppTest:
    """A fresh session opening /layer?query (the home page runs first: app.py registers the pages)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    switch_to_layer(at, layer)
    at.query_params.update(query)  # set before the page first runs, as opening a link does
    at.run()
    assert not at.exception, at.exception
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def text(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "error", "warning", "info") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def stats(at: AppTest) -> tuple[str, str]:
    """The input's and the output's stats captions (the stage draws the input first, the output last; a layer's own
    stage tensors, the convolution's kernel, between them)."""
    found = [c for c in figure_captions(at) if c.startswith("shape (")]
    assert len(found) >= 2, found
    return found[0], found[-1]


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_page_renders_defaults_with_engine_panel(layer):
    at = open_page(layer)
    assert not at.error, [e.value for e in at.error]
    shown = text(at)
    x = tuple(LAYERS[layer].example_shape)
    assert f"Input {x} → Output" in shown
    assert "| engine | engine size |" not in shown  # only the open tab under the stage is drawn: Explanation
    shown = text(rerun(open_tab(at, layer, "Engine")))
    assert f"Input {x} → Output" in shown
    assert "tensorrt_rtx" in shown or "tensorrt" in shown or "numpy" in shown  # the backend line
    assert "Output shown: **" in shown and "device: **" in shown
    assert "| engine | engine size |" in shown
    assert "Build time **" in shown


def test_home_page_describes_backend_and_lists_layers():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert {"Backend", "Version", "Builds engines", "Runs engines", "Device"} <= set(metrics)
    for layer in LAYERS.values():
        assert layer.summary in text(at)


def test_every_layer_has_a_page_made_from_the_registry():
    """No file per layer: each declared layer's page exists at /NAME and draws that layer (its title block)."""
    assert sorted(p.name for p in (Path(APP).parent / "app_pages").glob("*.py")) == ["home.py"]
    for name, layer in LAYERS.items():
        at = open_page(name)
        assert f"### {layer.title}" in [m.value for m in at.markdown], name
        assert not at.error, (name, [e.value for e in at.error])
        assert any(m.value.startswith("**Input ") for m in at.markdown), name  # the stage drew its figures


def test_selectbox_activation_type_clip_changes_output():
    at = open_page("activation")
    assert "min 0 · max 4" in stats(at)[1]  # RELU of -4..4
    at.select_slider(key="activation.type").set_value("CLIP")
    rerun(at)
    assert "min -2 · max 2" in stats(at)[1]
    assert "y = max((-2), min(2, x))" in text(at)


def test_dependent_defaults_reset_when_type_changes():
    at = open_page("activation")
    assert at.number_input(key="activation.alpha").disabled  # unused by RELU, shown, not hidden
    assert "(unused by RELU)" in text(at)
    at.select_slider(key="activation.type").set_value("HARD_SIGMOID")
    rerun(at)
    assert at.number_input(key="activation.alpha").value == pytest.approx(0.2)
    assert at.number_input(key="activation.beta").value == pytest.approx(0.5)
    assert not at.number_input(key="activation.alpha").disabled


def test_activation_alpha_changes_leaky_relu_output():
    at = open_page("activation")
    at.select_slider(key="activation.type").set_value("LEAKY_RELU")
    rerun(at)
    assert "min -0.04 " in stats(at)[1]
    at.number_input(key="activation.alpha").set_value(0.5)
    rerun(at)
    assert "min -2 " in stats(at)[1]


def test_slider_leaky_relu_alpha_and_construction():
    at = open_page("leaky_relu")
    assert "min -0.4 " in stats(at)[1]
    at.slider(key="leaky_relu.alpha").set_value(0.25)
    rerun(at)
    assert "min -1 " in stats(at)[1]
    at.select_slider(key="leaky_relu.construction").set_value("parametric_relu")
    rerun(at)
    assert "min -1 " in stats(at)[1] and not at.error


def test_per_axis_stride_changes_output_shape():
    at = open_tab(open_page("convolution"), "convolution", "Engine")
    assert "Output (1, 1, 4, 7)" in text(at)
    at.slider(key="convolution.stride_nd.h").set_value(2)
    at.slider(key="convolution.stride_nd.w").set_value(2)
    rerun(at)
    assert "Input (1, 1, 6, 9) → Output (1, 1, 2, 4)" in text(at)
    assert "| (1, 1, 2, 4) |" in text(at)  # TensorRT's own shape inference agrees


def test_optional_per_axis_override():
    at = open_page("convolution")
    assert at.slider(key="convolution.pre_padding.h").disabled
    at.checkbox(key="convolution.pre_padding.set").check()
    rerun(at)
    at.slider(key="convolution.pre_padding.h").set_value(1)
    at.slider(key="convolution.pre_padding.w").set_value(1)
    rerun(at)
    assert "Output (1, 1, 5, 8)" in text(at)  # the spec's pre_padding (1, 1) example


def test_precision_int8_changes_values():
    at = open_page("convolution")
    assert "min 12345.68" in stats(at)[1]
    assert "(only with precision INT8 or FP8)" in text(at)  # quantize_scale
    at.select_slider(key="convolution.precision").set_value("INT8")
    rerun(at)
    assert "min 726 " in stats(at)[1]  # the spec's INT8 table: the kernel quantizes to 127 127 100 …


def test_array_preset_changes_prelu_output():
    at = open_page("prelu")
    assert "min -8 " in stats(at)[1]  # spec slopes 0.5, 1, 2
    assert [at.slider(key=f"prelu.slopes.{i}").value for i in range(3)] == [0.5, 1.0, 2.0]
    at.selectbox(key="prelu.slopes.preset").select("leaky")
    rerun(at)
    assert "min -0.4 " in stats(at)[1]
    assert at.text_input(key="prelu.slopes").value == "leaky"


def test_array_per_value_edit_becomes_custom_numbers():
    at = open_page("prelu")
    at.slider(key="prelu.slopes.2").set_value(1.0)
    rerun(at)
    assert at.text_input(key="prelu.slopes").value == "0.5, 1, 1"
    assert at.selectbox(key="prelu.slopes.preset").value == "custom"
    assert "min -4 " in stats(at)[1]


def test_segmented_granularity_and_scale_channel_inputs():
    at = open_page("prelu")
    at.select_slider(key="prelu.granularity").set_value("element")
    rerun(at)
    assert at.text_input(key="prelu.slopes").value == "spec"  # the preset follows the new slope shape
    assert "mean 0.05556 " in stats(at)[1]  # 0.5, 1, 2 cycled over elements, not channels (mean -0.1852)
    at = open_page("scale")
    at.select_slider(key="scale.mode").set_value("CHANNEL")
    rerun(at)
    assert at.number_input(key="scale.shift.2").value == -7.0  # the single shift, broadcast per channel
    at.number_input(key="scale.shift.2").set_value(0.0)
    rerun(at)
    assert at.text_input(key="scale.shift").value == "-7, -7, 0"
    assert "max 13.5 " in stats(at)[1]  # channel 2: 27·0.5 + 0


def test_array_as_text_with_wrong_count_names_the_param():
    at = open_page("scale")
    at.text_input(key="scale.shift").input("1, 2")
    rerun(at)
    assert any("scale.shift:" in e.value for e in at.error)


def test_input_shape_and_kind_change_the_output():
    at = open_page("convolution")
    at.number_input(key="convolution.input.H").set_value(8)
    at.number_input(key="convolution.input.W").set_value(10)
    rerun(at)
    assert "Input (1, 1, 8, 10) → Output (1, 1, 6, 8)" in text(at)
    at.selectbox(key="convolution.input.kind").select("constant")
    rerun(at)
    assert at.number_input(key="convolution.input.value").value == 1.0
    assert "min 11111.11 · max 11111.11" in stats(at)[1]  # the sum of the powers-of-ten kernel


def test_3d_toggle_runs_the_spec_3d_example():
    at = open_page("convolution")
    at.toggle(key="convolution.input.3d").set_value(True)
    rerun(at)
    # Depth 2 and a kernel whose depth slices are w and −w: the spec's cancelling 3-D example.
    assert "Input (1, 1, 2, 6, 9) → Output (1, 1, 1, 4, 7)" in text(at)
    assert at.slider(key="convolution.kernel_size_nd.d").value == 2


def test_groups_slider_offers_divisors_and_a_stale_value_is_named():
    at = open_page("convolution")
    assert at.select_slider(key="convolution.num_groups").options == ["1"]  # C = 1: one group only
    at.number_input(key="convolution.input.C").set_value(4)
    at.slider(key="convolution.num_output_maps").set_value(6)
    rerun(at)
    assert at.select_slider(key="convolution.num_groups").options == ["1", "2"]  # divisors of C=4 and K=6
    at.select_slider(key="convolution.num_groups").set_value(2)
    rerun(at)
    assert not at.error
    at.number_input(key="convolution.input.C").set_value(3)  # 2 no longer divides C: kept, and named
    rerun(at)
    assert at.select_slider(key="convolution.num_groups").value == 2
    errors = [e.value for e in at.error]
    assert any("convolution.num_groups: must divide the input channels C=3" in e for e in errors), errors
    assert any("Showing the last valid configuration" in e for e in errors)
    assert "Input (1, 4, 6, 9) → Output (1, 6, 4, 7)" in text(at)  # the last good result is still there


def test_kernel_slider_stays_within_the_padded_input_and_dilation_past_it_is_named():
    at = open_page("convolution")
    assert at.slider(key="convolution.kernel_size_nd.h").max == 6  # H = 6, no padding
    at.slider(key="convolution.padding_nd.h").set_value(1)
    rerun(at)
    assert at.slider(key="convolution.kernel_size_nd.h").max == 8
    at.slider(key="convolution.padding_nd.h").set_value(0)
    at.slider(key="convolution.dilation_nd.h").set_value(4)  # 1 + 4·(3 − 1) = 9 > 6: the kernel is kept, the rule named
    rerun(at)
    assert at.slider(key="convolution.kernel_size_nd.h").value == 3
    assert any("convolution.dilation_nd:" in e.value and "Showing the last valid configuration" in e.value
               for e in at.error), [e.value for e in at.error]
    assert "Output (1, 1, 6, 7)" in text(at)  # the last valid one: padding 1
    at.slider(key="convolution.dilation_nd.h").set_value(1)  # fixing it clears the error
    rerun(at)
    assert not at.error and not at.warning


def test_image_upload_becomes_the_input():
    at = open_page("activation")
    at.selectbox(key="activation.input.kind").select("image")
    rerun(at)
    assert any("upload" in e.value for e in at.error)  # nothing uploaded yet: said, not raised
    assert "Output (1, 1, 3, 3)" in text(at)
    at.file_uploader(key="activation.input.image").upload("white.png", png(255), "image/png")
    rerun(at)
    assert not at.error
    assert "min 1 · max 1" in stats(at)[0]  # white, as luminance in [0, 1]
    at.file_uploader(key="activation.input.image").set_value(("broken.png", b"not a png", "image/png"))
    rerun(at)
    assert any("upload: not a PNG or JPEG" in e.value for e in at.error)


def png(grey: int) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (4, 4), grey).save(buf, format="PNG")
    return buf.getvalue()


def test_shared_scale_default_and_view_toggles():
    at = open_page("convolution")
    assert at.toggle(key="convolution.view.shared_scale").value is False  # 9 in, 97831 out: own scales
    at.toggle(key="view.presenter").set_value(True)
    rerun(at)
    assert "Output (1, 1, 4, 7)" in text(at)
    assert open_page("activation").toggle(key="activation.view.shared_scale").value is True


def test_engine_failure_shows_tensorrt_message(monkeypatch):
    from playground.ui import page

    real = page.evaluate

    def failing(*args, **kwargs):
        ev = real(*args, **kwargs)
        ev.engine_status, ev.error = "failed", "TensorRT rejected the network: no tactic found"
        return ev

    monkeypatch.setattr(page, "evaluate", failing)
    at = rerun(open_tab(open_page("leaky_relu"), "leaky_relu", "Engine"))
    assert any("TensorRT said: TensorRT rejected the network: no tactic found" in e.value for e in at.error)
    assert "| failed |" in text(at)
    assert "Output (1, 1, 3, 3)" in text(at)  # the reference is still drawn


def test_unexpected_exception_is_an_error_line_not_a_traceback(monkeypatch):
    from playground.ui import page

    monkeypatch.setattr(page, "evaluate", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("disk on fire")))
    at = open_page("scale")
    assert any("Unexpected error (RuntimeError): disk on fire" in e.value for e in at.error)


def _configured_page():
    import streamlit as st

    from playground.layers import get_layer
    from playground.ui.page import layer_page
    from playground.ui.widgets import write_config

    if "configured" not in st.session_state:  # once, before the widgets exist, as a preset or URL would
        write_config(get_layer("convolution"), {"stride_nd": "2,2", "kernel": "box_mean"},
                     {"kind": "constant", "shape": (1, 1, 6, 9), "value": 2.0})
        st.session_state.configured = True
    layer_page("convolution")


def _plan_page(layer_name: str, shape: tuple) -> None:
    import streamlit as st
    from playground.layers import get_layer
    from playground.ui import widgets

    st.session_state["plan"] = widgets.controls_plan(get_layer(layer_name), shape)


def plan(layer: str, shape: tuple, values: dict) -> dict:
    """widgets.controls_plan with the widgets holding `values` (widget key -> value)."""
    at = AppTest.from_function(_plan_page, args=(layer, shape), default_timeout=TIMEOUT)
    for k, v in values.items():
        at.session_state[k] = v
    found = at.run().session_state["plan"]
    assert list(found) == list(LAYERS[layer].param_names)
    return found


def redrawn(layer: str, shape: tuple, change: dict, before: dict | None = None) -> set[str]:
    """The parameters whose controls a change (widget key -> value, from `before`) redraws beside the stage: those
    whose controls_plan entry it changes."""
    a, b = plan(layer, shape, before or {}), plan(layer, shape, {**(before or {}), **change})
    return {name for name in a if a[name] != b[name]}


def test_a_change_redraws_only_the_controls_it_changes():
    conv = (1, 1, 6, 9)
    assert redrawn("convolution", conv, {"convolution.stride_nd.w": 2}) == set()  # the stage alone
    assert redrawn("convolution", conv, {"convolution.padding_nd.h": 1}) == {"kernel_size_nd"}  # its slider's top
    # the kernel's values as shown follow its size
    assert redrawn("convolution", conv, {"convolution.kernel_size_nd.w": 2}) >= {"kernel"}
    # a rule broken: named under the parameter (and gone again when undone); dilation also bounds the kernel
    broken = plan("convolution", conv, {"convolution.dilation_nd.h": 4})
    assert "convolution.dilation_nd:" in broken["dilation_nd"][-1] and broken["stride_nd"][-1] is None
    assert redrawn("convolution", conv, {"convolution.dilation_nd.h": 4}) == {"dilation_nd", "kernel_size_nd"}
    assert redrawn("convolution", conv, {"convolution.dilation_nd.h": 1}, {"convolution.dilation_nd.h": 4}) == \
        {"dilation_nd", "kernel_size_nd"}
    # a choice that makes parameters unused (their note) or used
    assert redrawn("activation", (1, 1, 3, 3), {"activation.type": "SELU"}) >= {"alpha", "beta"}
    assert redrawn("leaky_relu", (1, 1, 3, 3), {"leaky_relu.alpha": 0.5}) == set()
    # a precision step: quantize_scale's note names the precisions that use it, so it stays
    assert redrawn("convolution", conv, {"convolution.precision": "TF32"}) == set()
    assert redrawn("convolution", conv, {"convolution.precision": "INT8"}) == {"quantize_scale"}  # now used


def test_write_config_sets_every_control():
    at = AppTest.from_function(_configured_page, default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Input (1, 1, 6, 9) → Output (1, 1, 2, 4)" in text(at)
    assert "min 2 · max 2" in stats(at)[1]  # the mean of a constant 2
    assert at.selectbox(key="convolution.kernel.preset").value == "box_mean"
    assert at.selectbox(key="convolution.input.kind").value == "constant"


def test_input_pattern_names_are_plain_for_links():
    """The pattern selectbox shows the kinds' own names (a bound selectbox's URL value is what it shows),
    with a caption describing the chosen one."""
    from playground.inputs import KINDS

    at = open_page("scale")
    assert at.selectbox(key="scale.input.kind").options == list(KINDS)
    at.selectbox(key="scale.input.kind").select("random")
    rerun(at)
    assert any(c.value == "uniform between low and high, seeded" for c in at.caption)


def outlines(at: AppTest) -> tuple[dict, list]:
    """The cells outlined on the convolution page's heatmaps: input (h, w) -> line dash, and the output's (h, w)."""
    specs = heatmaps(at)
    window = {(h, w): "solid" if inside else "dash" for p in specs["convolution.figure.input"]["panels"]
              for h, w, inside in p["outlines"]}
    return window, [tuple(p["selected"]) for p in specs["convolution.figure.output"]["panels"] if p["selected"]]


def test_convolution_outlines_the_picked_cell_and_its_window_on_the_heatmaps():
    at = open_page("convolution")
    window, picked = outlines(at)
    assert picked == [(0, 0)] and window == {(h, w): "solid" for h in range(3) for w in range(3)}
    at.number_input(key="convolution.extra.w").set_value(2).run()
    window, picked = outlines(at)
    assert picked == [(0, 2)] and set(window) == {(h, w) for h in range(3) for w in range(2, 5)}
    at.slider(key="convolution.padding_nd.h").set_value(1)
    at.slider(key="convolution.padding_nd.w").set_value(1)
    rerun(at)
    window, picked = outlines(at)
    assert picked == [(0, 2)]  # (0, 2) reads rows -1..1: the padding row is dashed
    assert window == {(h, w): "dash" if h < 0 else "solid" for h in range(-1, 2) for w in range(1, 4)}
    assert sum("Σ =" in m.value for m in at.markdown) == 1


def test_cached_figures_make_their_dict_once_and_serialise_unchanged():
    import numpy as np
    import plotly.io as pio

    from playground import plots
    from playground.ui.state import frozen

    x = np.arange(54, dtype=np.float32).reshape(1, 1, 6, 9)
    fig = frozen(plots.tensor_figure(x, title="t")[0])
    assert fig.to_dict() is fig.to_dict()  # st.plotly_chart's per-run deep copy, made once
    assert json.loads(pio.to_json(fig)) == json.loads(pio.to_json(plots.tensor_figure(x, title="t")[0]))


def test_large_convolution_outlines_only_on_request():
    at = open_page("convolution", **{"convolution.input.H": "80", "convolution.input.W": "80"})  # 6400 cells a slice
    window, picked = outlines(at)
    assert not window and not picked  # each change would otherwise redraw the large input heatmap
    at.toggle(key="convolution.extra.outline").set_value(True).run()
    window, picked = outlines(at)
    assert picked == [(0, 0)] and set(window) == {(h, w) for h in range(3) for w in range(3)}
    assert not at.exception


def test_the_first_page_moves_startup_objects_out_of_the_collectors_sight():
    """app.py calls state.freeze_startup_objects after the page: Python's full collections then skip the
    long-lived objects of TensorRT, NumPy and Plotly (runner.postScriptGC is off for the same cost)."""
    import gc

    from playground.ui import state

    state.freeze_startup_objects.clear()  # once per process: an earlier test's page may have frozen already
    gc.unfreeze()
    open_page("activation")
    assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()


def test_kernel_along_one_axis_gets_a_slider_per_value():
    """A 3 × 1 kernel is three values along one axis: one slider and exact box each (weights have no bounds)."""
    at = open_page("convolution", **{"convolution.kernel_size_nd.w": "1"})
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [at.number_input(key=f"convolution.kernel.{i}").value for i in range(3)] == pytest.approx([10.0, 1.0, 0.1])
    at.slider(key="convolution.kernel.1.slide").set_value(2.0)
    rerun(at)
    assert at.text_input(key="convolution.kernel").value == "10, 2, 0.1"
