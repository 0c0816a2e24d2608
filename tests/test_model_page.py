"""The model page: an ONNX model's nodes listed as text with their verdicts, each that opens a link to its layer's
page with the node; a model's names are never read as markdown; a link to a model the server does not hold says so."""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from apptest import APP, TIMEOUT  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from streamlit.util import calc_hash  # noqa: E402

from playground.model import whole  # noqa: E402
from playground.onnx import opening, reading
from playground.ui.model_page import graph_data  # noqa: E402


def _model_bytes(first="Mul"):
    """first(x) → Relu; a Mul by 2, or a Hardmax (which no layer computes)."""
    inputs = ["x", "two"] if first == "Mul" else ["x"]
    g = helper.make_graph(
        [
            helper.make_node(first, inputs, ["m"], name="**bold** [x](http://e.x)"),
            helper.make_node("Relu", ["m"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.fixture(autouse=True)
def _own_model_cache(tmp_path, monkeypatch):
    """Each test's analyses kept apart (the engines stay shared): a test that watches an analysis being made is
    not answered from another's, or from an earlier run's."""
    monkeypatch.setenv("PLAYGROUND_MODEL_CACHE", str(tmp_path / "models"))


def _open(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at._page_hash = calc_hash("model")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def test_model_page_lists_nodes_with_verdicts_and_links():
    digest, _ = reading.remember(_model_bytes("Hardmax"), "m.onnx")
    at = _open(onnx=digest, model="m.onnx")
    texts = [t.value for t in at.text]
    assert any("2 nodes, 1 open as a layer, 1 agree" in t for t in texts), texts
    assert any(t.startswith("**bold** [x](http://e.x) · Hardmax:") for t in texts), texts  # as typed
    links = [e for e in at.get("page_link")]
    assert len(links) == 1
    link = links[0].proto
    assert "relu" in link.label and "agrees" in link.label and link.page.endswith("activation")


def test_a_model_the_server_does_not_hold_is_named():
    at = _open(onnx="0" * 64, model="gone.onnx")
    assert any("URL parameter onnx" in w.value for w in at.warning)


def test_a_model_page_link_opens_the_node_on_its_real_input():
    """relu reads Mul(x, 2): the stage's input is 2·x for the model's seeded x, not the seeded pattern itself; a
    link without real=1 opens on the seeded pattern as before."""
    import numpy as np
    from apptest import open_page, stage_data

    from playground.model import whole
    from playground.serve import server

    digest, model = reading.remember(_model_bytes(), "m.onnx")
    feeds, _ = whole.feeds(model)
    at = open_page("activation", onnx=digest, node="relu", model="m.onnx", real="1")
    seat = server.SEATS.take(stage_data(at)["token"])
    np.testing.assert_array_equal(seat.x, 2 * feeds["x"])
    # the input figure says where its tensor comes from: the Mul's output (its name the model's text), ONNX Runtime's
    assert stage_data(at)["source"]["inputs"] == [["input", "**bold** [x](http://e.x)'s output, by ONNX Runtime"]]
    at = open_page("activation", onnx=digest, node="relu", model="m.onnx")
    seat = server.SEATS.take(stage_data(at)["token"])
    np.testing.assert_array_equal(seat.x, opening.seeded_input(opening.open_remembered(digest, "relu", "m.onnx")))
    assert "inputs" not in stage_data(at)["source"]  # the seeded pattern: no origin claimed


def _relus_bytes(count=3):
    """x → Relu r0 → Relu r1 → …: a run of single-input nodes, every one of which opens as the activation layer."""
    nodes = [helper.make_node("Relu", [f"t{i}" if i else "x"], [f"t{i + 1}"], name=f"r{i}") for i in range(count)]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info(f"t{count}", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_the_first_difference_is_named_and_listed_first(monkeypatch):
    """r1 and r2 made to differ: r1, the earlier, is named with a link to its stage and heads the node list."""
    from playground.model import whole

    real = whole.analyze

    def differing(*args, **kwargs):
        answer = real(*args, **kwargs)
        for n in answer["nodes"]:
            if n["name"] in ("r1", "r2"):
                n["agrees"] = False
        return answer

    monkeypatch.setattr(whole, "analyze", differing)
    digest, _ = reading.remember(_relus_bytes(), "first.onnx")
    at = _open(onnx=digest, model="first-difference.onnx")
    errors = [e.value for e in at.error]
    assert any("First node where the reference and ONNX Runtime part ways: r1 · Relu" in e for e in errors), errors
    labels = [link.proto.label for link in at.get("page_link")]
    assert labels[0] == "Open r1 on its real input", labels
    assert labels[1].startswith("r1 · Relu") and labels[2].startswith("r0 · Relu"), labels  # r1 first, then in order
    assert whole.first_difference([{"name": "a", "layer": "x", "agrees": True}]) is None


def test_the_analysis_names_its_steps_and_a_revisit_answers_at_once(monkeypatch):
    from playground.model import whole

    real, calls, steps = whole.analyze, [], []

    def counted(*args, **kwargs):
        calls.append(args[1])
        inner = kwargs["progress"]
        return real(*args, **kwargs | {"progress": lambda s, done=None: (steps.append((s, done)), inner(s, done))})

    monkeypatch.setattr(whole, "analyze", counted)
    digest, _ = reading.remember(_relus_bytes(2), "steps.onnx")
    at = _open(onnx=digest, model="steps-visit.onnx")
    named = list(dict.fromkeys(s for s, _ in steps))
    assert [s.split(" ")[0] for s in named] == ["ONNX", "Each", "TensorRT's"], steps
    assert [d for _, d in steps if d is not None] == [0.0, 0.5]  # the share of nodes judged, node by node
    assert at.status and at.status[0].proto.label.startswith("Analysed in"), at.status
    assert at.get("progress"), "the bar of nodes judged"
    again = _open(onnx=digest, model="steps-visit.onnx")  # a revisit: the answer kept for the model and its input
    assert calls == ["steps-visit.onnx"]
    assert not again.status
    assert any("2 nodes, 2 open as a layer" in t.value for t in again.text)
    from playground.ui import model_page

    model_page._answers.clear()  # another server process sharing the cache: read from the kept answer, not analysed
    elsewhere = _open(onnx=digest, model="steps-visit.onnx")
    assert calls == ["steps-visit.onnx"]
    assert elsewhere.status[0].proto.label.startswith("Read from the cache in"), elsewhere.status
    assert any("2 nodes, 2 open as a layer" in t.value for t in elsewhere.text)


def test_a_run_of_nodes_opens_as_a_chain_and_a_broken_run_says_why():
    from playground.base.errors import ValidationError
    from playground.network import chain as C
    from playground.serve import as_chain
    from playground.serve import chain_address as A

    data = _relus_bytes()
    model, digest = reading.load_model(data), hashlib.sha256(data).hexdigest()
    query = as_chain.query_of(model, ["r2", "r1"], digest)  # in the model's order, whatever order they were picked in
    assert query["layers"] == "activation,activation" and query["input.shape"] == "1,2,3,3"
    assert query["activation.type"] == "RELU" and query["activation2.type"] == "RELU"
    address = A.from_query(query)
    assert not address.problems, address.problems
    chain = C.resolve(address.names, address.raw(), address.shape)
    assert [link.key for link in chain.links] == ["activation", "activation2"]
    with pytest.raises(ValidationError, match="r2.*must be consecutive"):
        as_chain.query_of(model, ["r0", "r2"], digest)
    with pytest.raises(ValidationError, match="no node 'nope'"):
        as_chain.query_of(model, ["nope"], digest)
    # a node of two tensor inputs is no link of a chain, whether or not its op opens as a layer
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="relu"), helper.make_node("Mul", ["a", "x"], ["y"], name="mul")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    two = reading.load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    with pytest.raises(ValidationError, match="'mul'"):
        as_chain.query_of(two, ["relu", "mul"], digest)


def test_a_models_weights_go_into_the_chain_by_reference():
    """A convolution's kernel of more values than a link holds is named by the server's reference, and the chain
    it opens computes with the model's own weights."""
    import numpy as np

    from playground.base import blobs
    from playground.network import chain as C
    from playground.serve import as_chain
    from playground.serve import chain_address as A

    w = np.random.default_rng(1).uniform(-1, 1, (8, 4, 3, 3)).astype(np.float32)  # 288 values
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 5, 5])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel())],
    )
    model = reading.load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    query = as_chain.query_of(model, ["conv", "relu"], "0" * 64)
    assert query["layers"] == "convolution,activation"
    assert query["convolution.kernel"].startswith(blobs.WEIGHTS)
    address = A.from_query(query)
    chain = C.resolve(address.names, address.raw(), address.shape)
    np.testing.assert_array_equal(chain.links[0].params["kernel"], w)


