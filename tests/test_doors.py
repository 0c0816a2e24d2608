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
from pathlib import Path

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground.base import blobs
from playground.layers import get_layer
from playground.serve import protocol, server

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def client():
    return TestClient(Starlette(routes=server.routes()), base_url="http://stage.test", raise_server_exceptions=False)


def seat(layer="convolution"):
    L = get_layer(layer)
    return server.SEATS.open(layer, L.example_input(L.example_shape))


def post(client, body, route=server.ROUTE, token=None):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(
        route, content=data, headers={server.TOKEN_HEADER: token or seat(), "content-type": "application/json"}
    )


# -- the stage's route --------------------------------------------------------------------------------------------
DEEP = 10_000


@pytest.mark.parametrize(
    "body",
    [
        "[" * DEEP + "]" * DEEP,
        '{"params":' + "[" * DEEP + "]" * DEEP + "}",
        '{"params":{"convolution.stride_nd.h":' + "[" * 2000 + "]" * 2000 + "}}",
        '{"params":{"convolution.stride_nd.h":"[[[[\\"[["}, "pick":[[[[[[[[[[1]]]]]]]]]]}',
    ],
)
@pytest.mark.parametrize("route", [server.ROUTE, server.QR_ROUTE, server.PLANES_ROUTE])
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
    from apptest import read

    assert r.status_code == 200 and ("problem" in read(r) or "answer" in read(r))


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


@pytest.mark.parametrize("layer, k", [("convolution", "convolution.kernel"), ("shuffle", "shuffle.reshape_dims")])
def test_a_text_over_the_cap_names_its_key_for_the_stage_to_mark(client, layer, k):
    r = post(client, {"params": {k: "1," * protocol.MAX_TEXT}}, token=seat(layer))
    assert r.status_code == 400 and r.json()["keys"] == [k]
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
    config = uvicorn.Config(
        Starlette(routes=server.routes()), host="127.0.0.1", port=0, log_config=None, timeout_keep_alive=1
    )
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
        s.sendall(
            f"POST {server.ROUTE} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{server.TOKEN_HEADER}: {token}\r\n"
            f'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"params"'.encode()
        )
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


# -- the last good state after a refusal --------------------------------------------------------------------------
def _input_figure(at) -> tuple[list, str]:
    from apptest import stage_answer

    f = next(f for f in stage_answer(at)["figures"] if f["which"] == "input")
    return f["tensor"]["shape"], f["tensor"]["id"]


def _image(fmt: str, size=(6, 9)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, format=fmt)
    return buffer.getvalue()


def _bomb_header() -> bytes:  # a PNG whose header declares 65,500 × 65,500 pixels, 60 bytes long
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", 65_500, 65_500, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


REFUSED_IMAGES = {
    "not_an_image": b"hello, this is text",
    "empty": b"",
    "truncated": _image("PNG")[:40],
    "huge_header": _bomb_header(),
    "svg_renamed": b'<svg xmlns="http://www.w3.org/2000/svg" width="9" height="6"></svg>',
    "gif_renamed": _image("GIF"),
}


@pytest.mark.parametrize("kind", sorted(REFUSED_IMAGES))
def test_a_refused_image_upload_keeps_the_stage_and_its_last_good_input(kind):
    from apptest import open_page, rerun

    at = open_page("convolution")
    before = _input_figure(at)
    at.selectbox(key="convolution.input.kind").set_value("image")
    rerun(at)
    assert _input_figure(at) == before  # no image yet: the last good input stays, the page says why
    assert any("upload" in e.value for e in at.error)
    at.file_uploader(key="convolution.input.image").set_value((f"{kind}.png", REFUSED_IMAGES[kind], "image/png"))
    rerun(at)
    errors = [e.value for e in at.error]
    assert errors and all("Traceback" not in e for e in errors) and any("upload" in e for e in errors), errors
    assert any("last good input" in e for e in errors)
    assert _input_figure(at) == before, "the stage lost its last good input"
    at.file_uploader(key="convolution.input.image").set_value(("ok.png", _image("PNG"), "image/png"))
    rerun(at)  # a good image after the refusal: drawn
    assert not at.error and _input_figure(at)[1] != before[1]


def test_a_constant_beyond_float32_keeps_the_figures():
    from apptest import open_page, rerun

    at = open_page("convolution")
    at.selectbox(key="convolution.input.kind").set_value("constant")
    rerun(at)
    good = _input_figure(at)
    at.number_input(key="convolution.input.value").set_value(1e39)
    rerun(at)
    assert [e.value for e in at.error if "input.value: must be a finite float32 number" in e.value]
    assert _input_figure(at) == good


