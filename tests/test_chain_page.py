"""The chain page in Streamlit's AppTest and its stage's route: a starter's seat holds the chain's input and
structure, hostile keys are named with their rule (never a traceback), the route answers a chain's parameters (its
tensors in chain order, a refusal naming its keys, the engine's layers on the chain), and the layer list's edits
start from the stage's latest values."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from playground.network import chain as C
from playground.network import chains
from playground.serve import chain_address as A
from playground.serve import chainview, protocol, server
from playground.trt.backend import detect
from playground.ui.chain import PAINTED, TOKEN

APP = str(Path(__file__).resolve().parent.parent / "main.py")
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")


def open_chain(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at._page_hash = calc_hash("chain")  # the page's url_path, as a browser opening /chain asks for it
    at.session_state[PAINTED] = True  # as the stage says once its figures are drawn (the sidebar follows)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def seat_of(at: AppTest) -> server.Seat:
    seat = server.SEATS.take(at.session_state[TOKEN])
    assert seat is not None and seat.chain is not None
    return seat


def test_the_structures_controls_wait_for_the_stages_first_paint():
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at._page_hash = calc_hash("chain")
    at.run()
    assert not at.sidebar.button and not at.exception  # the stage's first paint goes first
    at.session_state[PAINTED] = True  # the stage said it painted: the page runs once more
    at.run()
    assert at.sidebar.button(key="chain.add_button") and at.sidebar.selectbox(key="chain.starter")


def test_a_starters_seat_holds_the_chains_input_and_structure_and_its_first_chain():
    s = chains.find("leaky_by_hand")
    at = open_chain(starter=s.name)
    assert s.note.split(":")[0] in texts(at.info) and not at.error and not at.warning
    seat = seat_of(at)
    assert seat.chain.names == s.layers and np.array_equal(seat.x, s.input())
    assert seat.chain.fixed("elementwise") == {"from.b": "scale"} and seat.chain.fixed("activation") == {
        "from": "input"
    }
    _, ev = seat.chain_ev
    assert np.array_equal(ev.output, C.evaluate(s.layers, A.from_query({"starter": s.name}).raw(), s.input()).output)


def test_hostile_keys_are_named_with_their_rule_and_the_rest_is_drawn():
    at = open_chain(layers="convolution,activation,nope", bogus="1")
    warnings = texts(at.warning)
    assert "layers: 'nope' is not a layer" in warnings and "bogus: names no layer of this chain" in warnings
    at = open_chain(**{"layers": "convolution,activation", "convolution.stride_nd.q": "2", "nope.x.y": "1"})
    warnings = texts(at.warning)
    assert "convolution.stride_nd.q: names no parameter of this chain's layers" in warnings
    assert "nope.x.y: names no parameter" in warnings
    at = open_chain(**{"input.shape": "1,1,99999,99999"})
    assert "input" in texts(at.warning) and not at.exception


def test_a_refused_link_opens_its_chains_last_good_configuration():
    at = open_chain(**{"layers": "convolution,convolution", "convolution2.stride_nd": "0,0"})
    assert not at.error  # the stage names the refusal at its control
    _, ev = seat_of(at).chain_ev
    assert ev.chain.links[1].params["stride_nd"] == (1, 1)


def test_the_route_answers_a_chains_parameters_its_refusals_and_its_unknown_keys():
    at = open_chain(starter="conv_bn_relu")
    seat = seat_of(at)
    start = A.from_query({"starter": "conv_bn_relu"})
    query = chainview.query_of(C.resolve(start.names, start.raw(), start.input().shape))  # the stage sends every key
    reply = server.answer(seat, {"params": {**query, "convolution.stride_nd.w": "2"}})
    out = reply["answer"]
    assert [f["which"] for f in out["figures"]] == ["input", "convolution", "scale", "activation"]
    assert out["query"]["convolution.stride_nd.w"] == "2" and out["finish"]
    head, blob = protocol.read_frame(protocol.frame(reply))
    address = A.from_query({"starter": "conv_bn_relu", "convolution.stride_nd": "1,2"})
    want = C.evaluate(address.names, address.raw(), address.input())
    for f in head["answer"]["figures"]:  # every tensor as the chain computes it (its output: PyTorch's, test_chain)
        assert np.array_equal(protocol.whole(f["tensor"], blob), want.tensors[f["which"]]), f["which"]
    refused = server.answer(seat, {"params": {**query, "convolution.stride_nd.w": "0"}})["problem"]
    assert refused["message"].startswith("convolution.stride_nd:")
    assert set(refused["keys"]) == {"convolution.stride_nd.h", "convolution.stride_nd.w"}
    with pytest.raises(protocol.RequestError, match="names no layer of this chain"):
        server.answer(seat, {"params": {"pooling.window_size_nd.h": "2"}})
    with pytest.raises(protocol.RequestError, match="not a parameter"):
        server.answer(seat, {"params": {"convolution.nope": "2"}})
    with pytest.raises(protocol.RequestError, match="no compare mode"):
        server.answer(seat, {"params": {}, "compare": "FP16"})


@needs_trt
@pytest.mark.parametrize(
    "starter, boxes", [("conv_relu", [["convolution", "activation"]]), ("conv_prelu", [["convolution"], ["prelu"]])]
)
def test_the_follow_up_says_what_each_engine_layer_computes(starter, boxes):
    seat = seat_of(open_chain(starter=starter))
    query = server.answer(seat, {"params": {}})["answer"]["query"]
    done = server.answer(seat, {"params": query, "finish": True})["finish"]
    assert [e["fuses"] for e in done["chain"]["engine"]] == boxes
    assert done["engine"]["status"] in ("built", "cached")
    assert server.answer(seat, {"params": {**query, "convolution.padding_nd.h": "1"}, "finish": True}) == {
        "finish": None
    }  # another chain than the one answered last: the page asks for it again


def test_the_layer_list_edits_the_address_from_the_stages_latest_values():
    at = open_chain(layers="convolution,activation")
    server.answer(seat_of(at), {"params": {"convolution.stride_nd.h": "2"}})  # moved on the stage, no run
    at.sidebar.button(key="chain.down.0").click().run()
    assert at.query_params["layers"] == "activation,convolution"
    assert at.query_params["convolution.stride_nd.h"] == "2"  # written as the stage spells it
    at.sidebar.button(key="chain.remove.0").click().run()
    assert at.query_params["layers"] == "convolution"
    at.sidebar.selectbox(key="chain.add").set_value("activation").run()
    at.sidebar.button(key="chain.add_button").click().run()
    assert at.query_params["layers"] == "convolution,activation" and not at.exception


def test_picking_a_starter_writes_its_chain_into_the_address():
    at = open_chain()
    at.sidebar.selectbox(key="chain.starter").set_value("leaky_by_hand").run()
    assert at.query_params["starter"] == "leaky_by_hand"
    assert seat_of(at).chain.names == ("scale", "activation", "scale", "elementwise")
    assert chains.find("leaky_by_hand").note.split(":")[0] in texts(at.info)


def test_a_chains_keys_are_its_layers_keys_spelled_by_their_key():
    """convolution2's controls are a convolution's, each key under convolution2 (as --set spells it)."""
    address = A.from_query({"layers": "convolution,convolution"})
    chain = C.resolve(address.names, address.raw(), chainview.input_of(address).shape)
    spec, _ = chainview.spec_of(address)
    keys = chainview.query_keys(spec, chainview.first_shapes(chain))
    one = protocol.query_keys(chain.links[0].layer, chain.input_shape)
    assert keys == one + [k.replace("convolution.", "convolution2.", 1) for k in one]
    names = [c["name"] for c in chainview.controls(chain)]
    assert names[0].startswith("convolution.") and names[-1].startswith("convolution2.")
    assert {c["group"] for c in chainview.controls(chain)} == {"convolution", "convolution2"}


def test_the_pages_cap_lets_a_chains_evaluation_go_and_keeps_its_chain():
    address = A.from_query({"starter": "leaky_by_hand", "input.shape": "1,3,32,32"})
    spec, x = chainview.spec_of(address)[0], chainview.input_of(address)
    seats = server.Seats(max_bytes=x.nbytes * 9)  # two inputs and one evaluation's tensors, not two
    first, second = (seats.take(seats.open(C.CHAIN, x, chain=spec)) for _ in range(2))
    chain = C.resolve(address.names, address.raw(), x.shape)
    for seat in (first, second):
        seat.remember_chain(chain, C.evaluate(address.names, address.raw(), x), chainview.first_shapes(chain))
    assert first.chain_ev == (chain, None) and second.chain_ev[1] is not None  # the page answered last keeps its own
    # each seat's input, and the other's four layers' outputs (its evaluation's input is the seat's: counted once)
    assert seats.total == sum(s.held for s in (first, second)) == 2 * x.nbytes + 4 * x.nbytes
