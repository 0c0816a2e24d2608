"""The stage's protocol and route, without a browser: every layer's controls and query keys, the
round trip URL texts → parameters → URL texts, answers, and the route's door (tokens, origins, sizes, bad
requests, one evaluation at a time per page)."""

import contextlib
import json
import re
import threading

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground.layers import LAYERS, get_layer
from playground.network.core import evaluate
from playground.serve import protocol, server

NAMES = sorted(LAYERS)


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_has_a_control_and_the_defaults_round_trip(name):
    layer = get_layer(name)
    shape = layer.example_shape
    described = protocol.describe(layer, shape)
    assert {c["name"] for c in described["controls"]} == set(layer.param_names)
    for c in described["controls"]:
        assert c["label"].endswith(f"({c['name']})") or c["label"] == c["name"]
        assert c["kind"] == layer.param(c["name"]).kind
    defaults = described["defaults"]
    assert set(defaults) <= set(described["keys"])
    raw = protocol.raw_params(layer, shape, defaults)
    from playground.base.params import same_params

    assert same_params(layer.resolve(raw, shape), layer.defaults(shape))


def test_a_link_of_today_opens_the_same_configuration():
    layer = get_layer("convolution")
    query = {
        "convolution.stride_nd.h": "2",
        "convolution.padding_mode": "EXPLICIT_ROUND_UP",
        "convolution.pre_padding.set": "true",
        "convolution.pre_padding.h": "1",
        "convolution.pre_padding.w": "0",
    }
    p = layer.resolve(protocol.raw_params(layer, layer.example_shape, query), layer.example_shape)
    assert p["stride_nd"] == (2, 1) and p["padding_mode"] == "EXPLICIT_ROUND_UP" and p["pre_padding"] == (1, 0)
    back = protocol.query_of(layer, p, layer.example_shape)
    assert all(back[k] == v for k, v in query.items())
    unset = protocol.raw_params(
        layer, layer.example_shape, {"convolution.pre_padding.set": "false", "convolution.pre_padding.h": "3"}
    )
    assert layer.resolve(unset, layer.example_shape)["pre_padding"] is None


def test_unused_parameters_say_which_values_use_them():
    layer = get_layer("activation")
    controls = {c["name"]: c for c in protocol.controls(layer, layer.defaults(), layer.example_shape)}
    assert (
        not controls["quantize_scale"]["used"]
        and controls["quantize_scale"]["why_unused"] == "only with precision INT8 or FP8"
    )
    groups = {
        c["name"]: c
        for c in protocol.controls(
            get_layer("convolution"),
            get_layer("convolution").resolve({"num_output_maps": 4}, (1, 4, 6, 6)),
            (1, 4, 6, 6),
        )
    }["num_groups"]
    assert groups["offered"] == [1, 2, 4]


@pytest.mark.parametrize(
    "query, words",
    [
        ({"convolution.nope": "1"}, "not a parameter of this convolution page"),
        ({"convolution.stride_nd.h": 2}, "must be text"),
        ({"convolution.pre_padding.set": "maybe"}, "must be true or false"),
        ({f"k{i}": "1" for i in range(300)}, "at most 256"),
        ({"convolution.kernel": "1," * 5000}, "at most 4096 characters"),
    ],
)
def test_a_request_the_stage_never_sends_is_named(query, words):
    layer = get_layer("convolution")
    with pytest.raises(protocol.RequestError) as err:
        protocol.raw_params(layer, layer.example_shape, query)
    assert words in str(err.value)


def test_the_answer_carries_what_the_stage_draws():
    layer = get_layer("convolution")
    ev = evaluate("convolution", {"stride_nd": "2,2", "precision": "FP16"}, run=False)
    reply, blob = protocol.read_frame(protocol.frame({"answer": protocol.answer(layer, ev, pick=(0, 0, 1, 1))}))
    a = reply["answer"]
    figures = {f["which"]: f for f in a["figures"]}
    assert list(figures) == ["input", "kernel", "output", "error"]
    out = protocol.whole(figures["output"]["tensor"], blob)
    assert np.array_equal(out, ev.output) and a["shapes"] == "Input (1, 1, 6, 9) → Output (1, 1, 2, 4)"
    cells = a["cells"]
    assert cells["picked"] == [0, 0, 1, 1] and len(cells["reads"]) == 8 and cells["complete"]
    assert cells["reads"]["0,0,1,1"] == [list(c) for c in layer.reads(ev.params, (1, 1, 6, 9), (0, 0, 1, 1))]
    assert cells["lines"]["0,0,0,0"].endswith("**") and a["precision"].startswith("FP16 against FP64")
    assert a["query"]["convolution.stride_nd.h"] == "2"