# -- text a user gave is shown as given ---------------------------------------------------------------------------
HOSTILE_NAMES = ["![i](http://evil.example/x.png)", "[x](javascript:alert(1))", "line1\nline2 **bold**"]


def _prelu_chain(names: list[str]):
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, prev = [], [], "x"
    for i, name in enumerate(names):
        inits.append(numpy_helper.from_array(np.full((2, 1, 1), 0.25, np.float32), f"s{i}"))
        nodes.append(helper.make_node("PRelu", [prev, f"s{i}"], [f"y{i}"], name=name))
        prev = f"y{i}"
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 2, 4, 4])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_node_names_are_listed_as_text_not_markdown():
    from apptest import open_page, rerun
    from test_hostile import live

    from playground.ui.messages import inert

    at = open_page("prelu")
    model = _prelu_chain(HOSTILE_NAMES)
    at.file_uploader(key="prelu.onnx_upload").set_value(
        ("names.onnx", model.SerializeToString(), "application/octet-stream")
    )
    rerun(at)
    labels = [e.proto.label for e in at.get("page_link")]
    listed = [lb for lb in labels if "PRelu" in lb]
    assert len(listed) == len(HOSTILE_NAMES), labels
    for name, label in zip(HOSTILE_NAMES, listed):
        assert label.startswith(inert(name)), label  # the name, escaped: it reads as given
        assert not any(c in label for c in ("](http", "](javascript")) or "\\]" in label
        assert live(label.replace("\\*\\*", "")) == [] and "**bold**" not in label


def test_node_names_reach_the_terminal_as_text_not_escape_sequences(tmp_path, capsys):
    from playground import cli

    names = ["\x1b]0;owned\x07\x1b[2J", "left\u202eright", "a\rb"]  # a title, a clear, a reversal, a carriage return
    path = tmp_path / "names.onnx"
    path.write_bytes(_prelu_chain(names).SerializeToString())
    for argv in (["onnx", str(path)], ["model", str(path)], ["run", "--onnx", str(path), "--node", names[0]]):
        cli.main(argv)
        out = capsys.readouterr()
        text = out.out + out.err
        assert not any(c in text for c in "\x1b\x07\r\u202e"), (argv, text)
        assert "\\x1b]0;owned\\x07" in text, (argv, text)  # the name, escaped: it reads as given


def _model_of_size(size: int) -> bytes:
    """An ONNX model (one PRelu node) of exactly `size` bytes: its doc string pads it."""
    model = _prelu_chain(["p"])
    pad = size - len(model.SerializeToString()) - 8
    for _ in range(4):  # the doc string's length prefix grows with it
        model.doc_string = "x" * pad
        pad += size - len(model.SerializeToString())
    data = model.SerializeToString()
    assert len(data) == size
    return data


def test_a_model_of_exactly_the_cap_is_accepted_and_one_byte_more_refused_in_one_unit(tmp_path, monkeypatch):
    import tomllib

    from playground.onnx import reading
    from playground.ui import models

    monkeypatch.setattr(blobs, "_store", blobs.BlobStore(tmp_path))
    cap = reading.MAX_MODEL_BYTES
    assert cap == 64 << 20 and models.CAP_MIB == 64
    digest, model = reading.remember(_model_of_size(cap), "cap.onnx")  # exactly 64 MiB: accepted
    assert len(model.graph.node) == 1 and blobs.DIGEST.match(digest)
    with pytest.raises(Exception) as err:
        reading.remember(_model_of_size(cap + 1), "over.onnx")
    assert f"the cap is {cap:,}" in str(err.value) and "onnx.model" in str(err.value)
    # The browser's widget lets a model of the cap through (it counts 10^6 bytes a megabyte, or 1024²), and so does
    # the server's upload route (maxUploadSize MiB, against the request's length with its multipart framing).
    assert models.WIDGET_MB * 10**6 >= cap and models.WIDGET_MB * 10**6 < cap + (1 << 20)
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
    assert config * 2**20 >= cap + 64 * 1024 and config * 2**20 >= models.WIDGET_MB * 10**6
    readme = (ROOT / "README.md").read_text()
    assert "64 MB" not in readme.replace("64 MB of tensors", "") and "64 MiB" in readme


def test_the_upload_widget_says_the_cap_in_the_unit_the_check_uses():
    from apptest import open_page

    at = open_page("prelu")
    widget = at.file_uploader(key="prelu.onnx_upload")
    assert "at most 64 MiB" in widget.label and widget.proto.max_upload_size_mb * 10**6 >= 64 << 20


