"""The Streamlit app through AppTest: every page renders, the page hands its stage the configuration its link
holds and a live seat, every kind of parameter changes what the route answers, the sidebar's input and view
controls start the stage afresh, and invalid combinations are named without a traceback.

The numbers checked are the ones the stage draws: the shape line and the tensors of the route's answer (the stage
writes their stats lines from them), and the tabs under the stage (engine panel, downloads, the example)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from apptest import (
    APP,
    TIMEOUT,
    ask,
    control,
    open_page,
    open_tab,
    paint,
    rerun,
    settle,
    stage_data,
    switch_to_layer,
    tensor,
    text,
)
from streamlit.testing.v1 import AppTest

from playground.layers import LAYERS
from playground.serve import server


def output(reply: dict) -> np.ndarray:
    assert "answer" in reply, reply
    return tensor(reply["answer"], "output")


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_page_hands_its_stage_the_defaults_and_shows_the_engine_panel(layer):
    at = open_page(layer)
    assert not at.error, [e.value for e in at.error]
    data = stage_data(at)
    used = LAYERS[layer].used_inputs(LAYERS[layer].defaults())  # the inputs the defaults read
    shapes = [f"{n.upper()} {LAYERS[layer].input_shape(n)}" for n in used]
    x = " · ".join(shapes) if LAYERS[layer].several else f"Input {tuple(LAYERS[layer].example_shape)}"
    assert data["answer"]["shapes"].startswith(f"{x} → Output (")
    assert data["describe"]["title"] == LAYERS[layer].title and data["problem"] is None
    if LAYERS[layer].section:  # the Details tab opens first; of the tabs only the open one is drawn
        assert "| engine | engine size |" not in text(at)
    shown = text(rerun(open_tab(at, layer, "Engine")))
    assert "Output shown: **" in shown and "device: **" in shown
    assert "| engine | engine size |" in shown and "Build time **" in shown
    if LAYERS[layer].onnx is not None:  # ONNX Runtime's verdict, judged cell by cell, with its worst cell
        assert "cell by cell" in shown and "worst cell [" in shown, shown


def test_home_page_describes_backend_and_lists_layers():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert {"Backend", "Version", "Builds engines", "Runs engines", "Device"} <= set(metrics)
    for layer in LAYERS.values():
        assert layer.summary in text(at)


def test_every_layer_has_a_page_made_from_the_registry():
    """No file per layer: each declared layer's page exists at /NAME and its stage is of that layer."""
    assert sorted(p.name for p in (Path(APP).parent / "app_pages").glob("*.py")) == ["home.py", "model.py"]
    for name in LAYERS:
        assert stage_data(open_page(name))["describe"]["layer"] == name


def test_the_page_hands_its_stage_the_links_configuration_and_a_live_seat():
    at = open_page("convolution", **{"convolution.stride_nd.h": "2", "convolution.compare": "FP16"})
    data = stage_data(at)
    assert data["answer"]["shapes"] == "Input (1, 1, 6, 9) → Output (1, 1, 2, 7)"
    assert data["query"]["convolution.stride_nd.h"] == "2" and data["compare"] == "FP16"
    assert [f["which"] for f in data["answer"]["figures"]][-2:] == ["compared", "difference"]
    assert data["route"] == server.ROUTE and server.SEATS.take(data["token"]).layer == "convolution"
    assert [t.label for t in at.tabs][:4] == ["Details", "Engine", "Downloads", "Spec example"]


def test_the_tabs_under_the_stage_wait_for_its_first_paint():
    at = open_page("convolution", painted=False)  # the stage's first paint comes first, then it asks for the rest
    assert not at.main.tabs and stage_data(at)["painted"] is False
    assert [t.label for t in open_page("convolution").tabs][:3] == ["Details", "Engine", "Downloads"]


