"""Workshop features of the layer pages, through AppTest: an example's link (?preset=NAME) sets the input and every
parameter and the example's tab states the spec's verdict; links carry the state and tampered links are reported by
parameter name and replaced by the defaults; the code export and tensor downloads; presenter mode and ?hide=.

Query parameters are set before the layer page first runs in the session, as opening a link does.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from apptest import (
    ask,
    open_page,
    open_tab,
    paint,
    rerun,
    stage_answer,
    stage_data,
    still_figures,
    switch_to_layer,
    tensor,
)
from streamlit.testing.v1 import AppTest

from playground.base import style
from playground.chromium.snapshot import Shot
from playground.layers import LAYERS, get_layer
from playground.network import presets
from playground.network.core import evaluate
from playground.ui import links
from playground.ui.keys import SPEC_TAB


def warnings(at: AppTest) -> str:
    return "\n".join(w.value for w in at.warning)


def html(at: AppTest) -> str:
    return "\n".join(e.proto.body for e in at.get("html"))


def drawn(at: AppTest) -> tuple[str, np.ndarray]:
    """What the stage draws first: its shape line and its output."""
    answer = stage_data(at)["answer"]
    return answer["shapes"], tensor(answer, "output")


def same_as_default(at: AppTest, layer: str) -> bool:
    (shapes, y), (default_shapes, default_y) = drawn(at), drawn(open_page(layer))
    return shapes == default_shapes and np.array_equal(y, default_y)


# -- examples -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "layer, name, url",
    [
        ("convolution", "stride_nd_2_2", {"convolution.stride_nd.h": "2", "convolution.stride_nd.w": "2"}),
        (
            "scale",
            "channel_axis_0",
            {"scale.channel_axis": "0", "scale.input.N": "2", "scale.input.kind": "constant", "scale.shift": "2,3"},
        ),
        ("prelu", "spec_per_channel", {}),  # the default prelu page is that example: nothing differs
        ("convolution", "int8", {"convolution.precision": "INT8"}),
    ],
)
def test_an_examples_link_sets_every_control_and_its_tab_matches_the_spec(layer, name, url):
    at = rerun(open_tab(open_page(layer, preset=name), layer, SPEC_TAB))
    assert "preset" not in at.query_params and {k: at.query_params[k] for k in url} == url
    preset = presets.find(layer, name)
    example = stage_answer(at)["example"]
    assert example["name"] == name and example["matches"]
    assert stage_answer(at)["shapes"].endswith(f"Output {preset.expected_shape}")
    verdicts = [s.value for s in at.success]
    assert any(v.startswith("✓ Matches the spec's table") for v in verdicts), verdicts
    assert preset.tolerance.text in verdicts[0] and "max |diff|" in verdicts[0]
    assert any(f"source: {preset.source}" in c.value for c in at.caption)
    (spec,) = still_figures(at).values()  # the spec's table beside the output, drawn by the stage's heatmap
    shown = {f["which"]: f for f in spec["figures"]}
    assert shown["spec"]["title"].startswith("Spec's output") and np.allclose(shown["spec"]["values"], preset.expected)
    assert shown["spec"]["range"] == shown["output"]["range"]  # one colour range: a differing cell shows
    if preset.note:
        assert any(preset.note in m.value for m in at.markdown)


def test_a_change_after_an_example_is_no_longer_that_example():
    at = open_page("convolution", preset="padding_nd_1_1")
    assert stage_data(at)["answer"]["example"]["name"] == "padding_nd_1_1"
    assert ask(at, {"convolution.padding_nd.w": "2"})["answer"]["example"] is None
    at = rerun(open_tab(at, "convolution", SPEC_TAB))
    at.query_params["convolution.padding_nd.w"] = "2"  # the stage settled on it
    assert any("none of the examples" in c.value for c in rerun(at).caption) and not at.success


def test_an_unknown_example_in_the_url_is_reported_and_ignored():
    at = open_page("convolution", preset="no_such_example")
    assert 'URL parameter preset: convolution has no example "no_such_example"' in warnings(at)
    assert same_as_default(at, "convolution") and "preset" not in at.query_params


# -- links: tampered and stale URLs ---------------------------------------------------------------
@pytest.mark.parametrize(
    "layer, query, name, rule",
    [
        (
            "convolution",
            {"convolution.num_groups": "2"},
            "convolution.num_groups",
            "must divide the input channels C=1",
        ),
        ("prelu", {"prelu.slopes": "1,2"}, "prelu.slopes", "with granularity channel needs 1 or 3 values"),
        ("convolution", {"convolution.kernel": "zzz"}, "convolution.kernel", "must be numbers separated by commas"),
        ("convolution", {"convolution.input.H": "100000"}, "convolution.input.H", "must be between 1 and 512"),
        (
            "activation",
            {"activation.type": "LEAKY_RELU", "activation.alpha": "1e999"},
            "activation.alpha",
            "must be finite",
        ),
        ("activation", {"activation.type": "<script>alert(1)</script>"}, "activation.type", "must be one of RELU"),
        ("scale", {"view.presenter": "yes"}, "view.presenter", "must be true or false"),
        ("convolution", {"convolution.stride_nd.h": "1.5"}, "convolution.stride_nd.h", "must be"),
        ("convolution", {"convolution.stride_nd.d": "2"}, "convolution.stride_nd.d", "not a parameter of this"),
        (
            "convolution",
            {"convolution.input.kind": "image"},
            "convolution.input.kind",
            "an uploaded image cannot travel in a link",
        ),
    ],
)
def test_a_tampered_url_value_is_named_and_replaced_by_the_default(layer, query, name, rule):
    at = open_page(layer, **query, unknown_key="ignored")
    shown = warnings(at)
    assert f"URL parameter {name}: {rule}" in shown and "replaced by the default" in shown, shown
    assert not at.error, [e.value for e in at.error]
    assert name not in at.query_params and "unknown_key" not in at.query_params  # a key no page reads is named too
    assert f'URL parameter unknown_key: is not a setting of the {layer} page (got "ignored") — not used.' in shown
    if name == "activation.alpha":  # the valid LEAKY_RELU stays; alpha falls back to its default 0.01
        assert drawn(at)[1].min() == pytest.approx(-0.04, rel=1e-6)
    else:
        assert same_as_default(at, layer)
    assert "<script" not in html(at)  # user text never reaches raw HTML


def test_several_bad_values_one_box_and_valid_ones_kept():
    at = open_page(
        "convolution", **{"convolution.stride_nd.h": "2", "convolution.num_groups": "2", "convolution.bias": "<b>1</b>"}
    )
    box = [w.value for w in at.warning if "URL parameter" in w.value]
    assert len(box) == 1 and "convolution.num_groups" in box[0] and "convolution.bias" in box[0]
    assert drawn(at)[0].endswith("Output (1, 1, 2, 7)")  # the good value was kept
    assert at.query_params == {"convolution.stride_nd.h": "2"}


def test_an_old_links_spelling_still_opens():
    at = open_page(
        "convolution",
        **{"convolution.compare": "off", "convolution.view.shared_scale": "true", "view.instrument": "false"},
    )
    assert stage_data(at)["compare"] is None and same_as_default(at, "convolution")
    # a setting of an earlier release that the page no longer reads is named, and leaves the link
    (box,) = [w.value for w in at.warning]
    assert "URL parameter convolution.view.shared_scale: is not a setting of the convolution page" in box, box
    assert "convolution.view.shared_scale" not in at.query_params


def test_a_shared_link_round_trips_in_a_new_session():
    at = open_page(
        "convolution",
        **{
            "convolution.input.kind": "random",
            "convolution.input.seed": "7",
            "convolution.dilation_nd.w": "2",
            "convolution.padding_mode": "SAME_UPPER",
        },
    )
    assert not at.warning
    assert at.session_state["convolution.input.seed"] == 7
    assert stage_data(at)["query"]["convolution.padding_mode"] == "SAME_UPPER"
    again = open_page("convolution", **at.query_params)
    shapes, y = drawn(at)
    assert drawn(again)[0] == shapes and np.array_equal(drawn(again)[1], y)


def test_every_state_holding_widget_is_checked():
    """The sidebar's widgets are URL-bound fields that links.check_url validates."""
    for layer in ("convolution", "scale"):
        at = open_page(layer)
        fields = links.fields(get_layer(layer))
        for w in at.sidebar.get("number_input") + at.sidebar.get("selectbox") + at.sidebar.get("toggle"):
            assert w.key in fields, f"{w.key} is not checked"