# -- the command line and `room` ----------------------------------------------------------------------------------
def test_the_room_starts_its_replicas_in_the_checkout():
    """Each replica is `streamlit run app.py` from the checkout's root (a root one folder off would run it where a
    module of playground/ stands in for the standard library's)."""
    from playground.serve import room

    assert (room.ROOT / "app.py").is_file() and (room.ROOT / "playground" / "serve" / "room.py").is_file()


def _room(*args, timeout=30):
    """`python -m playground room ARGS`; one that starts after all is stopped as Ctrl-C stops it (SIGTERM: the
    room stops its proxy and replicas), and the test fails."""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", "room", "--replicas", "1", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"room started with {args}: {out} {err}")
    return proc.returncode, err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "case, option, rule",
    [
        ("public_javascript", "--public-url", "must be an http:// or https:// address"),
        ("public_words", "--public-url", "must be an http:// or https:// address"),
        ("cache_under_a_file", "--cache", "is a file, so no directory can be made under it"),
        ("cache_is_a_file", "--cache", "is a file; it must name a directory"),
        ("first_port_beyond", "--first-port", "must leave room for 1 replica ports: between 1 and 65535"),
        ("first_port_two_at_the_top", "--first-port", "must leave room for 2 replica ports: between 1 and 65534"),
        ("port_in_use", "--port", "is in use on 127.0.0.1"),
        ("bind_not_an_address", "--bind", "must be an address of this machine"),
    ],
)
def test_room_options_are_checked_before_anything_starts(case, option, rule, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    port = _free_port()
    args = {
        "public_javascript": ["--public-url", "javascript:alert(1)"],
        "public_words": ["--public-url", "not a url"],
        "cache_under_a_file": ["--cache", str(a_file / "cache")],
        "cache_is_a_file": ["--cache", str(a_file)],
        "first_port_beyond": ["--first-port", "70000"],
        "first_port_two_at_the_top": ["--first-port", "65535", "--replicas", "2"],
        "port_in_use": [],
        "bind_not_an_address": ["--bind", "999.1.1.1"],
    }[case]
    with socket.socket() as busy:
        if case == "port_in_use":
            busy.bind(("127.0.0.1", port))
            busy.listen()
        start = time.monotonic()
        rc, err = _room("--port", str(port), "--bind", "127.0.0.1", *args)
    assert rc == 2 and "Traceback" not in err, err
    assert err.startswith(f"error: room.{option}: ") and rule in err, err
    assert time.monotonic() - start < 20


def _cli(*args, timeout=120):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    "shape, rule",
    [
        ((1, 2, 1000, 4), "input.H: must be between 1 and 512 (got 1000)"),
        ((64, 64, 64, 64), "input.shape: the budget is 8,388,608 values per tensor (PLAYGROUND_MAX_ELEMENTS)"),
    ],
)
def test_the_listing_and_run_agree_on_a_node_and_a_refusal_is_exit_2_naming_the_rule(shape, rule, tmp_path):
    import onnx
    from onnx_cases import node_model

    path = tmp_path / "prelu.onnx"
    onnx.save(node_model("PRelu", shape, {"s": np.full((shape[1], 1, 1), 0.25, np.float32)}), path)
    listed = _cli("onnx", str(path), "--json")
    assert listed.returncode == 0, listed.stderr
    (node,) = json.loads(listed.stdout)["nodes"]
    assert node["layer"] is None and rule in node["reason"]  # the listing says it does not open, and why
    ran = _cli("run", "--onnx", str(path))
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and rule in ran.stderr, ran.stderr


# -- links --------------------------------------------------------------------------------------------------------
def _link_warnings(at) -> str:
    return "\n".join(w.value for w in at.warning)


@pytest.mark.parametrize(
    "sizes",
    [
        {"N": "100", "C": "5000", "D": "600"},  # each beyond its range
        {"N": "64", "C": "4096", "D": "512"},
    ],
)  # each at its maximum: beyond the budget
def test_a_link_with_several_sizes_refused_names_every_one(sizes):
    from apptest import open_page

    at = open_page(
        "convolution", **{"convolution.input.3d": "true"}, **{f"convolution.input.{d}": v for d, v in sizes.items()}
    )
    shown = _link_warnings(at)
    if sizes["N"] == "64":
        assert "these together break the budget of 8,388,608 values per tensor" in shown, shown
    for d, v in sizes.items():
        k = f"convolution.input.{d}"  # alone (its range), or with the others that break the budget together
        assert f"URL parameter {k}: must be between" in shown or f'{k} (got "{v}")' in shown, shown
        assert f'(got "{v}")' in shown, shown
        assert f"convolution.input.{d}" not in at.query_params  # replaced by the default
    assert not at.error