def test_the_pages_menu_waits_for_a_stage_pages_first_paint_then_stays(monkeypatch):
    """The menu's links would cost the stage's first paint: a session's first view of a layer page places it once
    the stage has painted; any other page, or a session that has shown it, has it at once."""
    import types

    from playground.ui import stage as stage_ui

    fake = types.SimpleNamespace(session_state={}, context=types.SimpleNamespace(url=None))
    monkeypatch.setattr(stage_ui, "st", fake)
    position = stage_ui.menu_position

    fake.context.url = "http://room.example:8501/prefix/convolution"
    assert position() == "hidden" and position() == "hidden"  # the stage has not painted: no menu yet
    stage_ui._was_painted(LAYERS["convolution"])()
    assert position() == "top"
    fake.context.url = "http://room.example:8501/prefix/activation"  # another layer, not painted: the menu stays
    assert position() == "top"
    fake.session_state.clear()
    fake.context.url = "http://room.example:8501/chain"  # the chain's stage too
    assert position() == "hidden"
    fake.session_state[stage_ui.PAINTED.format("chain")] = True
    assert position() == "top"
    fake.session_state.clear()
    fake.context.url = "http://room.example:8501/model"  # the model page's first view (its graph or upload box)
    assert position() == "hidden"
    fake.session_state[stage_ui.MODEL_DRAWN] = True
    assert position() == "top"
    fake.session_state.clear()
    for url in ("http://room.example:8501/", None):
        fake.context.url = url
        assert position() == "top", url  # no stage to wait for (or no address known): the menu at once
        fake.session_state.clear()


@pytest.mark.parametrize(
    "layer, query",
    [
        ("convolution", {}),
        (
            "convolution",
            {"convolution.input.kind": "random", "convolution.input.H": "5", "convolution.input.seed": "3"},
        ),
        ("convolution", {"convolution.input.3d": "true", "convolution.input.D": "2", "view.presenter": "true"}),
        ("elementwise", {"elementwise.input.b.kind": "constant", "elementwise.input.b.value": "2.5"}),
    ],
)
def test_the_sidebar_follows_the_first_paint_and_its_controls_hold_the_input_the_stage_drew(layer, query):
    first = open_page(layer, painted=False, **query)  # the first run draws the stage alone: no sidebar widget
    assert not first.sidebar.children and stage_data(first)["painted"] is False
    drawn = stage_data(first)
    after = rerun(paint(first, layer))
    assert [t.label for t in after.sidebar.tabs] == ["Input", "View"]
    assert after.sidebar.selectbox[0].value == query.get(
        f"{layer}.input.kind", query.get(f"{layer}.input.a.kind", "spec")
    )
    assert stage_data(after)["epoch"] == drawn["epoch"]  # the same input and view: the stage the browser holds
    assert stage_data(after)["presenter"] == drawn["presenter"] == (query.get("view.presenter") == "true")


def test_the_details_tab_holds_a_layers_section_or_its_picked_cell():
    assert [t.label for t in open_page("leaky_relu").tabs][:3] == ["Details", "Engine", "Downloads"]  # its section
    # no section: the picked cell's terms, as the link picks it (the stage writes every axis)
    at = open_page("slice", **{f"slice.extra.{a}": v for a, v in zip("nchw", "0001")})
    assert [t.label for t in at.tabs][:3] == ["Details", "Engine", "Downloads"]
    assert "**One output cell**: output(0, 0, 0, 1) = " in text(at)


# -- a change of every kind of parameter, as the stage asks the route --------------------------------------------
def test_an_enum_change_clip_changes_the_output_and_the_formula():
    at = open_page("activation")
    assert tensor(stage_data(at)["answer"], "output").min() == 0  # RELU of -4..4
    reply = ask(at, {"activation.type": "CLIP"})
    y = output(reply)
    assert (y.min(), y.max()) == (-2, 2) and reply["answer"]["formula"] == "y = max((-2), min(2, x))"


def test_dependent_defaults_follow_the_type_and_unused_parameters_say_why():
    at = open_page("activation")
    alpha = control(stage_data(at)["describe"], "alpha")
    assert not alpha["used"] and "RELU" in alpha["why_unused"]  # shown, not hidden
    answer = ask(at, {"activation.type": "HARD_SIGMOID"})["answer"]
    assert answer["query"]["activation.alpha"] == "0.2" and answer["query"]["activation.beta"] == "0.5"
    assert control(answer, "alpha")["used"]