def test_identity_and_dropout_open_on_the_model_page():
    """Identity → Dropout (inference) → Relu: all three open (the first two as the identity TensorRT's parser
    builds: the shuffle layer doing nothing), agree with ONNX Runtime and link to their layer's page; the graph's
    boxes and the rows say the first two are identities, the shuffle layer after."""
    g = helper.make_graph(
        [
            helper.make_node("Identity", ["x"], ["i"], name="id"),
            helper.make_node("Dropout", ["i"], ["d"], name="drop", ratio=0.5),
            helper.make_node("Relu", ["d"], ["y"], name="relu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 10)]).SerializeToString()
    digest, _ = reading.remember(data, "m.onnx")
    at = _open(onnx=digest, model="m.onnx")
    texts = [t.value for t in at.text]
    assert any("3 nodes, 3 open as a layer, 3 agree" in t for t in texts), texts
    links = {e.proto.label.split(" ")[0]: e.proto.page for e in at.get("page_link")}
    assert links["id"].endswith("shuffle") and links["drop"].endswith("shuffle"), links
    labels = {e.proto.label.split(" ")[0]: e.proto.label for e in at.get("page_link")}
    assert labels["drop"].startswith("drop · Dropout → identity (Shuffle): agrees"), labels
    assert labels["id"].startswith("id · Identity → identity (Shuffle): agrees"), labels
    assert labels["relu"].startswith("relu · Relu → Activation: agrees"), labels
    answer = whole.analyze(reading.load_model(data), "m.onnx", engine=False)
    shorts = {n["id"]: n["short"] for n in graph_data(answer, digest, "m.onnx")["nodes"]}
    assert shorts == {
        "id": "Identity → identity (shuffle)",
        "drop": "Dropout → identity (shuffle)",
        "relu": "Relu → activation",
    }


def test_the_graphs_boxes_name_op_and_key_attributes_and_its_edges_the_tensors_shape():
    """A Conv that sets no kernel (its weight's, 3×3) of stride 2 → Softmax(axis 1) → Hardmax: each box's words, the
    edges' shapes as ONNX Runtime's run gives them, and a grey node's reason as its detail."""
    import numpy as np

    w = np.ones((4, 2, 3, 3), np.float32)
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 2], dilations=[1, 1]),
            helper.make_node("Softmax", ["c"], ["s"], name="soft", axis=1),
            helper.make_node("Hardmax", ["s"], ["y"], name="hard"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel())],
    )
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    answer = whole.analyze(reading.load_model(data), "m.onnx", engine=False)
    graph = graph_data(answer, "d" * 64, "m.onnx")
    boxes = {n["id"]: n for n in graph["nodes"]}
    assert boxes["conv"]["short"] == "Conv k3×3 s2×2 → convolution"  # dilation 1 and group 1 go unsaid
    assert boxes["soft"]["short"] == "Softmax axis 1 → softmax"
    assert boxes["hard"]["short"] == "Hardmax" and boxes["hard"]["href"] is None
    assert boxes["hard"]["detail"] == next(n["reason"] for n in answer["nodes"] if n["name"] == "hard")
    assert boxes["conv"]["shape"] == "1×4×3×3" and boxes["conv"]["diff"] is not None
    assert graph["edges"] == [[0, 0, 1, "1×4×3×3"], [1, 0, 2, "1×4×3×3"]]  # conv's c → soft, soft's s → hard
    assert all(n["path"] is None for n in graph["nodes"])  # grouped by their names


