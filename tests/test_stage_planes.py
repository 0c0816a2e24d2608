"""The route's answers are the planes the stage draws, in binary, with the whole tensor's stats: a large
configuration's answer is small, its stats and colour range are NumPy's over the whole tensor, a plane asked for
later (a page turned) is the tensor's slice, and a plane the browser holds is not sent again."""

import json

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground.core import evaluate
from playground.layers import get_layer
from playground.serve import server
from playground.stage import protocol

SHAPE = (4, 8, 128, 128)  # 32 planes of 16,384 values: 2 MiB a tensor
PLANE_BYTES = SHAPE[2] * SHAPE[3] * 4


@pytest.fixture()
def client():
    return TestClient(Starlette(routes=server.routes()), base_url="http://stage.test", raise_server_exceptions=False)


@pytest.fixture()
def large():
    """An activation page on a 4·8·128·128 input with NaN and ±Inf in it: (token, input)."""
    x = np.random.default_rng(0).uniform(-4, 4, SHAPE).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    x[3, 7, 5, 5] = np.nan
    return server.SEATS.open("activation", x), x


def post(client, token, body, route=server.ROUTE):
    r = client.post(
        route, content=json.dumps(body), headers={server.TOKEN_HEADER: token, "content-type": "application/json"}
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith(protocol.FRAME_TYPE)
    return r, *protocol.read_frame(r.content)


def test_a_large_configurations_answer_is_the_planes_drawn_with_the_whole_tensors_stats(client, large):
    token, x = large
    params = {"activation.type": "SIGMOID"}
    r, reply, blob = post(client, token, {"params": params})
    figures = {f["which"]: f["tensor"] for f in reply["answer"]["figures"]}
    assert list(figures) == ["input", "output"]
    # 4 of 32 planes a figure: the answer is an eighth of the two tensors, and no base64
    assert len(r.content) < 2 * protocol.PAGE_PLANES * PLANE_BYTES + 64_000
    assert len(r.content) < 2 * x.nbytes / 7
    y = evaluate("activation", {"type": "SIGMOID"}, x, run=False).output
    for which, whole in (("input", x), ("output", y)):
        t = figures[which]
        assert [p for p, _ in t["sent"]] == [0, 1, 2, 3] and t["page"] == [0, 4] and t["shape"] == list(SHAPE)
        finite = whole[np.isfinite(whole)]
        assert t["stats"] == {
            "min": float(finite.min()),
            "max": float(finite.max()),
            "nan": int(np.isnan(whole).sum()),
            "inf": int(np.isinf(whole).sum()),
        }
        for p, at in t["sent"]:
            plane = np.frombuffer(blob, "<f4", SHAPE[2] * SHAPE[3], at * 4).reshape(SHAPE[2:])
            assert np.array_equal(plane, whole.reshape(-1, *SHAPE[2:])[p], equal_nan=True)
    assert figures["input"]["stats"]["nan"] == 2 and figures["input"]["stats"]["inf"] == 2
    ranges = {f["which"]: f.get("range") for f in reply["answer"]["figures"]}
    assert ranges["input"] == protocol.colour_range(x) and ranges["output"] == protocol.colour_range(y)


def test_a_page_turned_is_asked_for_by_tensor_id_and_is_the_tensors_slice(client, large):
    token, x = large
    _, reply, _ = post(client, token, {"params": {}})
    out = next(f["tensor"] for f in reply["answer"]["figures"] if f["which"] == "output")
    y = evaluate("activation", {}, x, run=False).output.reshape(-1, *SHAPE[2:])
    r, planes, blob = post(client, token, {"planes": [[out["id"], 28, 4], ["0" * 24, 0, 4]]}, server.PLANES_ROUTE)
    assert planes["gone"] == ["0" * 24] and len(r.content) < 4 * PLANE_BYTES + 4096  # an id not kept: gone
    (t,) = planes["tensors"]
    assert t["id"] == out["id"] and [p for p, _ in t["sent"]] == [28, 29, 30, 31]
    for p, at in t["sent"]:
        assert np.array_equal(
            np.frombuffer(blob, "<f4", SHAPE[2] * SHAPE[3], at * 4).reshape(SHAPE[2:]), y[p], equal_nan=True
        )
    # the page the stage shows comes with the next change's answer; the input's planes held are not sent again
    have = [
        protocol.plane_key(f["tensor"]["id"], p) for f in reply["answer"]["figures"] for p, _ in f["tensor"]["sent"]
    ]
    _, again, _ = post(
        client, token, {"params": {"activation.type": "TANH"}, "have": have, "pages": {"output": [8, 4]}}
    )
    sent = {f["which"]: [p for p, _ in f["tensor"]["sent"]] for f in again["answer"]["figures"]}
    assert sent == {"input": [], "output": [8, 9, 10, 11]}


def test_the_seat_keeps_its_last_answers_tensors_only(client, large):
    token, _ = large
    ids = []
    for kind in ("RELU", "SIGMOID", "TANH"):
        _, reply, _ = post(client, token, {"params": {"activation.type": kind}})
        ids.append(next(f["tensor"]["id"] for f in reply["answer"]["figures"] if f["which"] == "output"))
    _, planes, _ = post(client, token, {"planes": [[i, 4, 4] for i in ids]}, server.PLANES_ROUTE)
    assert planes["gone"] == ids[:1] and [t["id"] for t in planes["tensors"]] == ids[1:]  # KEEP_ANSWERS = 2


@pytest.mark.parametrize(
    "body",
    [{"planes": []}, {"planes": [["a", 0]]}, {"planes": [["a", -1, 4]]}, {"planes": [["a", 0, 65]]}, {"other": 1}],
)
def test_a_planes_request_the_stage_never_sends_is_refused_by_the_rule(client, large, body):
    r = client.post(
        server.PLANES_ROUTE,
        content=json.dumps(body),
        headers={server.TOKEN_HEADER: large[0], "content-type": "application/json"},
    )
    assert r.status_code == 400 and "planes must be a list" in r.json()["error"]


@pytest.mark.parametrize("pages", [[], {"output": [0]}, {"output": [0, 65]}, {"output": ["0", 4]}])
def test_pages_the_stage_never_sends_are_refused_by_the_rule(client, large, pages):
    r = client.post(
        server.ROUTE,
        content=json.dumps({"params": {}, "pages": pages}),
        headers={server.TOKEN_HEADER: large[0], "content-type": "application/json"},
    )
    assert r.status_code == 400 and "pages must map" in r.json()["error"]


def test_a_small_configuration_sends_every_plane_and_the_page_past_the_last_is_clamped():
    layer = get_layer("convolution")
    ev = evaluate("convolution", {}, run=False)
    reply, blob = protocol.read_frame(protocol.frame({"answer": protocol.answer(layer, ev, pages={"output": [9, 4]})}))
    for f in reply["answer"]["figures"]:
        assert np.array_equal(protocol.whole(f["tensor"], blob), ev.output if f["which"] == "output" else ev.input) or (
            f["which"] == "kernel"
        )
        assert f["tensor"]["page"] == [0, 1]
    # the page's first answer, inline: base64 of the same bytes, or none past INLINE_VALUES (the stage asks the route)
    a = protocol.inline(protocol.answer(layer, ev))
    assert "_array" not in json.dumps(a) and a["blob"]
    big = protocol.inline(protocol.within(protocol.answer(layer, ev), 10))
    assert big["blob"] == "" and all(f["tensor"]["sent"] == [] for f in big["figures"])


@pytest.mark.parametrize(
    ("headers", "status"), [({server.TOKEN_HEADER: "forged"}, 401), ({"origin": "http://elsewhere.example"}, 403)]
)
def test_the_planes_route_has_the_evaluation_routes_door(client, large, headers, status):
    r = client.post(
        server.PLANES_ROUTE,
        content=json.dumps({"planes": [["0" * 24, 0, 4]]}),
        headers={server.TOKEN_HEADER: large[0], "content-type": "application/json", **headers},
    )
    assert r.status_code == status and r.json()["error"]