def test_a_float_changes_leaky_relu_and_every_construction_agrees():
    at = open_page("activation")
    assert output(ask(at, {"activation.type": "LEAKY_RELU"})).min() == pytest.approx(-0.04, rel=1e-6)
    assert output(ask(at, {"activation.type": "LEAKY_RELU", "activation.alpha": "0.5"})).min() == -2
    at = open_page("leaky_relu")
    assert output(ask(at, {"leaky_relu.alpha": "0.25"})).min() == -1
    assert output(ask(at, {"leaky_relu.alpha": "0.25", "leaky_relu.construction": "parametric_relu"})).min() == -1


def test_per_axis_stride_changes_the_shape_and_tensorrts_own_shape_agrees():
    at = open_page("convolution")
    query = {"convolution.stride_nd.h": "2", "convolution.stride_nd.w": "2"}
    assert ask(at, query)["answer"]["shapes"] == "Input (1, 1, 6, 9) → Output (1, 1, 2, 4)"
    at = settle(open_tab(at, "convolution", "Engine"), query)
    assert "| (1, 1, 2, 4) |" in text(at)  # the engine card follows the settled configuration


def test_an_optional_per_axis_override():
    at = open_page("convolution")
    assert control(stage_data(at)["describe"], "pre_padding")["optional"]
    query = {"convolution.pre_padding.set": "true", "convolution.pre_padding.h": "1", "convolution.pre_padding.w": "1"}
    assert ask(at, query)["answer"]["shapes"].endswith("Output (1, 1, 5, 8)")  # the spec's pre_padding (1, 1)


def test_precision_int8_quantizes_and_its_scale_says_when_it_is_used():
    at = open_page("convolution")
    assert output(stage_data_reply(at)).min() == pytest.approx(12345.68, rel=1e-6)
    assert control(stage_data(at)["describe"], "quantize_scale")["why_unused"] == "only with precision INT8 or FP8"
    answer = ask(at, {"convolution.precision": "INT8"})["answer"]
    assert tensor(answer, "output").min() == 726  # the spec's INT8 table: the kernel quantizes to 127 127 100 …
    assert "INT8 against FP64" in answer["precision"] and control(answer, "quantize_scale")["used"]


def stage_data_reply(at: AppTest) -> dict:
    return {"answer": stage_data(at)["answer"]}


def test_an_arrays_preset_values_and_a_wrong_count():
    at = open_page("prelu")
    assert output(stage_data_reply(at)).min() == -8  # spec slopes 0.5, 1, 2
    assert "leaky" in control(stage_data(at)["describe"], "slopes")["presets"]
    reply = ask(at, {"prelu.slopes": "leaky"})
    assert output(reply).min() == pytest.approx(-0.4, rel=1e-6)
    assert reply["answer"]["query"]["prelu.slopes"] in ("leaky", "0.1")  # leaky's slopes are all 0.1: one value
    reply = ask(at, {"prelu.slopes": "0.5, 1, 1"})
    assert output(reply).min() == -4 and reply["answer"]["query"]["prelu.slopes"] == "0.5,1,1"
    reply = ask(open_page("scale"), {"scale.shift": "1, 2"})
    assert reply["problem"]["param"] == "shift" and reply["problem"]["keys"] == ["scale.shift"]
    assert reply["problem"]["message"].startswith("scale.shift:")


def test_a_granularity_change_keeps_the_arrays_preset_and_a_single_value_broadcasts():
    at = open_page("prelu")
    reply = ask(at, {"prelu.granularity": "element"})
    assert reply["answer"]["query"]["prelu.slopes"] == "spec"  # the preset follows the new slope shape
    assert output(reply).mean() == pytest.approx(0.05556, abs=1e-5)  # 0.5, 1, 2 cycled over elements
    at = open_page("scale")
    reply = ask(at, {"scale.mode": "CHANNEL"})
    assert reply["answer"]["query"]["scale.shift"] == "-7"  # the single shift, broadcast per channel
    assert output(ask(at, {"scale.mode": "CHANNEL", "scale.shift": "-7,-7,0"})).max() == 13.5  # channel 2: 27·0.5


