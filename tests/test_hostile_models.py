"""The doors a model, a request body and a several-input link open, tried as a hostile participant would: no file
read through a model, no answer amplified past its request, no map or work unbounded, every node reachable by its
own name, and the command line's refusals exit 2 naming the rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.base.errors import ValidationError  # noqa: E402
from playground.onnx import reading  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, timeout=120, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "playground", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def _graph(nodes, inits=(), shape=(1, 1, 2, 2), name="g", outputs=None):
    return helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(shape)) for o in (outputs or [nodes[-1].output[0]])],
        list(inits),
    )


def _model(graph, *opsets) -> onnx.ModelProto:
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), *opsets])


def _external(tensor, location: str, length: int | None = None) -> None:
    """`tensor`'s data said to be in the file `location` (never beside the model in these tests)."""
    for field in ("raw_data", "float_data", "int64_data"):
        tensor.ClearField(field)
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    if length is not None:
        tensor.external_data.add(key="length", value=str(length))


# -- 1. every tensor a model holds goes through the external-data rule ---------------------------------------------
def _sparse_constant(location: str) -> onnx.ModelProto:
    """Add(x, c) where c is a Constant's sparse_value whose 4 values are bytes of the file `location`."""
    values = numpy_helper.from_array(np.zeros(4, np.float32), "c_values")
    _external(values, location, 16)
    indices = numpy_helper.from_array(np.arange(4, dtype=np.int64), "c_indices")
    sparse = helper.make_sparse_tensor(values, indices, [1, 1, 2, 2])
    const = helper.make_node("Constant", [], ["c"], sparse_value=sparse)
    return _model(_graph([const, helper.make_node("Add", ["x", "c"], ["y"], name="add")]))


def _nested(location: str, domain: str) -> onnx.ModelProto:
    """A node (of `domain`) whose graph attribute holds an initializer read from `location`."""
    inner_w = numpy_helper.from_array(np.zeros((1, 1, 2, 2), np.float32), "w")
    _external(inner_w, location)
    body = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["o"])],
        "body",
        [],
        [helper.make_tensor_value_info("o", 1, None)],
        [inner_w],
    )
    if domain:
        node = helper.make_node("Wrap", ["x"], ["y"], name="wrap", domain=domain, body=body)
        return _model(_graph([node]), helper.make_opsetid(domain, 1))
    cond = numpy_helper.from_array(np.array(True), "cond")
    node = helper.make_node("If", ["cond"], ["y"], name="if", then_branch=body, else_branch=body)
    return _model(_graph([node], [cond]))


def _dense_attribute(location: str) -> onnx.ModelProto:
    value = numpy_helper.from_array(np.zeros((1, 1, 2, 2), np.float32), "c")
    _external(value, location)
    const = helper.make_node("Constant", [], ["c"], value=value)
    return _model(_graph([const, helper.make_node("Add", ["x", "c"], ["y"], name="add")]))


MODELS_READING = {
    "sparse_value": _sparse_constant,
    "dense_attribute": _dense_attribute,
    "if_branch": lambda where: _nested(where, ""),
    "other_domain_graph": lambda where: _nested(where, "com.example"),
}


@pytest.mark.parametrize("kind", sorted(MODELS_READING))
@pytest.mark.parametrize("location", ["README.md", ".git/config"])
def test_no_tensor_of_a_model_reads_a_file_it_does_not_own(kind, location, tmp_path):
    data = MODELS_READING[kind](location).SerializeToString()
    with pytest.raises(ValidationError, match="external"):  # an upload: nothing external at all
        reading.load_model(data, "m.onnx")
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    ran = cli("run", "--onnx", str(path), "--output", str(tmp_path / "y.npy"), "--json")
    assert ran.returncode == 2, ran.stdout[-400:] + ran.stderr[-400:]
    assert "external data" in ran.stderr and "Traceback" not in ran.stderr
    assert not (tmp_path / "y.npy").exists()


def test_a_sparse_value_beside_the_model_is_read_within_the_rule(tmp_path):
    (tmp_path / "c.data").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    model = reading.load_model(_sparse_constant("c.data").SerializeToString(), "m.onnx", str(tmp_path))
    assert not any(t.external_data for t, _ in reading._tensors(model.graph))


