"""The route's answers are the planes the stage draws, in binary, with the whole tensor's stats: a large
configuration's answer is small, its stats and colour range are NumPy's over the whole tensor, a plane asked for
later (a page turned) is the tensor's slice, and a plane the browser holds is not sent again."""

import json

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground.base.colours import colour_range
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.serve import protocol, server

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
    assert ranges["input"] == colour_range(x) and ranges["output"] == colour_range(y)


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


MiB = 1 << 20


def test_what_pages_hold_is_bounded_by_the_seats_cap(client, monkeypatch):
    """Pages at a large size each hold their input, their last answer's evaluation (an FP16 output, its float64
    truth, its error maps) and the tensors kept for pages turned: about 12 MiB a page here. Measured by what NumPy
    allocated and is still alive once core's own memos are let go, eight such pages stay within the seats' cap."""
    import gc
    import tracemalloc

    from playground.network import core
    from playground.serve import shared

    cap = 24 * MiB
    monkeypatch.setattr(server, "SEATS", server.Seats(max_bytes=cap))
    rng = np.random.default_rng(1)
    ask = {"params": {"activation.type": "SIGMOID", "activation.precision": "FP16"}}
    post(client, server.SEATS.open("activation", np.ones((1, 1, 4, 4), np.float32)), ask)  # the modules imported
    # what earlier tests asked the builder ahead for would allocate inside the measure: it must be done first
    assert shared.prefetcher().idle(timeout=120)
    tracemalloc.start()
    try:
        tokens = []
        for _ in range(8):
            tokens.append(server.SEATS.open("activation", rng.uniform(-4, 4, SHAPE).astype(np.float32)))
            post(client, tokens[-1], ask)
        core._references.clear()
        core._measures.clear()
        gc.collect()
        alive, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert alive <= cap + 3 * MiB, f"{alive / MiB:.0f} MiB alive"  # 8 pages unbounded would be 96
    assert server.SEATS.total <= cap + 16 * MiB  # the newest page keeps what it holds, whatever it weighs
    assert server.SEATS.total == sum(s.held for s in server.SEATS.items.values())


def test_over_the_cap_the_kept_tensors_go_first_and_the_page_asks_again_with_its_page(client, monkeypatch):
    """The first page's kept tensors, then its evaluation, go before any page's seat: its planes are gone, and
    its configuration asked for again with the page shown is answered with those planes."""
    x = np.random.default_rng(2).uniform(-4, 4, SHAPE).astype(np.float32)
    one = 2 * MiB  # a tensor of SHAPE
    monkeypatch.setattr(server, "SEATS", server.Seats(max_bytes=7 * one))
    first = server.SEATS.open("activation", x)
    _, reply, _ = post(client, first, {"params": {"activation.type": "TANH"}})
    out = next(f["tensor"] for f in reply["answer"]["figures"] if f["which"] == "output")
    seat = server.SEATS.take(first)
    assert seat.kept and seat.evaluated is not None and seat.held == 2 * one  # the input, the output (kept: the same)
    others = []
    for i in range(3):  # 2 tensors a page: the fourth page's answer passes the cap by one tensor
        others.append(server.SEATS.open("activation", x + i + 1))
        post(client, others[-1], {"params": {"activation.type": "TANH"}})
    assert not seat.kept and seat.evaluated is None and seat.held == one  # its input stays
    second = server.SEATS.items[others[0]]  # every page's kept tensors went before the first's evaluation
    assert not second.kept and second.evaluated is not None
    assert all(server.SEATS.take(t) is not None for t in [first, *others])
    assert server.SEATS.total <= 7 * one
    _, planes, _ = post(client, first, {"planes": [[out["id"], 28, 4]]}, server.PLANES_ROUTE)
    assert planes["gone"] == [out["id"]] and planes["tensors"] == []
    _, again, blob = post(client, first, {"params": {"activation.type": "TANH"}, "pages": {"output": [28, 4]}})
    t = next(f["tensor"] for f in again["answer"]["figures"] if f["which"] == "output")
    assert t["id"] == out["id"] and [p for p, _ in t["sent"]] == [28, 29, 30, 31]
    y = np.tanh(x.astype(np.float64)).astype(np.float32).reshape(-1, *SHAPE[2:])
    for p, at in t["sent"]:
        plane = np.frombuffer(blob, "<f4", SHAPE[2] * SHAPE[3], at * 4).reshape(SHAPE[2:])
        np.testing.assert_allclose(plane, y[p], rtol=1e-6, atol=1e-7)
    # a page's seat goes only once no page keeps anything beside its input (the newest aside), least recent first
    while first in server.SEATS.items:
        pages = list(server.SEATS.items)
        server.SEATS.open("activation", x - len(pages))
    assert set(server.SEATS.items) == set(pages[1:]) | {next(reversed(server.SEATS.items))}
    assert all(s.held == s.input_bytes for s in list(server.SEATS.items.values())[:-1])
    assert server.SEATS.total <= 7 * one


