"""The instrument stage's page through AppTest: what the page hands its stage (the configuration the link holds,
its first answer, a live seat for the route), a refused link named with the defaults drawn, and the tabs under
the stage that follow the settled configuration."""
import json

from streamlit.testing.v1 import AppTest

from playground.stage import server
from playground.ui import instrument
from test_app import open_page


def stage_data(at: AppTest) -> dict:
    found = [json.loads(c.proto.json) for c in at.get("bidi_component") if c.proto.component_name == instrument.NAME]
    assert len(found) == 1
    return found[0]


def test_the_page_hands_its_stage_the_links_configuration_and_a_live_seat():
    at = open_page("convolution", **{"view.instrument": "true", "convolution.stride_nd.h": "2",
                                     "convolution.compare": "FP16"})
    data = stage_data(at)
    assert data["answer"]["shapes"] == "Input (1, 1, 6, 9) → Output (1, 1, 2, 7)"
    assert data["query"]["convolution.stride_nd.h"] == "2" and data["compare"] == "FP16"
    assert [f["which"] for f in data["answer"]["figures"]][-2:] == ["compared", "difference"]
    assert data["route"] == server.ROUTE and server.SEATS.take(data["token"]).layer == "convolution"
    assert [t.label for t in at.tabs][:3] == ["Details", "Engine", "Downloads"]
    assert not at.exception


def test_a_refused_link_is_named_and_the_defaults_drawn():
    # the page's link check (ui.links) drops what the layer refuses before the stage is drawn, and says so
    at = open_page("convolution", **{"view.instrument": "true", "convolution.num_groups": "2"})
    assert any("URL parameter convolution.num_groups: must divide" in w.value for w in at.warning)
    data = stage_data(at)
    assert data["answer"]["shapes"].endswith("Output (1, 1, 4, 7)") and "convolution.num_groups" not in at.query_params


def test_a_layer_with_a_section_has_its_details_tab_and_one_without_has_none():
    at = open_page("leaky_relu", **{"view.instrument": "true"})
    assert [t.label for t in at.tabs][:3] == ["Details", "Engine", "Downloads"]
    assert stage_data(at)["describe"]["examples"]
    assert [t.label for t in open_page("slice", **{"view.instrument": "true"}).tabs][:2] == ["Engine", "Downloads"]


def test_an_examples_link_opens_it_on_the_stage():
    at = open_page("convolution", **{"view.instrument": "true", "preset": "stride_nd_2_2"})
    data = stage_data(at)
    assert data["answer"]["example"]["name"] == "stride_nd_2_2" and data["answer"]["example"]["matches"]
    assert "preset" not in at.query_params and at.query_params["convolution.stride_nd.h"] == "2"
    at = open_page("convolution", **{"view.instrument": "true", "preset": "no_such_example"})
    assert any('has no example "no_such_example"' in w.value for w in at.warning)