def test_a_node_of_another_domain_holding_a_graph_is_refused_by_the_no_subgraphs_rule():
    m = _nested("x", "com.example")
    m.graph.node[0].attribute[0].g.ClearField("initializer")
    m.graph.node[0].attribute[0].g.node[0].input[0] = "x"
    with pytest.raises(ValidationError, match="node 'wrap' \\(Wrap\\) holds a graph; subgraphs"):
        reading.load_model(m.SerializeToString(), "m.onnx")


# -- 2. a request body is UTF-8 (or refused) before its nesting is counted ----------------------------------------
@pytest.fixture()
def client():
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from playground.serve import server

    return TestClient(Starlette(routes=server.routes()), base_url="http://stage.test", raise_server_exceptions=False)


def _token(layer="convolution"):
    from playground.layers import get_layer
    from playground.serve import server

    L = get_layer(layer)
    return server.SEATS.open(layer, L.example_input(L.example_shape))


def _post(client, data: bytes, route: str, token: str | None = None):
    from playground.serve import server

    headers = {server.TOKEN_HEADER: token or _token(), "content-type": "application/json"}
    return client.post(route, content=data, headers=headers)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-32-be"])
@pytest.mark.parametrize("route", ["ROUTE", "PLANES_ROUTE", "QR_ROUTE"])
def test_a_body_not_in_utf8_is_refused_before_its_nesting_is_counted(client, encoding, route, caplog):
    from playground.serve import server

    deep = ("[" * 5000 + "]" * 5000).encode(encoding)
    assert len(deep) < server.MAX_BODY_BYTES
    with caplog.at_level("DEBUG"):
        r = _post(client, deep, getattr(server, route))
    # with a byte-order mark it is not UTF-8; without one (UTF-16-LE) its NULs are, and its brackets are counted
    refusals = (
        "the body must be JSON in UTF-8",
        f"the body nests arrays and objects more than {server.MAX_DEPTH} deep",
    )
    assert r.status_code == 400 and r.json()["error"] in refusals, r.text
    assert not [rec for rec in caplog.records if rec.exc_info or rec.levelname in ("ERROR", "CRITICAL")]
    r = _post(client, '{"params": {}}'.encode(encoding), server.ROUTE)  # shallow: still not UTF-8
    assert r.status_code == 400 and ("UTF-8" in r.json()["error"] or "not JSON" in r.json()["error"])


# -- 8, 12, 13, 14: the command line on a hostile model ----------------------------------------------------------
def _relus(names: list[str], shape=(1, 1, 2, 2)) -> onnx.ModelProto:
    tensors = ["x"] + [f"t{i}" for i in range(len(names))]
    nodes = [helper.make_node("Relu", [a], [b], name=n) for a, b, n in zip(tensors, tensors[1:], names)]
    return _model(_graph(nodes, shape=shape))


def test_the_listing_cuts_a_long_name_instead_of_padding_every_line_to_it(tmp_path):
    long = "n" * 200_000
    path = tmp_path / "long.onnx"
    path.write_bytes(_relus([long] + [f"r{i}" for i in range(300)]).SerializeToString())
    for command in ("onnx", "model"):
        ran = cli(command, str(path), *(["--no-engine"] if command == "model" else []))
        assert ran.returncode == 0, ran.stderr
        assert len(ran.stdout) < 100_000, (command, len(ran.stdout))  # was 300 lines × 200,000 characters
        first = ran.stdout.splitlines()[0]
        assert first.startswith("n" * 40) and "…" in first and len(first) < 200
    listed = json.loads(cli("onnx", str(path), "--json").stdout)
    assert listed["nodes"][0]["name"] == long  # --json keeps it whole


def test_the_checkers_refusal_is_kept_whole_and_bounded():
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="one"), helper.make_node("Relu", ["a"], ["b"], name="two")]
    cycle = _model(_graph(nodes, outputs=["b"]))
    with pytest.raises(ValidationError) as err:
        reading.load_model(cycle.SerializeToString(), "cycle.onnx")
    assert "however input 'b' of node: name: one OpType: Relu is not output of any previous nodes" in str(err.value)
    cycle.graph.node[0].name = "x" * 100_000
    with pytest.raises(ValidationError) as err:
        reading.load_model(cycle.SerializeToString(), "cycle.onnx")
    assert len(str(err.value)) < reading.MAX_CHECKER_WORDS + 200 and str(err.value).endswith("…")


