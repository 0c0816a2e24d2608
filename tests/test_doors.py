"""Every door holds: the stage's route, model uploads, the room's command and the last good state after a refusal,
each tried as a hostile participant would (issue "Every door holds"). Each test is one reproduction: a clear
message naming the parameter and the rule, no traceback, no HTTP 500, the last good figures kept, nothing typed
rendered live.
"""
from __future__ import annotations

import io
import json
import logging
import socket
import threading
import time

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground import blobs
from playground.layers import get_layer
from playground.stage import protocol, server


@pytest.fixture()
def client():
    return TestClient(Starlette(routes=server.routes()), base_url="http://stage.test", raise_server_exceptions=False)


def seat(layer="convolution"):
    L = get_layer(layer)
    return server.SEATS.open(layer, L.example_input(L.example_shape))


def post(client, body, route=server.ROUTE, token=None):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(route, content=data, headers={server.TOKEN_HEADER: token or seat(),
                                                     "content-type": "application/json"})


# -- the stage's route --------------------------------------------------------------------------------------------
DEEP = 10_000


@pytest.mark.parametrize("body", [
    "[" * DEEP + "]" * DEEP,
    '{"params":' + "[" * DEEP + "]" * DEEP + "}",
    '{"params":{"convolution.stride_nd.h":' + "[" * 2000 + "]" * 2000 + "}}",
    '{"params":{"convolution.stride_nd.h":"[[[[\\"[["}, "pick":[[[[[[[[[[1]]]]]]]]]]}',
])
@pytest.mark.parametrize("route", [server.ROUTE, server.QR_ROUTE])
def test_a_deeply_nested_body_is_refused_by_the_rule(client, body, route):
    assert len(body) < server.MAX_BODY_BYTES
    r = post(client, body, route)
    assert r.status_code == 400, r.text
    assert f"nests arrays and objects more than {server.MAX_DEPTH} deep" in r.json()["error"]


def test_nesting_is_counted_outside_strings_only(client):
    assert server.depth(b'{"a":"[[[[[[[[[[[[\\"[[[[","b":[[1]]}') == 3
    assert server.depth(b"[" * 65_000) == 65_000
    start = time.perf_counter()  # a pass over the body, however its quotes and backslashes fall
    for body in (b'"\\' * 20_000, b'\\"' * 30_000, b'"' + b"a" * 65_000):
        server.depth(body)
    assert time.perf_counter() - start < 1
    r = post(client, {"params": {"convolution.kernel": "[[1]]"}})  # brackets in a value are text
    assert r.status_code == 200 and ("problem" in r.json() or "answer" in r.json())


@pytest.mark.parametrize("kind", ["pickle", "object_array", "complex", "structured", "not_npy"])
def test_weights_that_are_not_a_plain_numeric_array_are_refused_by_name(client, kind):
    buffer = io.BytesIO()
    if kind == "pickle":
        import pickle

        pickle.dump({"a": 1}, buffer)
    elif kind == "object_array":
        np.save(buffer, np.array([{"a": 1}] * 300, dtype=object), allow_pickle=True)
    elif kind == "complex":
        np.save(buffer, np.ones(300, np.complex64))
    elif kind == "structured":
        np.save(buffer, np.zeros(300, dtype=[("a", "<f4"), ("b", "<i4")]))
    else:
        buffer.write(b"\x93NUMPY but not really" * 20)
    digest = blobs.store().put(buffer.getvalue(), ".npy")  # as a replica sharing the store could leave it
    r = post(client, {"params": {"convolution.kernel": blobs.WEIGHTS + digest}})
    assert r.status_code == 200, r.text
    problem = r.json()["problem"]
    assert problem["keys"] == ["convolution.kernel"] and "is not a plain numeric array" in problem["message"]


@pytest.mark.parametrize("param", ["stride_nd", "padding_nd", "dilation_nd", "kernel_size_nd"])
@pytest.mark.parametrize("empty", ["", " ", "\t"])
def test_an_emptied_axis_is_refused_on_its_own_key_never_the_other_axis_value(client, param, empty):
    k = f"convolution.{param}"
    r = post(client, {"params": {f"{k}.h": empty, f"{k}.w": "3"}})
    assert r.status_code == 400 and r.json()["keys"] == [f"{k}.h"], r.text
    assert r.json()["error"] == f"{k}.h: must be a whole number (it is empty)"
    r = post(client, {"params": {f"{k}.h": "2", f"{k}.w": "1,2"}})  # one axis cannot hold the others' values
    assert r.status_code == 400 and r.json()["keys"] == [f"{k}.w"], r.text
    with pytest.raises(protocol.RequestError) as err:  # the page's own reading of a link: the same rule
        protocol.raw_params(get_layer("convolution"), (1, 1, 6, 9), {f"{k}.w": empty})
    assert err.value.key == f"{k}.w"


def test_a_text_over_the_cap_names_its_key_for_the_stage_to_mark(client):
    r = post(client, {"params": {"convolution.kernel": "1," * protocol.MAX_TEXT}})
    assert r.status_code == 400 and r.json()["keys"] == ["convolution.kernel"]
    assert f"must be text of at most {protocol.MAX_TEXT} characters" in r.json()["error"]


@pytest.fixture()
def live_route():
    """The route served by uvicorn on a free port, its log captured: (port, log text so far)."""
    import uvicorn

    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    loggers = [logging.getLogger(n) for n in ("uvicorn.error", "uvicorn.access", server.__name__)]
    for lg in loggers:
        lg.addHandler(handler)
    logging.getLogger(server.__name__).setLevel(logging.INFO)
    config = uvicorn.Config(Starlette(routes=server.routes()), host="127.0.0.1", port=0, log_config=None,
                            timeout_keep_alive=1)
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield srv.servers[0].sockets[0].getsockname()[1], lines.getvalue
    srv.should_exit = True
    thread.join(10)
    for lg in loggers:
        lg.removeHandler(handler)


def test_stalled_bodies_and_disconnects_are_a_line_each_not_a_traceback(live_route):
    port, log = live_route
    token, stalled = seat(), []
    for _ in range(20):  # a declared length never sent, then the client goes
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"POST {server.ROUTE} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{server.TOKEN_HEADER}: {token}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"params\"".encode())
        stalled.append(s)
    time.sleep(0.5)
    for s in stalled:
        s.close()
    deadline = time.monotonic() + 10
    while log().count("disconnected before its request body") < 20 and time.monotonic() < deadline:
        time.sleep(0.1)
    text = log()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text[:2000]
    assert text.count("disconnected before its request body") == 20