def test_groups_offer_the_divisors_and_a_stale_value_is_named():
    at = open_page("convolution")
    assert control(stage_data(at)["describe"], "num_groups")["offered"] == [1]  # C = 1: one group only
    at.number_input(key="convolution.input.C").set_value(4)
    at = settle(at, {"convolution.num_output_maps": "6"})
    assert control(stage_data(at)["answer"], "num_groups")["offered"] == [1, 2]  # divisors of C = 4 and K = 6
    assert "answer" in ask(at, {"convolution.num_groups": "2"})
    at = settle(at, {"convolution.num_groups": "2"})
    at.number_input(key="convolution.input.C").set_value(3)  # 2 no longer divides C: named
    data = stage_data(rerun(at))
    assert data["problem"]["keys"] == ["convolution.num_groups"]
    assert "convolution.num_groups: must divide the input channels C=3" in data["problem"]["message"]


def test_the_kernel_stays_within_the_padded_input_and_dilation_past_it_is_named():
    at = open_page("convolution")
    assert control(stage_data(at)["describe"], "kernel_size_nd")["tops"] == [6, 9]  # H = 6, W = 9, no padding
    assert control(ask(at, {"convolution.padding_nd.h": "1"})["answer"], "kernel_size_nd")["tops"] == [8, 9]
    problem = ask(at, {"convolution.dilation_nd.h": "4"})["problem"]  # 1 + 4·(3 − 1) = 9 > 6
    assert problem["param"] == "dilation_nd" and problem["keys"] == [
        "convolution.dilation_nd.h",
        "convolution.dilation_nd.w",
    ]


def test_the_picked_cell_reads_its_window_and_the_padding():
    at = open_page("convolution")
    cells = stage_data(at)["answer"]["cells"]
    assert cells["picked"] == [0, 0, 0, 0] and cells["complete"]
    assert sorted(map(tuple, cells["reads"]["0,0,0,2"])) == [(0, 0, h, w) for h in range(3) for w in range(2, 5)]
    cells = ask(at, {"convolution.padding_nd.h": "1", "convolution.padding_nd.w": "1"}, pick=[0, 0, 0, 2])["answer"][
        "cells"
    ]
    assert cells["picked"] == [0, 0, 0, 2]  # reads rows -1..1: the padding row is outside the input
    assert sorted(map(tuple, cells["reads"]["0,0,0,2"])) == [(0, 0, h, w) for h in range(-1, 2) for w in range(1, 4)]
    assert "Σ" in cells["lines"]["0,0,0,2"] or "=" in cells["lines"]["0,0,0,2"]


def test_a_large_output_sends_the_picked_cells_window_only():
    at = open_page("convolution", **{"convolution.input.H": "80", "convolution.input.W": "80"})
    cells = stage_data(at)["answer"]["cells"]
    assert not cells["complete"] and list(cells["reads"]) == ["0,0,0,0"]  # hover windows of 6084 cells: not sent


# -- the sidebar and the page ----------------------------------------------------------------------------------
def test_input_shape_and_kind_start_the_stage_afresh():
    at = open_page("convolution")
    token = stage_data(at)["token"]
    at.number_input(key="convolution.input.H").set_value(8)
    at.number_input(key="convolution.input.W").set_value(10)
    data = stage_data(rerun(at))
    assert data["answer"]["shapes"] == "Input (1, 1, 8, 10) → Output (1, 1, 6, 8)" and data["token"] == token
    assert ask(at, {"convolution.stride_nd.h": "2"})["answer"]["shapes"].endswith("Output (1, 1, 3, 8)")
    at.selectbox(key="convolution.input.kind").select("constant")
    rerun(at)
    assert at.number_input(key="convolution.input.value").value == 1.0
    y = tensor(stage_data(at)["answer"], "output")
    assert y.min() == y.max() == pytest.approx(11111.11)  # the sum of the powers-of-ten kernel