@pytest.mark.parametrize("shape", [(1, 1, 10_000, 10_000), (1, 1, 1000, 10)])
def test_model_exits_2_for_a_graph_input_over_the_budget_or_the_pattern(shape, tmp_path):
    path = tmp_path / "big.onnx"  # its output is one value: only its input is over
    pool = helper.make_node("GlobalAveragePool", ["x"], ["y"], name="pool")
    g = helper.make_graph(
        [pool],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])],
    )
    path.write_bytes(_model(g).SerializeToString())
    ran = cli("model", str(path), "--no-engine")
    assert ran.returncode == 2 and "--input" in ran.stderr and "x" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr


def test_model_refuses_an_input_given_twice_as_run_does(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_relus(["r"]).SerializeToString())
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", np.full((1, 1, 2, 2), 1.0 if name == "a" else -1.0, np.float32))
    ran = cli("model", str(path), "--no-engine", "--input", f"x={tmp_path}/a.npy", "--input", f"x={tmp_path}/b.npy")
    assert ran.returncode == 2 and "input x is given twice" in ran.stderr, ran.stderr


# -- 9. every node reachable by its own name -------------------------------------------------------------------------
def test_duplicate_and_colliding_node_names_are_made_unique_and_every_node_is_reachable(tmp_path):
    # two nodes named "dup", an unnamed Relu (made "Relu_2") beside a node given the name "Relu_2"
    names = ["dup", "dup", "", "Relu_2"]
    path = tmp_path / "dup.onnx"
    path.write_bytes(_relus(names).SerializeToString())
    listed = [n["name"] for n in json.loads(cli("onnx", str(path), "--json").stdout)["nodes"]]
    assert listed == ["dup", "dup#1", "Relu_2#2", "Relu_2"]
    for name in listed:  # each name opens its own node
        ran = cli("run", "--onnx", str(path), "--node", name, "--json")
        assert ran.returncode == 0, ran.stderr
        assert json.loads(ran.stdout)["onnx"]["node"] == name
    model = reading.load_model(path.read_bytes(), "dup.onnx")
    from playground.model import whole
    from playground.onnx import opening

    assert [opening.open_node(model, n).data for n in listed] == ["x", "t0", "t1", "t2"]
    answer = whole.analyze(model, "dup.onnx", engine=False)
    assert [n["name"] for n in answer["nodes"]] == listed and all(n["agrees"] for n in answer["nodes"])


# -- 11. a several-input node link judges its inputs as the page feeds them ------------------------------------------
@pytest.mark.parametrize(
    "layer, op, a_shape, const",
    [
        ("elementwise", "Add", [1, 4, 5, 5], np.ones((1, 4, 1, 1), np.float32)),
        ("elementwise", "Mul", [1, 2, 6, 7], np.full((1, 1, 6, 7), 2.0, np.float32)),
        ("matrix_multiply", "MatMul", [1, 1, 5, 3], np.ones((3, 7), np.float32)),
    ],
)
def test_a_several_input_node_link_warns_about_no_key_it_never_gave(layer, op, a_shape, const, tmp_path, monkeypatch):
    """The link writes the controls of the inputs the model computes; a constant operand (B) is the model's, and the
    link's values are judged against it, not against B's default controls."""
    from apptest import open_page, stage_data

    from playground.base import blobs

    monkeypatch.setenv("PLAYGROUND_BLOBS", str(tmp_path))
    monkeypatch.setattr(blobs, "_store", None, raising=False)
    g = helper.make_graph(
        [helper.make_node(op, ["A", "K"], ["Y"], name="n")],
        "g",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, a_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(const, "K")],
    )
    data = onnx.shape_inference.infer_shapes(_model(g)).SerializeToString()
    digest, _ = reading.remember(data, "m.onnx")
    at = open_page(layer, onnx=digest, node="n", model="m.onnx")
    assert [w.value for w in at.warning] == []
    answer = stage_data(at)["answer"]
    shapes = {f["which"]: f["tensor"]["shape"] for f in answer["figures"]}
    assert shapes["input"][-2:] == a_shape[-2:]  # the node's input, not the defaults the warnings put back


