"""The chain page in Streamlit's AppTest: a starter chain drawn with its note and engine, hostile keys named with
their rule (never a traceback), and the layer list's edits written to the address."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from playground import chains
from playground.trt.backend import detect

APP = str(Path(__file__).resolve().parent.parent / "main.py")
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")


def open_chain(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at._page_hash = calc_hash("chain")  # the page's url_path, as a browser opening /chain asks for it
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


@needs_trt
def test_a_starter_chain_shows_its_note_its_tensors_and_its_engine():
    s = chains.find("conv_prelu")
    at = open_chain(starter=s.name)
    assert s.note.split(":")[0] in texts(at.info)
    assert not at.error and not at.warning
    table = at.dataframe[0].value
    assert list(table["computes"]) == ["moves data (Move, Transpose or reformat)", "convolution", "prelu"]


@needs_trt
def test_hostile_keys_are_named_with_their_rule_and_the_rest_is_drawn():
    at = open_chain(layers="convolution,activation,nope", bogus="1")
    warnings = texts(at.warning)
    assert "layers: 'nope' is not a layer" in warnings and "bogus: names no layer of this chain" in warnings
    at = open_chain(**{"layers": "convolution,convolution", "convolution2.stride_nd": "0,0"})
    assert "convolution2.stride_nd: must be between" in texts(at.error)
    at = open_chain(**{"input.shape": "1,1,99999,99999"})
    assert "input" in texts(at.warning) and not at.exception


@needs_trt
def test_a_refused_layer_keeps_the_last_good_figures():
    at = open_chain(layers="convolution,activation")
    assert at.dataframe
    at.query_params["convolution.stride_nd"] = "0,1"
    at.run()
    assert "convolution.stride_nd" in texts(at.error)
    assert at.dataframe and "last chain that resolved" in texts(at.caption)


@needs_trt
def test_the_layer_list_edits_the_address():
    at = open_chain(layers="convolution,activation")
    at.button(key="chain.0.down.0").click().run()
    assert at.query_params["layers"] == "activation,convolution"
    at.button(key="chain.1.remove.0").click().run()
    assert at.query_params["layers"] == "convolution"
    at.selectbox(key="chain.2.add").set_value("activation").run()
    at.button(key="chain.2.add_button").click().run()
    assert at.query_params["layers"] == "convolution,activation"
    at.selectbox(key="chain.3.activation.type").set_value("GELU_ERF").run()
    assert at.query_params["activation.type"] == "GELU_ERF"


@needs_trt
def test_picking_a_starter_writes_its_chain_into_the_address():
    at = open_chain()
    at.selectbox(key="chain.starter").set_value("leaky_by_hand").run()
    assert at.query_params["layers"] == "scale,activation,scale,elementwise"
    assert at.query_params["elementwise.from.b"] == "scale"
    assert chains.find("leaky_by_hand").note.split(":")[0] in texts(at.info)
    assert list(at.dataframe[0].value["computes"]) == ["scale, activation, scale2, elementwise"]


@needs_trt
def test_a_stepped_parameter_writes_the_address_and_the_opinions_are_shown():
    at = open_chain(starter="conv_leaky_relu")
    at.number_input(key="chain.0.activation.alpha").set_value(0.25).run()
    assert at.query_params["activation.alpha"] == "0.25" and not at.error
    captions = texts(at.caption)
    assert "agrees with the chain's FP32 reference" in captions
    assert f"TensorRT's ONNX parser ({detect().name} OnnxParser): its engine fuses as the chain's build" in captions


@needs_trt
def test_a_picked_cell_is_traced_and_a_hostile_pick_is_named():
    at = open_chain(layers="convolution,convolution", pick="convolution2:0,0,0,0")
    assert "Cell (0, 0, 0, 0) of convolution2 depends on 25 cell(s) of the chain's input" in texts(at.caption)
    at = open_chain(layers="convolution,convolution", pick="nowhere:1")
    assert "pick: must be KEY" in texts(at.warning) and "(input, convolution, convolution2)" in texts(at.warning)
    at = open_chain(layers="convolution,convolution", pick="convolution2:0,0,99,0")
    assert "chain.pick: must be a cell of convolution2" in texts(at.warning)


@needs_trt
def test_the_marked_build_is_labelled_and_shows_the_relu_apart():
    at = open_chain(starter="conv_relu")
    assert "convolution** + **activation** (fused)" in texts(at.markdown)
    at.checkbox(key="chain.marked").check().run()
    shown = texts(at.markdown)
    assert "Every intermediate marked" in shown and "(kgen): **activation**" in shown


def test_the_window_size_kept_is_two_sane_numbers_the_browser_said():
    """The probe's message is input: only a width and a height a window can have are kept, as whole px."""
    from playground.ui.view import window_size

    assert window_size({"size": {"width": 1280.5, "height": 720}}) == {"width": 1280, "height": 720}
    for said in (
        None,
        "1280x720",
        {"size": None},
        {"size": [1280, 720]},
        {"size": {"width": 1280}},
        {"size": {"width": "1280", "height": 720}},
        {"size": {"width": True, "height": 720}},
        {"size": {"width": 1280, "height": 0}},
        {"size": {"width": 1280, "height": -720}},
        {"size": {"width": 1280, "height": float("nan")}},
        {"size": {"width": 1280, "height": float("inf")}},
        {"size": {"width": 100_000, "height": 720}},
    ):
        assert window_size(said) is None, said
