"""The path of one change: a key press on the stage is one evaluation of its configuration through `core`, the
route's, however many requests and page runs follow it (the settle's tabs, ONNX Runtime's badge)."""

from __future__ import annotations

import pytest
from apptest import ask, open_page, settle, stage_data

from playground.network import core
from playground.serve import shared


@pytest.fixture()
def trips(monkeypatch):
    """The configurations `core` evaluated for a user (run=True: the speculative builds' neighbours run none)."""
    calls, real = [], core._evaluate

    def counted(layer, raw, x, **kwargs):
        if kwargs.get("run", True):
            calls.append((layer, dict(raw or {})))
        return real(layer, raw, x, **kwargs)

    monkeypatch.setattr(core, "_evaluate", counted)
    return calls


@pytest.mark.parametrize("precision", ["FP32", "FP16"])
def test_a_key_press_is_one_evaluation_through_the_route_and_the_settle(trips, precision):
    at = open_page("convolution", **{"convolution.precision": precision})
    shared.prefetcher().idle()
    trips.clear()
    query = {"convolution.stride_nd.h": "2", "convolution.precision": precision}
    reply = ask(at, query)  # the key press: its answer, drawn
    assert reply["answer"]["shapes"].endswith("Output (1, 1, 2, 7)")
    at = settle(at, {"convolution.stride_nd.h": "2"})  # the tabs under the stage follow
    assert len(trips) == 1, trips
    assert stage_data(at)["answer"] is None  # the browser holds this stage: no answer is made for it again
    assert reply["answer"].get("finish") is True and "onnxruntime" not in reply["answer"]  # the badge comes later
    assert reply["answer"]["engine"]["status"] == "pending"  # no engine runs here: the reference, drawn first
    done = ask(at, query, finish=True)["finish"]  # asked once the answer is on the screen: the evaluation remembered
    assert done["onnxruntime"]["agrees"] is True and done["engine"]["status"] in ("built", "cached")
    assert "engine built now" in done["source"]["detail"] or "from cache" in done["source"]["detail"]  # on hover
    assert len(trips) == 1, trips


def test_a_settle_on_another_configuration_evaluates_it():
    at = open_page("convolution")
    ask(at, {"convolution.stride_nd.h": "2"})
    at = settle(at, {"convolution.stride_nd.w": "3"})  # not what the route answered last: the page evaluates it
    assert stage_data(at)["query"]["convolution.stride_nd.w"] == "3"


@pytest.mark.parametrize("spelling", ["cell", "extra"])  # `extra`: an older link's spelling, which still opens
def test_the_picked_cell_is_named_in_the_link(spelling):
    at = open_page("slice", **{f"slice.{spelling}.{a}": v for a, v in zip("nchw", "0002")})
    assert stage_data(at)["answer"]["cells"]["picked"] == [0, 0, 0, 2]


def test_the_url_keys_of_compare_mode_and_the_picked_cell_are_spelled_once():
    from playground.layers import get_layer
    from playground.serve import protocol
    from playground.ui import stage

    layer = get_layer("convolution")
    url = protocol.describe(layer, (1, 1, 6, 9))["url"]  # what the stage's URL table reads (state.js)
    assert url["compare"] == stage.compare_key(layer) == "convolution.compare"
    assert url["cell"] + "h" == stage.pick_key(layer, "h") == "convolution.cell.h"
    assert url["old_cell"] + "h" == stage.pick_key(layer, "h", old=True) == "convolution.extra.h"


def test_a_follow_up_of_a_configuration_the_page_has_left_builds_nothing():
    at = open_page("convolution")
    ask(at, {"convolution.stride_nd.h": "2"})
    ask(at, {"convolution.stride_nd.h": "3"})  # the page moved on before the first one's follow-up
    assert ask(at, {"convolution.stride_nd.h": "2"}, finish=True) == {"finish": None}
    assert ask(at, {"convolution.stride_nd.h": "3"}, finish=True)["finish"]["engine"]["status"] in ("built", "cached")


def test_the_answer_carries_the_picked_cells_arithmetic_and_its_follow_up_the_rest(trips):
    """The key press's answer is drawn as soon as its reference is: its read map has the picked cell's window and
    line, and the input's padded extent (its figure's border); the follow-up brings every cell's window and the
    others' lines (hover, step and play walk them without a round trip), from the evaluation remembered."""
    at = open_page("convolution")
    shared.prefetcher().idle()
    trips.clear()
    query = {"convolution.padding_nd.w": "2"}
    cells = ask(at, query, pick=[0, 0, 1, 3])["answer"]["cells"]
    assert cells["picked"] == [0, 0, 1, 3] and list(cells["lines"]) == list(cells["reads"]) == ["0,0,1,3"]
    assert cells["complete"] is False and cells["extent"] == {"lo": [0, 0, 0, -2], "hi": [0, 0, 5, 10]}
    done = ask(at, query, pick=[0, 0, 1, 3], finish=True)["finish"]["cells"]
    assert len(done["reads"]) == 4 * 11 and done["complete"] is True  # every output cell of 1×1×4×11
    assert done["reads"]["0,0,1,3"] == cells["reads"]["0,0,1,3"] and done["extent"] == cells["extent"]
    assert len(done["lines"]) == 44 and done["lines"]["0,0,1,3"] == cells["lines"]["0,0,1,3"]  # under CELL_LINES
    assert len(trips) == 1, trips