def test_a_preset_link_with_a_bad_parameter_names_it_and_a_good_one_applies():
    from apptest import open_page, stage_data

    at = open_page("convolution", preset="stride_nd_2_2", **{"convolution.num_groups": "5", "convolution.input.H": "8"})
    shown = _link_warnings(at)
    assert 'URL parameter convolution.num_groups: must divide the input channels C=1 (got "5")' in shown, shown
    assert "URL parameter convolution.input.H: the example stride_nd_2_2 sets the input" in shown
    assert at.query_params["convolution.stride_nd.h"] == "2"  # the example opened
    at = open_page("convolution", preset="stride_nd_2_2", **{"convolution.padding_nd.h": "1"})
    assert not _link_warnings(at) and stage_data(at)["answer"]["shapes"].endswith("Output (1, 1, 3, 4)")


# -- a hostile run over the route ---------------------------------------------------------------------------------
HOSTILE_VALUES = [
    "",
    " ",
    "\t\n",
    "1e400",
    "-1e400",
    "nan",
    "-inf",
    "0",
    "-1",
    "99999999999999999999",
    "1.5",
    "1,2,3,4,5,6,7",
    ",",
    "[[1]]",
    "@w:" + "0" * 64,
    "@w:zz",
    "true",
    "\u00a0",
    "𝟙",
    "1" * 5000,
    "![i](http://evil.example/x.png)",
    "<script>alert(1)</script>",
]
HOSTILE_JSON = [None, 1, 1.5, True, [], {}, ["1"], {"a": "1"}]


@pytest.mark.parametrize("layer", sorted(__import__("playground.layers", fromlist=["LAYERS"]).LAYERS))
def test_a_hostile_run_over_every_key_of_the_route_gets_no_500(client, layer):
    """Every query key of the page, each hostile text and JSON value alone: an answer, a named refusal or a 400
    with a message (quick: the reference only, no builds)."""
    from apptest import read

    L = get_layer(layer)
    token = server.SEATS.open(layer, L.example_input(L.example_shape))
    start = time.monotonic()
    for k in protocol.query_keys(L, L.example_shape):
        for v in HOSTILE_VALUES + HOSTILE_JSON:
            r = post(client, {"params": {k: v}, "quick": True}, token=token)
            assert r.status_code in (200, 400), (k, v, r.status_code, r.text[:300])
            body = read(r)
            assert "Traceback" not in r.text and "unexpected error" not in r.text, (k, v, r.text[:300])
            if r.status_code == 400:
                assert body["error"], (k, v)
            else:
                assert "answer" in body or body["problem"]["message"], (k, v)
    assert time.monotonic() - start < 120


def test_a_body_declared_and_never_sent_is_answered_408_in_bounded_time(live_route, monkeypatch):
    monkeypatch.setattr(server, "BODY_WAIT_S", 1.0)
    port, log = live_route
    with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
        s.sendall(
            f"POST {server.ROUTE} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{server.TOKEN_HEADER}: {seat()}\r\n"
            f'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"params"'.encode()
        )
        start, reply = time.monotonic(), b""
        while b"}" not in reply and time.monotonic() - start < 10:  # the status line, then the body
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        reply = reply.decode(errors="replace")
    assert reply.startswith("HTTP/1.1 408") and "did not arrive within 1 s" in reply, reply
    assert time.monotonic() - start < 5
    assert "Traceback" not in log()


# -- what leaves ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ours", [True, False])
def test_an_answer_leaves_uncompressed_through_streamlits_middleware(ours):
    """Streamlit gzips every response over 1 kB on its event loop; an answer (float32 planes, which gzip barely
    shrinks) leaves as it is where the app's middleware stands outside Streamlit's: the same request without it is
    gzipped, so this test would see a change that dropped it."""
    from streamlit.web.server.starlette.starlette_app import create_streamlit_middleware

    app = Starlette(
        routes=server.routes(), middleware=(server.middleware() if ours else []) + create_streamlit_middleware()
    )
    client = TestClient(app, base_url="http://stage.test")
    L = get_layer("convolution")
    token = server.SEATS.open("convolution", L.example_input((1, 2, 32, 32)))
    r = client.post(
        server.ROUTE,
        content=json.dumps({"params": {}}),
        headers={server.TOKEN_HEADER: token, "content-type": "application/json", "accept-encoding": "gzip"},
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith(protocol.FRAME_TYPE)
    assert int(r.headers.get("content-length", 0) or len(r.content)) > 1000  # over Streamlit's gzip threshold
    assert r.headers.get("content-encoding") == (None if ours else "gzip")
