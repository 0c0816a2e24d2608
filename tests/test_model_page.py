"""The model page: an ONNX model's nodes listed as text with their verdicts, each that opens a link to its layer's
page with the node; a model's names are never read as markdown; a link to a model the server does not hold says so."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from apptest import APP, TIMEOUT  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from streamlit.util import calc_hash  # noqa: E402

from playground import onnxio  # noqa: E402


def _model_bytes(first="Mul"):
    """first(x) → Relu; a Mul by 2, or an Identity (which no layer computes, whatever layers are declared)."""
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


def _open(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at._page_hash = calc_hash("model")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def test_model_page_lists_nodes_with_verdicts_and_links():
    digest, _ = onnxio.remember(_model_bytes("Identity"), "m.onnx")
    at = _open(onnx=digest, model="m.onnx")
    texts = [t.value for t in at.text]
    assert any("2 nodes, 1 open as a layer, 1 agree" in t for t in texts), texts
    assert any(t.startswith("**bold** [x](http://e.x) · Identity:") for t in texts), texts  # as typed
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

    from playground import model as whole
    from playground.stage import server

    digest, model = onnxio.remember(_model_bytes(), "m.onnx")
    feeds, _ = whole.feeds(model)
    at = open_page("activation", onnx=digest, node="relu", model="m.onnx", real="1")
    seat = server.SEATS.take(stage_data(at)["token"])
    np.testing.assert_array_equal(seat.x, 2 * feeds["x"])
    at = open_page("activation", onnx=digest, node="relu", model="m.onnx")
    seat = server.SEATS.take(stage_data(at)["token"])
    np.testing.assert_array_equal(seat.x, onnxio.seeded_input(onnxio.open_remembered(digest, "relu", "m.onnx")))