def test_the_3d_toggle_runs_the_specs_3d_example():
    at = open_page("convolution")
    at.toggle(key="convolution.input.3d").set_value(True)
    data = stage_data(rerun(at))
    # Depth 2 and a kernel whose depth slices are w and −w: the spec's cancelling 3-D example.
    assert data["answer"]["shapes"] == "Input (1, 1, 2, 6, 9) → Output (1, 1, 1, 4, 7)"
    assert data["answer"]["query"]["convolution.kernel_size_nd.d"] == "2"


def png(grey: int) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (4, 4), grey).save(buf, format="PNG")
    return buf.getvalue()


def test_an_image_upload_becomes_the_input_and_a_broken_one_is_named():
    at = open_page("activation")
    at.selectbox(key="activation.input.kind").select("image")
    rerun(at)
    assert any("upload" in e.value for e in at.error)  # nothing uploaded yet: said, not raised
    at.file_uploader(key="activation.input.image").upload("white.png", png(255), "image/png")
    rerun(at)
    assert not at.error
    x = tensor(stage_data(at)["answer"], "input")
    assert x.shape == (1, 1, 3, 3) and (x == 1).all()  # white, as luminance in [0, 1]
    at.file_uploader(key="activation.input.image").set_value(("broken.png", b"not a png", "image/png"))
    rerun(at)
    assert any("upload: not a PNG or JPEG" in e.value for e in at.error)


def test_the_input_pattern_names_are_plain_for_links():
    """The pattern selectbox shows the kinds' own names (a bound selectbox's URL value is what it shows),
    with a caption describing the chosen one."""
    from playground.base.inputs import KINDS

    at = open_page("scale")
    assert at.selectbox(key="scale.input.kind").options == list(KINDS)
    at.selectbox(key="scale.input.kind").select("random")
    rerun(at)
    assert any(c.value == "uniform between low and high, seeded" for c in at.caption)


def test_presenter_mode_reaches_the_stage():
    at = open_page("convolution")
    assert stage_data(at)["presenter"] is False
    at.toggle(key="view.presenter").set_value(True)
    assert stage_data(rerun(at))["presenter"] is True


def test_an_engine_failure_shows_tensorrts_message_and_the_reference(monkeypatch):
    from playground.ui import page

    real = page.evaluate

    def failing(*args, **kwargs):
        ev = real(*args, **kwargs)
        ev.engine_status, ev.error = "failed", "TensorRT rejected the network: no tactic found"
        return ev

    monkeypatch.setattr(page, "evaluate", failing)
    at = open_page("leaky_relu")
    data = stage_data(at)  # the page's first answer (a later run of the same stage makes none)
    at = rerun(open_tab(at, "leaky_relu", "Engine"))
    assert data["answer"]["engine"]["error"] == "TensorRT rejected the network: no tactic found"
    assert "| failed |" in text(at) and data["answer"]["shapes"].endswith("Output (1, 1, 3, 3)")


def test_an_unexpected_exception_is_an_error_line_not_a_traceback(monkeypatch):
    from playground.ui import page

    monkeypatch.setattr(page, "evaluate", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("disk on fire")))
    at = open_page("scale")
    assert any("Unexpected error (RuntimeError): disk on fire" in e.value for e in at.error)


def test_the_first_page_moves_startup_objects_out_of_the_collectors_sight():
    """main.py calls shared.freeze_startup_objects after the page: Python's full collections then skip the
    long-lived objects of TensorRT, NumPy and Plotly (runner.postScriptGC is off for the same cost)."""
    import gc

    from playground.serve import shared

    shared.freeze_startup_objects.clear()  # once per process: an earlier test's page may have frozen already
    gc.unfreeze()
    open_page("activation")
    assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()


def test_an_input_that_waits_for_its_control_draws_the_sidebar_at_once():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    switch_to_layer(at, "convolution")
    at.session_state["convolution.input.kind"] = "image"  # as an example may write it; no upload yet: no stage
    rerun(at)
    assert not at.get("bidi_component") and at.sidebar.tabs, "the image's upload control is there to use"