def test_a_refused_configuration_names_the_parameter_and_its_keys():
    layer = get_layer("convolution")
    from playground.base.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        layer.resolve({"num_groups": 2}, layer.example_shape)
    p = protocol.problem(err.value, layer, layer.example_shape)
    assert p["param"] == "num_groups" and p["keys"] == ["convolution.num_groups"] and "must divide" in p["message"]


# -- the route ----------------------------------------------------------------------------------------------------
@pytest.fixture()
def client():
    return TestClient(Starlette(routes=server.routes()), base_url="http://stage.test")


def seat(layer="convolution"):
    L = get_layer(layer)
    return server.SEATS.open(layer, L.example_input(L.example_shape))


def post(client, token, body, **headers):
    """The route's reply, its `json()` reading an answer's frame too (tests/apptest.py `read`)."""
    from apptest import read

    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    r = client.post(
        server.ROUTE, content=data, headers={server.TOKEN_HEADER: token, "content-type": "application/json", **headers}
    )
    r.json = lambda: read(r)
    return r


def test_the_route_answers_a_change_and_a_refusal(client):
    token = seat()
    r = post(client, token, {"params": {"convolution.stride_nd.h": "2"}})
    assert r.status_code == 200 and r.json()["answer"]["shapes"].endswith("Output (1, 1, 2, 7)")
    r = post(client, token, {"params": {"convolution.num_groups": "2"}})
    assert r.status_code == 200 and r.json()["problem"]["param"] == "num_groups"
    r = post(client, token, {"params": {"convolution.padding_nd.h": "1"}, "quick": True})
    assert r.json()["answer"]["engine"]["status"] == "pending"  # drawn from the reference, the build behind it


def test_server_timing_names_the_route_s_phases_and_they_add_up_to_its_time(client):
    r = post(client, seat(), {"params": {"convolution.padding_nd.h": "1"}})
    phases = dict(e.split(";dur=") for e in r.headers["Server-Timing"].split(", "))
    assert list(phases)[0] == "answer"  # the route's own time first: the stage reads the first
    assert {"door", "thread", "slot", "evaluate", "frame", "back"} <= set(phases)
    ms = {k: float(v) for k, v in phases.items()}
    inside = ms["thread"] + ms["slot"] + ms["evaluate"] + ms["frame"] + ms["back"]
    assert ms["evaluate"] > 0 and abs(inside - ms["answer"]) < 0.5, ms


def test_the_server_s_connections_send_without_waiting_for_an_acknowledgement():
    """A listener bound as Streamlit binds one (protocol 0: asyncio leaves Nagle's algorithm on for its connections)
    hands its connections TCP_NODELAY once `without_delay` has run."""
    import socket

    def accepted(listener):
        with socket.create_connection(listener.getsockname()):
            conn, _ = listener.accept()
            with conn:
                return conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)

    with socket.socket(family=socket.AF_INET) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert listener.proto == 0 and accepted(listener) == 0
        assert server.without_delay() >= 1
        assert accepted(listener) != 0


@pytest.mark.parametrize(
    "body, headers, status, words",
    [
        ({"params": {}}, {server.TOKEN_HEADER: "forged"}, 401, "no open page"),
        ({"params": {}}, {"origin": "http://elsewhere.example"}, 403, "origin"),
        (b"{not json", {}, 400, "not JSON"),
        ([1, 2], {}, 400, "JSON object"),
        ({"params": {}, "shell": "rm"}, {}, 400, "unknown field"),
        ({"params": {"convolution.nope": "1"}}, {}, 400, "not a parameter"),
        ({"params": {}, "compare": "FP64"}, {}, 400, "compare must be one of"),
        ({"params": {}, "pick": ["a"]}, {}, 400, "pick must be"),
        (b"{" + b" " * (server.MAX_BODY_BYTES + 10) + b"}", {}, 413, "at most"),
    ],
)
def test_a_hostile_request_gets_a_4xx_with_a_message(client, body, headers, status, words):
    token = seat()
    r = post(client, headers.pop(server.TOKEN_HEADER, token), body, **headers)
    assert r.status_code == status and words in r.json()["error"]
    assert "Traceback" not in r.text