def test_a_large_models_nodes_are_one_table_listed_on_asking():
    """Past 400 nodes the page lists no link per node: a toggle lists them all as one table, each row's link its
    node's layer page on its real input."""
    from playground.ui.model_page import LISTED

    digest, _ = reading.remember(_relus_bytes(LISTED + 1), "many.onnx")
    at = _open(onnx=digest, model="many.onnx")
    assert not at.get("page_link") and not at.dataframe[1:]  # the engine's table at most
    toggle = at.toggle(key="model.list")
    assert toggle.label == f"List all {LISTED + 1} nodes"
    toggle.set_value(True).run()
    table = next(d.value for d in at.dataframe if "node" in d.value.columns)
    assert len(table) == LISTED + 1 and list(table["node"][:2]) == ["r0", "r1"]
    assert table["open"][0] == f"./activation?onnx={digest}&node=r0&model=many.onnx&real=1"


def test_the_analysis_runs_in_the_background_once_for_every_page_waiting(monkeypatch):
    """Two pages opening one model while it is analysed join one analysis in its own thread: the model is analysed
    once, each gets its answer; a failure reaches the page that waits and the next open starts afresh."""
    import threading

    from playground.ui import model_page

    real, calls, gate = whole.analyze, [], threading.Event()

    def held(*args, **kwargs):
        calls.append(threading.current_thread().name)
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(whole, "analyze", held)
    digest, _ = reading.remember(_relus_bytes(2), "bg.onnx")
    first, second = model_page._job(digest, "bg.onnx"), model_page._job(digest, "bg.onnx")
    assert first is second and not first.finished.is_set()
    gate.set()
    assert first.finished.wait(60) and first.error is None
    assert first.answer["counts"]["nodes"] == 2 and calls == [f"model-analysis-{digest[:12]}"]

    def broken(*args, **kwargs):
        raise ValueError("no")

    monkeypatch.setattr(whole, "analyze", broken)
    monkeypatch.setenv("PLAYGROUND_MODEL_CACHE", str(__import__("tempfile").mkdtemp()))  # nothing kept to read
    failed = model_page._job(digest, "bg.onnx")
    assert failed is not first and failed.finished.wait(60) and isinstance(failed.error, ValueError)
    assert model_page._job(digest, "bg.onnx") is not failed  # a failed analysis is not kept: the next open retries