# -- 3. a planes request is answered each tensor once, within a cap, in the seat's queue -----------------------------
PLANES_SHAPE = (4, 8, 128, 128)  # 32 planes of 64 KiB: 2 MiB a tensor


def _planes_seat(client):
    from apptest import read

    from playground.serve import server

    x = np.random.default_rng(0).uniform(-4, 4, PLANES_SHAPE).astype(np.float32)
    token = server.SEATS.open("activation", x)
    reply = read(_post(client, json.dumps({"params": {}}).encode(), server.ROUTE, token))
    return token, [f["tensor"]["id"] for f in reply["answer"]["figures"]]


def test_a_planes_request_answers_each_tensor_once_within_the_cap(client, monkeypatch):
    from playground.serve import protocol, server

    monkeypatch.setenv("PLAYGROUND_MAX_ELEMENTS", str(int(np.prod(PLANES_SHAPE))))  # the cap: two such tensors
    token, (tin, tout) = _planes_seat(client)
    r = _post(client, json.dumps({"planes": [[tout, 0, 64]] * 16}).encode(), server.PLANES_ROUTE, token)
    assert r.status_code == 200, r.text
    reply, blob = protocol.read_frame(r.content)
    assert [t["id"] for t in reply["tensors"]] == [tout] and len(blob) == 4 * np.prod(PLANES_SHAPE)
    both = json.dumps({"planes": [[tin, 0, 64], [tout, 0, 64], [tin, 0, 4]]}).encode()
    assert _post(client, both, server.PLANES_ROUTE, token).status_code == 200  # two tensors: exactly the cap
    monkeypatch.setenv("PLAYGROUND_MAX_ELEMENTS", str(int(np.prod(PLANES_SHAPE)) - 1))
    r = _post(client, both, server.PLANES_ROUTE, token)
    assert r.status_code == 413 and "an answer of planes carries at most" in r.json()["error"]
    assert "PLAYGROUND_MAX_ELEMENTS" in r.json()["error"]


def test_a_planes_request_waits_in_the_seats_queue_as_an_evaluation_does(client, monkeypatch):
    import threading

    from playground.serve import server

    token, (_, tout) = _planes_seat(client)
    entered = []

    class Slots:
        def __enter__(self):
            entered.append(threading.current_thread().name)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(server, "_slots", Slots())
    body = json.dumps({"planes": [[tout, 4, 4]]}).encode()
    assert _post(client, body, server.PLANES_ROUTE, token).status_code == 200 and len(entered) == 1
    server.SEATS.take(token).paging = True  # one in flight: a second is told to wait, as evaluate's 429
    r = _post(client, body, server.PLANES_ROUTE, token)
    assert r.status_code == 429 and len(entered) == 1
    server.SEATS.take(token).paging = False
    monkeypatch.setattr(server, "_waiting", server.MAX_WAITING)
    assert _post(client, body, server.PLANES_ROUTE, token).status_code == 503


# -- 4, 5. a read map holds regions and is kept by its bytes; a trace is bounded by its work ----------------------
def _normalization_ev(shape):
    from playground.network.core import evaluate

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    c = (1, shape[1], 1, 1)
    return evaluate(
        "normalization", {}, {"x": x, "scale": np.ones(c, np.float32), "bias": np.zeros(c, np.float32)}, run=False
    )