def test_a_page_has_one_evaluation_in_flight(client, monkeypatch):
    token = seat()
    started, release = threading.Event(), threading.Event()
    real = server.answer

    def slow(s, message):
        started.set()
        release.wait(5)
        return real(s, message)

    monkeypatch.setattr(server, "answer", slow)
    first = {}
    t = threading.Thread(target=lambda: first.setdefault("r", post(client, token, {"params": {}})))
    t.start()
    assert started.wait(5)
    second = post(client, token, {"params": {}})
    release.set()
    t.join(10)
    assert second.status_code == 429 and first["r"].status_code == 200


def test_seats_are_bounded_and_forget_the_idle():
    seats = server.Seats(limit=3, idle_s=3600)
    x = np.ones((1, 1, 3, 3), np.float32)
    tokens = [seats.open("activation", x) for _ in range(5)]
    assert len(seats.items) == 3 and seats.take(tokens[0]) is None and seats.take(tokens[-1]) is not None
    assert seats.open("activation", x, tokens[-1]) == tokens[-1]  # the page's own seat, kept across its runs
    idle = server.Seats(limit=3, idle_s=0)
    assert idle.take(idle.open("activation", x)) is None
    small = server.Seats(limit=100, idle_s=3600, max_bytes=3 * x.nbytes)  # the inputs' bytes are bounded too
    tokens = [small.open("activation", x + i) for i in range(5)]
    assert len(small.items) == 3 and small.take(tokens[-1]) is not None and small.take(tokens[0]) is None


def framed(answer: dict) -> tuple[dict, bytes]:
    reply, blob = protocol.read_frame(protocol.frame({"answer": answer}))
    return reply["answer"], blob


def test_a_tensor_the_browser_holds_is_not_sent_again():
    layer = get_layer("convolution")
    ev = evaluate("convolution", {}, run=False)
    first, _ = framed(protocol.answer(layer, ev))
    held = frozenset(
        protocol.plane_key(f["tensor"]["id"], p)
        for f in first["figures"]
        if f["which"] in ("input", "kernel")
        for p, _ in f["tensor"]["sent"]
    )
    again = {f["which"]: f["tensor"] for f in framed(protocol.answer(layer, ev, held=held))[0]["figures"]}
    assert again["input"]["sent"] == [] and again["kernel"]["sent"] == [] and again["output"]["sent"] == [[0, 0]]
    other = evaluate("convolution", {"padding_nd": "1,1"}, run=False)
    assert {f["which"]: f["tensor"]["id"] for f in protocol.answer(layer, other)["figures"]}["input"] == again["input"][
        "id"
    ]  # the same input, the same id
    with pytest.raises(protocol.RequestError):
        server.answer(server.Seat("convolution", ev.input), {"params": {}, "have": ["x" * 40]})


def test_softmax_offers_its_axes_by_name():
    layer = get_layer("softmax")
    axes = {c["name"]: c for c in protocol.controls(layer, layer.defaults(), (1, 2, 3, 4))}["axes"]
    assert axes["offered"] == [1, 2, 4, 8] and axes["names"] == [
        "N (axes = 1)",
        "C (axes = 2)",
        "H (axes = 4)",
        "W (axes = 8)",
    ]
    five = {c["name"]: c for c in protocol.controls(layer, layer.resolve({}, (1, 2, 2, 3, 4)), (1, 2, 2, 3, 4))}
    assert five["axes"]["names"][2] == "D (axes = 4)"