def test_a_model_page_link_opens_every_input_of_a_node_on_its_real_tensor():
    """An Add of Relu(x) and Mul(x, 2), both tensors the model computes: with real=1 the stage's A and B are those
    tensors for the model's seeded x, neither a seeded pattern."""
    import numpy as np
    from apptest import open_page, stage_data

    from playground.serve import server

    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Mul", ["x", "two"], ["m"], name="mul"),
            helper.make_node("Add", ["r", "m"], ["y"], name="add"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    digest, model = reading.remember(data, "m.onnx")
    x = whole.feeds(model)[0]["x"]
    at = open_page("elementwise", onnx=digest, node="add", model="m.onnx", real="1")
    seat = server.SEATS.take(stage_data(at)["token"])
    np.testing.assert_array_equal(seat.x, np.maximum(x, 0))
    np.testing.assert_array_equal(seat.others["b"], 2 * x)


def test_the_engine_layers_chain_links_are_made_once_per_model_and_engine(monkeypatch):
    from playground.ui import model_page

    asked = []
    monkeypatch.setattr(model_page, "chain_link", lambda d, names, n, e: asked.append(names) or (None, "no chain"))
    layers = [{"name": f"L{i}", "type": "kgen", "fuses": [f"a{i}", f"b{i}"]} for i in range(300)]  # past _chains' 256
    answer = {
        "seconds": 1.5,
        "engine": {"status": "built", "layers": layers + [{"name": "x", "type": "t", "fuses": ["c"]}]},
    }
    first = model_page.fused_groups(answer, "d" * 64, "m.onnx")
    again = model_page.fused_groups(answer, "d" * 64, "m.onnx")
    assert again == first and len(first) == 300 and len(asked) == 300  # the one-node layer is no group
    other = {"engine": {"status": "built", "layers": layers[1:]}}  # another engine: made again
    assert len(model_page.fused_groups(other, "d" * 64, "m.onnx")) == 299 and len(asked) == 599