def test_a_window_that_is_a_whole_group_is_sent_as_its_region():
    from playground.layers import get_layer
    from playground.serve import protocol

    layer = get_layer("normalization")
    ev = _normalization_ev((1, 4, 256, 256))  # each cell reads its channel's 65,536 cells
    cells = protocol.read_map(layer, ev, (0, 2, 5, 7))
    assert cells["reads"]["0,2,5,7"] == {"lo": [0, 2, 0, 0], "hi": [0, 2, 255, 255]}
    assert cells["extent"] == {"lo": [0, 0, 0, 0], "hi": [0, 3, 255, 255]}
    assert len(json.dumps(cells)) < 4000  # was 65,536 cells listed: about 1.3 MB
    reduce = get_layer("reduce")
    from playground.network.core import evaluate

    ev = evaluate("reduce", {"axes": 15, "keep_dims": True}, np.ones((1, 4, 256, 256), np.float32), run=False)
    assert ev.reference.size == 1
    cells = protocol.read_map(reduce, ev, None)
    assert cells["reads"]["0,0,0,0"] == {"lo": [0, 0, 0, 0], "hi": [0, 3, 255, 255]} and len(json.dumps(cells)) < 4000
    # a small window, or one that is not every cell of its bounds in order, stays a list
    assert protocol.window([(0, 0), (0, 1)]) == [[0, 0], [0, 1]]
    holes = [(0, i) for i in range(0, 200, 2)]
    assert protocol.window(holes) == [list(c) for c in holes]
    assert protocol.window(list(reversed([(0, i) for i in range(100)])))[0] == [0, 99]


def test_read_maps_are_kept_by_their_bytes():
    from playground.serve import protocol

    memo = protocol._read_maps
    listed = {f"0,0,{i},0": [[0, 0, i, j] for j in range(60)] for i in range(1000)}  # 60,000 cells listed
    assert protocol._map_bytes(listed) > 60_000 * 36
    assert protocol._map_bytes({"0": {"lo": [0] * 4, "hi": [9] * 4}}) < 1000
    memo.clear()
    for i in range(protocol.READ_MAP_BYTES // protocol._map_bytes(listed) + 5):
        memo.put(("test", i), listed)
    assert memo.total <= protocol.READ_MAP_BYTES and len(memo) < 64
    memo.clear()


def test_tracing_through_two_normalizations_is_bounded_by_its_work(monkeypatch):
    from playground.base.box import Box
    from playground.network import chain as C

    walked = []
    iterate = Box.__iter__
    monkeypatch.setattr(Box, "__iter__", lambda self: walked.append(len(self)) or iterate(self))
    c = C.resolve("normalization+normalization", {}, (1, 1, 96, 96))
    field, stopped = C.receptive_field(c, "normalization2", (0, 0, 5, 5))
    assert not stopped and len(field[C.INPUT]) == 96 * 96
    assert walked == [96 * 96, 96 * 96]  # each group walked once: was 9,217 groups of 9,216 cells
    monkeypatch.setattr(C, "TRACE_WORK", 5000)  # a window read past the work bound stops the trace, said
    field, stopped = C.receptive_field(c, "normalization2", (0, 0, 5, 5))
    assert stopped and len(field.get(C.INPUT, [])) < 96 * 96


# -- 6. constants grown by folding or at run time are bounded --------------------------------------------------------
def test_a_constant_folding_would_grow_to_an_unknown_size_is_refused_naming_the_node():
    shape = numpy_helper.from_array(np.array([4000, 4000], np.int64), "s")  # 16 M values: over the budget
    nodes = [
        helper.make_node("Abs", ["s"], ["a"], name="abs"),  # shape inference cannot see through it
        helper.make_node(
            "ConstantOfShape", ["a"], ["c"], name="grow", value=numpy_helper.from_array(np.ones(1, np.float32))
        ),
        helper.make_node("Add", ["x", "c"], ["y"], name="add"),
    ]
    m = _model(_graph(nodes, [shape], shape=(1,), outputs=[]))
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["h", "w"]))
    with pytest.raises(ValidationError) as err:
        reading.load_model(m.SerializeToString(), "grow.onnx")
    assert "node 'grow' (ConstantOfShape) makes a constant 'c' whose size is known only once it is computed" in str(
        err.value
    )