def test_the_qr_code_is_of_a_link_to_this_app_only(client, monkeypatch):
    token = seat()
    r = client.post(
        server.QR_ROUTE,
        json={"url": "http://stage.test/convolution?convolution.stride_nd.h=2"},
        headers={server.TOKEN_HEADER: token},
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml") and b"<svg" in r.content
    for url in (
        "http://elsewhere.example/convolution",
        "http://stage.test.evil/x",
        "http://stage.test/" + "a" * 3000,
        42,
    ):
        r = client.post(server.QR_ROUTE, json={"url": url}, headers={server.TOKEN_HEADER: token})
        assert r.status_code == 400 and "link to this app" in r.json()["error"]
    assert client.post(server.QR_ROUTE, json={"url": "http://stage.test/"}).status_code == 401
    monkeypatch.setenv("PLAYGROUND_PUBLIC_URL", "http://room.example:8501/")
    assert server.public_url() == "http://room.example:8501"
    r = client.post(
        server.QR_ROUTE, json={"url": "http://room.example:8501/convolution"}, headers={server.TOKEN_HEADER: token}
    )
    assert r.status_code == 200
    monkeypatch.setenv("PLAYGROUND_PUBLIC_URL", "javascript:alert(1)")
    assert server.public_url() == ""  # not an http(s) address: the page's own address is the link's


def test_a_link_that_leaves_out_what_a_later_parameter_reads_still_opens():
    # resize's shape is used only while scales is unset: a link without resize.scales must say which applies
    layer = get_layer("resize")
    raw = protocol.raw_params(layer, (1, 1, 2, 2), {"resize.shape.h": "3", "resize.shape.w": "3"})
    assert layer.resolve(raw, (1, 1, 2, 2))["shape"] == (3, 3)


def test_a_changes_answer_carries_the_picked_cells_window_and_its_follow_up_every_window(client):
    token = seat()
    query = {"convolution.padding_nd.w": "3"}
    quick = post(client, token, {"params": query, "quick": True, "pick": [0, 0, 1, 2]}).json()["answer"]["cells"]
    assert list(quick["reads"]) == ["0,0,1,2"] and not quick["complete"]  # a slider on the move
    cells = post(client, token, {"params": query, "pick": [0, 0, 1, 2]}).json()["answer"]["cells"]
    assert list(cells["reads"]) == ["0,0,1,2"] and list(cells["lines"]) == ["0,0,1,2"] and not cells["complete"]
    done = post(client, token, {"params": query, "pick": [0, 0, 1, 2], "finish": True}).json()["finish"]["cells"]
    assert done["complete"] and len(done["reads"]) == 4 * 13 and done["reads"]["0,0,1,2"] == cells["reads"]["0,0,1,2"]
    # the input's padded border is drawn from the first answer: it is the follow-up's, every window's
    assert quick["extent"] == cells["extent"] == done["extent"] == {"lo": [0, 0, 0, -3], "hi": [0, 0, 5, 11]}


def test_the_route_offers_the_moved_sliders_neighbours(client, monkeypatch):
    """The request carries texts ('2,1'); the neighbours are stepped from the canonical values, for a per-axis
    parameter, an int and an enum alike."""
    from playground.serve import shared

    offered = []

    class Recorder:
        def foreground(self):
            return contextlib.nullcontext()

        def offer(self, layer, raws, x, **kwargs):
            offered.append(raws)

    monkeypatch.setattr(shared, "prefetcher", lambda: Recorder())
    token = seat()
    for moves, key, want in [
        (("1", "2"), "convolution.stride_nd.h", [(3, 1), (1, 1)]),
        (("1", "2"), "convolution.num_output_maps", [3, 1]),
        (
            ("EXPLICIT_ROUND_DOWN", "EXPLICIT_ROUND_UP"),
            "convolution.padding_mode",
            ["SAME_UPPER", "EXPLICIT_ROUND_DOWN"],
        ),
    ]:
        offered.clear()
        for value in moves:
            assert "answer" in post(client, token, {"params": {key: value}}).json()
        name = key.split(".")[1]
        assert [raw[name] for raw in offered[-1]] == want, (key, offered)


def test_the_neighbours_built_ahead_reuse_the_pages_digest_of_its_input(client, monkeypatch):
    """A page's input is hashed once, when it is opened: its neighbours' evaluations, built ahead, take the seat's
    digest as the page's own evaluations do (an input of 1 M values is 4 MB a hash)."""
    from playground.network import core
    from playground.serve import shared

    x = np.random.default_rng(5).uniform(-4, 4, (1, 1, 16, 16)).astype(np.float32)
    hashed, digest = [], core.digest
    monkeypatch.setattr(core, "digest", lambda a: (hashed.append(a is x), digest(a))[1])
    token = server.SEATS.open("activation", x)
    assert hashed.count(True) == 1  # the seat's, as it opens
    before = shared.prefetcher().built
    for value in ("0.5", "0.25"):
        assert "answer" in post(client, token, {"params": {"activation.type": "ELU", "activation.alpha": value}}).json()
    assert shared.prefetcher().idle(timeout=120) and shared.prefetcher().built >= before + 2  # both neighbours
    assert hashed.count(True) == 1


@pytest.mark.parametrize("name", ["convolution", "deconvolution", "pooling"])
def test_same_padding_modes_leave_the_explicit_padding_unused(name):
    layer = get_layer(name)
    shape = layer.example_shape
    padding = {"padding_nd", "pre_padding", "post_padding"}
    for mode, used in (("SAME_UPPER", False), ("SAME_LOWER", False), ("EXPLICIT_ROUND_UP", True)):
        p = layer.resolve({"padding_mode": mode}, shape)
        c = {c["name"]: c for c in protocol.controls(layer, p, shape)}
        assert all(c[n]["used"] is used for n in padding), mode
        if not used:
            assert all("padding_mode EXPLICIT" in c[n]["why_unused"] for n in padding)
            # a link's padding under SAME_* is not read: the mode decides the padding
            q = {f"{name}.padding_mode": mode, f"{name}.padding_nd.h": "2"}
            assert "padding_nd" not in protocol.raw_params(layer, shape, q)


def test_badges_say_in_plain_words_what_they_judge():
    layer = get_layer("convolution")
    a = protocol.answer(layer, evaluate("convolution", {}, run=False))
    ex = a["example"]
    assert ex["badge"] == "matches the cookbook's table" and "✓" not in ex["badge"]
    assert "within" in ex["message"] or "exactly" in ex["message"]  # the tolerance: on hover, beside the words
    int8 = protocol.answer(layer, evaluate("convolution", {"precision": "INT8"}, run=False))
    if int8["example"]:  # INT8 of the spec's table: the verdict names the table, never a bare ✓ beside the error
        assert "cookbook's table" in int8["example"]["badge"]
    label, face = a["source"]["label"], a["source"]["detail"]
    if not a["source"]["tensorrt"]:  # the output is the reference: the hover's sentence says so
        assert label.endswith("the output is the NumPy reference")
    # the badge's face: the builder and its engine's status, in few enough words to read whole on a projector
    statuses = "|".join(map(re.escape, protocol.ENGINE_STATUS.values()))
    assert re.fullmatch(rf"(TensorRT|TensorRT-RTX) engine ({statuses})|no TensorRT builder: .+", face), face
    assert len(face) <= 40, face


# Windowed geometries whose padding is read unevenly: strides that skip the last cells, dilation, explicit pre/post
# and the SAME modes (the corners' windows must still reach as far as any cell's).
UNEVEN = [
    ("convolution", {"stride_nd": "2,3", "padding_nd": "1,2"}),
    (
        "convolution",
        {"dilation_nd": "2,2", "padding_nd": "2,1", "padding_mode": "EXPLICIT_ROUND_UP", "stride_nd": "2,2"},
    ),
    ("convolution", {"padding_mode": "SAME_UPPER", "stride_nd": "2,2"}),
    ("convolution", {"pre_padding": "2,0", "post_padding": "0,3"}),
    ("pooling", {"window_size_nd": "3,3", "stride_nd": "2,2", "padding_nd": "1,1", "padding_mode": "SAME_LOWER"}),
    ("deconvolution", {"stride_nd": "2,2", "padding_nd": "1,1"}),
]


def _configurations():
    from playground.network.presets import examples, input_for

    for name in (n for n in NAMES if get_layer(n).reads is not None):  # the layers that draw windows
        yield pytest.param(name, {}, None, id=f"{name}-default")
        for p in examples(name):
            yield pytest.param(name, p.params, input_for(p), id=f"{name}-{p.name}")
    for name, params in UNEVEN:
        yield pytest.param(name, params, None, id=f"{name}-{'-'.join(params.values())}")


@pytest.mark.parametrize("name, params, x", list(_configurations()))
def test_the_padded_extent_a_change_is_drawn_with_is_every_windows(name, params, x):
    """The answer of a change carries the picked cell's window alone, and the input's padded extent from the
    output's corners: it is the extent every cell's window reaches (the follow-up's), so the input's figure keeps
    its border when the follow-up lands."""
    layer, ev = get_layer(name), evaluate(name, params, x, run=False)
    assert ev.reference.size <= protocol.READ_MAP_CELLS  # the follow-up sends the whole map
    part = protocol.read_map(layer, ev, None, lines=1, every=False)
    whole = protocol.read_map(layer, ev, None)
    assert whole["complete"] and len(whole["reads"]) == ev.reference.size and len(part["reads"]) == 1
    assert part["extent"] == whole["extent"] == protocol.extent(ev.input.shape, whole["reads"].values())