# -- downloads ------------------------------------------------------------------------------------
@pytest.fixture
def media(monkeypatch):
    """What the page's download buttons give when clicked: every file is made on click (a deferred
    download), so run the button's callable as the server would and read the file it stored."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import app_test

    managers = []

    class Recording(MediaFileManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            managers.append(self)

    monkeypatch.setattr(app_test, "MediaFileManager", Recording)

    def read(button) -> bytes:
        file_id = button.proto.deferred_file_id
        assert file_id and not button.proto.url, f"{button.proto.label}: made on every run, not on click"
        url = managers[-1].execute_deferred(file_id)
        return managers[-1]._storage.get_file(url.rsplit("/", 1)[1].split(".")[0]).content

    return read


def buttons(at: AppTest) -> dict:
    return {b.proto.label: b for b in at.get("download_button")}


def test_script_and_tensor_downloads(media):
    at = open_page("convolution", preset="stride_nd_2_2")
    assert "Download Python script" not in buttons(at)  # the Details tab opened; Downloads is drawn on request
    found = buttons(rerun(open_tab(at, "convolution", "Downloads")))
    text = media(found["Download Python script"]).decode()
    assert "execute_async_v3" in text and "stride_nd" in text
    compile(text, "trt_convolution.py", "exec")
    want = evaluate("convolution", {"stride_nd": "2,2"}).output
    out = np.load(io.BytesIO(media(found["output .npy"])), allow_pickle=False)
    assert out.shape == (1, 1, 2, 4) and np.array_equal(out, want)
    x = np.load(io.BytesIO(media(found["input .npy"])), allow_pickle=False)
    assert x.shape == (1, 1, 6, 9)
    csv = media(found["output .csv"]).decode().splitlines()
    assert csv[0] == "n,c,h,w0,w1,w2,w3" and len(csv) == 3


# -- presenter mode and hide ----------------------------------------------------------------------
def figure_font(at: AppTest) -> int:
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return spec["layout"]["font"]["size"]


def test_a_presenter_link_switches_the_stage_and_the_theme():
    at = open_page("activation", **{"view.presenter": "true"})
    assert at.toggle(key="view.presenter").value is True and stage_data(at)["presenter"] is True
    assert figure_font(at) == style.PRESENTER.font_size  # the Details tab's transfer curve
    assert "html { font-size: 20px; }" in html(at)
    plain = open_page("activation")
    assert figure_font(plain) == style.DEFAULT.font_size and "font-size: 20px" not in html(plain)


def test_hide_lists_controls_by_name_unknown_ignored():
    at = open_page("convolution", hide="kernel,bias,input,no_such_control")
    assert stage_data(at)["hide"] == ["kernel", "bias", "input"]  # the stage hides its own controls
    css = html(at)
    assert '[data-testid="stTab"][data-key="0"]' in css  # the Input tab's button
    assert "display: none" in css and "no_such_control" not in css
    assert same_as_default(at, "convolution")  # hidden, still in force
    assert not at.warning


def test_snapshot_urls_use_the_toggles_own_query_parameter():
    assert Shot("convolution", "int8").url("http://x", True) == "http://x/convolution?preset=int8&view.presenter=true"
    assert Shot("home").url("http://x", False) == "http://x/"


def test_every_preset_name_is_a_valid_url_preset():
    for layer in LAYERS:
        for p in presets.PRESETS.get(layer, []):
            assert p.name == p.name.strip() and "&" not in p.name and "=" not in p.name


def test_hide_holds_across_page_changes_until_shown_again():
    at = open_page("convolution", hide="input,kernel")
    switch_to_layer(at, "scale")
    rerun(paint(at, "scale"))  # its stage painted: its sidebar is drawn
    assert ".st-key-ctl-scale-input" in html(at)  # kept for the next page, with the names it knows
    assert at.query_params.get("hide") in ("input,kernel", ["input,kernel"])  # and back in its link
    at.button(key="scale.show_all").click()
    rerun(at)
    assert ".st-key-ctl-scale-input" not in html(at) and "hide" not in at.query_params