def test_a_tensor_grown_at_run_time_is_refused_by_the_runs_memory_cap_naming_the_node(tmp_path):
    nodes = [
        helper.make_node("Cast", ["x"], ["s"], name="cast", to=TensorProto.INT64),
        helper.make_node("Expand", ["one", "s"], ["y"], name="expand"),
    ]
    m = _model(_graph(nodes, [numpy_helper.from_array(np.ones(1, np.float32), "one")], shape=(2,), outputs=[]))
    m.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["h", "w"]))
    path = tmp_path / "expand.onnx"
    path.write_bytes(m.SerializeToString())
    np.save(tmp_path / "x.npy", np.array([3000, 3000], np.float32))  # 9 M values: 36 MB, past a 16 MiB cap
    env = {**os.environ, "PLAYGROUND_MODEL_MAX_MB": "16", "PLAYGROUND_MODEL_CACHE": str(tmp_path / "kept")}
    for args in (["model", str(path), "--no-engine"], ["run", "--onnx", str(path)]):
        ran = subprocess.run(
            [
                sys.executable,
                "-m",
                "playground",
                *args,
                "--input",
                f"x={tmp_path}/x.npy" if args[0] == "model" else f"{tmp_path}/x.npy",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env=env,
        )
        assert ran.returncode == 2, ran.stdout[-300:] + ran.stderr[-600:]
        assert "node 'expand' (Expand) needs 36,000,000 bytes" in ran.stderr and "PLAYGROUND_MODEL_MAX_MB" in ran.stderr
        assert "Traceback" not in ran.stderr and "[E:onnxruntime" not in ran.stderr  # the refusal, once, in words


# -- the model page's analysis is the model's, whatever name a link gives it -------------------------------------
def test_the_model_pages_analysis_is_made_once_per_model_whatever_its_display_name(monkeypatch):
    from apptest import APP, TIMEOUT
    from streamlit.testing.v1 import AppTest
    from streamlit.util import calc_hash

    from playground.model import whole
    from playground.ui import model_page

    digest, _ = reading.remember(_relus(["r", "s"]).SerializeToString(), "m.onnx")
    made = []
    analyze = whole.analyze
    monkeypatch.setattr(whole, "analyze", lambda *a, **k: made.append(a[1]) or analyze(*a, **k))
    model_page._answers.clear()
    for name in ("a.onnx", "b.onnx", "c.onnx"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.run()
        at._page_hash = calc_hash("model")
        at.query_params.update(onnx=digest, model=name)
        at.run()
        assert not at.exception, at.exception
        assert any(name in (m.value or "") for m in at.markdown) or any(name in t.value for t in at.text)
    assert made == ["a.onnx"]


# -- 7. the parser's whole-model build has a budget ---------------------------------------------------------------
def test_a_model_past_the_engine_builds_node_budget_is_listed_and_not_built(tmp_path, monkeypatch):
    from playground.model import whole

    built = []
    monkeypatch.setattr("playground.trt.engine.build_onnx", lambda *a, **k: built.append(1))
    names = [f"r{i}" for i in range(whole.MAX_ENGINE_NODES + 1)]
    model = reading.load_model(_relus(names).SerializeToString(), "many.onnx")
    answer = whole.analyze(model, "many.onnx")
    engine = answer["engine"]
    assert engine["status"] == "not_built" and f"at most {whole.MAX_ENGINE_NODES:,}" in engine["why"], engine
    assert built == [] and len(answer["nodes"]) == len(names) and answer["counts"]["engine_layers"] == 0
    assert whole.engine_words(answer) == ", engine not built"  # the counts never say "0 engine layers" of it


def test_a_whole_group_at_the_element_budget_is_held_as_its_bounds_not_its_cells():
    import tracemalloc

    from playground.base import budget
    from playground.base.box import Box
    from playground.layers import get_layer
    from playground.network.core import evaluate
    from playground.serve import protocol

    box = Box([(0,), range(2, 4), range(3)])
    assert len(box) == 6 and list(box) == [(0, c, w) for c in (2, 3) for w in range(3)] and box[4] == (0, 3, 1)
    assert box == [(0, c, w) for c in (2, 3) for w in range(3)]
    shape = (4, 8, 512, 512)
    assert np.prod(shape) == budget.max_elements()
    ev = evaluate("reduce", {"axes": 15, "keep_dims": True}, np.ones(shape, np.float32), run=False)
    protocol._read_maps.clear()
    tracemalloc.start()
    cells = protocol.read_map(get_layer("reduce"), ev, None)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert cells["reads"]["0,0,0,0"] == {"lo": [0, 0, 0, 0], "hi": [3, 7, 511, 511]}
    assert "8388608 values" in cells["lines"]["0,0,0,0"]
    assert peak < 80 << 20, peak  # the line's values as one float64 view (64 MiB), never 8 M tuples (about 1 GB)