def test_a_follow_up_whose_evaluation_the_cap_let_go_evaluates_it_again_once(client, monkeypatch):
    """The drawn answer's follow-up (`finish`: the engine's verdict, ONNX Runtime's badge) of a page whose
    evaluation went under the pages' cap meanwhile is answered: the configuration is evaluated once more. A page
    that has moved on is still answered nothing (its own follow-up comes)."""
    from playground.network import core

    x = np.random.default_rng(3).uniform(-4, 4, SHAPE).astype(np.float32)
    one = 2 * MiB  # a tensor of SHAPE
    monkeypatch.setattr(server, "SEATS", server.Seats(max_bytes=7 * one))
    first = server.SEATS.open("activation", x)
    ask = {"params": {"activation.type": "SIGMOID"}}
    post(client, first, ask)
    for i in range(3):  # the fourth page's answer lets the first's evaluation go
        post(client, server.SEATS.open("activation", x + i + 1), ask)
    seat = server.SEATS.take(first)
    assert seat.evaluated is None
    evaluations, real = [], core.evaluate
    monkeypatch.setattr(core, "evaluate", lambda *a, **k: evaluations.append(a[:2]) or real(*a, **k))

    def finish(params):
        r = client.post(
            server.ROUTE,
            content=json.dumps({"params": params, "finish": True}),
            headers={server.TOKEN_HEADER: first, "content-type": "application/json"},
        )
        assert r.status_code == 200, r.text
        return r.json()["finish"]

    assert finish({"activation.type": "TANH"}) is None and not evaluations  # not the configuration drawn
    done = finish(ask["params"])
    assert done is not None and done["engine"]["status"] in protocol.ENGINE_STATUS, done
    assert evaluations == [("activation", {"type": "SIGMOID"})]
    assert seat.evaluated is not None and seat.evaluated[1].params["type"] == "SIGMOID"
    assert finish(ask["params"]) is not None and len(evaluations) == 1  # remembered again: not evaluated twice


def test_the_pages_input_is_hashed_once_for_its_every_answer(client, large, monkeypatch):
    """The seat's digest of its input, made when the page opened it, is the evaluations' cache key's and the input
    figure's id: no answer passes over the input to hash it again (nor compare mode's second evaluation)."""
    from playground.network import core

    token, x = large
    hashed = []
    real = core.digest
    monkeypatch.setattr(core, "digest", lambda a: hashed.append(a) or real(a))
    ids = []
    for params, compare in (({"activation.type": "RELU"}, None), ({"activation.precision": "FP16"}, "BF16")):
        _, reply, _ = post(client, token, {"params": params, "compare": compare})
        ids += [f["tensor"]["id"] for f in reply["answer"]["figures"] if f["which"] == "input"]
    assert not any(np.shares_memory(a, x) for a in hashed)
    assert len(hashed) == 1 + 3  # the figures: RELU's output; FP16's and BF16's outputs and their difference
    assert ids == [protocol.tensor_id(x)] * 2  # the same id as the values hashed afresh


@pytest.fixture(scope="module")
def tight_app(tmp_path_factory):
    """The app with a pages' cap of 1.75 MiB: two pages on a 1·8·128·128 input (512 KiB a tensor) hold 2 MiB, and
    the second page's answer lets the first's kept tensors and evaluation go (its input, 0.5 MiB, stays)."""
    from playground.chromium import browser as B

    cache = str(tmp_path_factory.mktemp("engine_cache"))
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache, "PLAYGROUND_PAGES_MB": "1.75"}) as url:
        yield url


@pytest.mark.browser
def test_a_page_whose_kept_tensors_went_turns_its_page_by_asking_again(browser, tight_app):
    from playground.chromium import browser as B

    link = f"{tight_app}/activation?" + "&".join(
        f"activation.input.{k}={v}" for k, v in {"kind": "random", "N": 1, "C": 8, "H": 128, "W": 128}.items()
    )
    stage = ".pg-stage"
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    pages, errors = [], []
    for seed in (1, 2):  # the second page's input differs: a seat of its own
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{link}&activation.input.seed={seed}")
        page.wait_for_selector(f'{stage}[data-drawn] [data-figure="output"] canvas')
        pages.append(page)
    first = pages[0]
    replies = []
    first.on("response", lambda r: replies.append(r) if "/api/stage/" in r.url else None)
    pager = f'{stage} [data-figure="input"] .pg-pager'
    held = (
        "() => [...document.querySelector('.pg-stage').__stage.answer.figures.find((f) => f.which === 'input')"
        ".t.planes.keys()].sort()"
    )
    assert "planes 1–4 of 8" in first.inner_text(pager) and first.evaluate(held) == [0, 1, 2, 3]
    stats = first.inner_text(f'{stage} [data-figure="input"] .pg-stats')
    first.click(f"{pager} button[aria-label^='next']")
    first.wait_for_function("s => document.querySelector(s).innerText.includes('5–8 of 8')", arg=pager)
    first.wait_for_function(f"() => ({held})().length === 8")
    assert first.inner_text(f'{stage} [data-figure="input"] .pg-stats') == stats
    routes = [r.url.rsplit("/", 1)[-1] for r in replies]
    assert routes[:2] == ["planes", "evaluate"], routes  # the planes were gone: the configuration asked for again
    gone, _ = protocol.read_frame(replies[0].body())
    assert gone["gone"] and not gone["tensors"]
    assert not errors
    ctx.close()
