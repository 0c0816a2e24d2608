"""The model page in the browser: an uploaded model's graph is laid out (the vendored dagre), each node coloured by
its verdict and named as typed (never markup); a node that opens is a link to its layer's stage with the node."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from playground.chromium import browser as B

pytestmark = pytest.mark.browser
GRAPH = ".pg-graph"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": str(cache)}) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with B.chromium() as chrome:
        yield chrome


def test_model_page_draws_the_graph_and_links_a_node_to_its_stage(browser, app, tmp_path):
    g = helper.make_graph(
        [
            helper.make_node("Identity", ["x"], ["m"], name="<b>mul</b>"),
            helper.make_node("Relu", ["m"], ["r"], name="relu"),
            helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    path = tmp_path / "three.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app.rstrip("/") + "/model")
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-drawn='3']")
    nodes = page.locator(f"{GRAPH} .pg-graph-node")
    assert nodes.count() == 3 and page.locator(f"{GRAPH} .pg-graph-edge").count() == 2
    assert page.locator(f"{GRAPH} b").count() == 0  # a name is text, never markup
    assert "<b>mul</b>" in page.inner_text(GRAPH)
    assert page.locator(f"{GRAPH} .pg-graph-agrees").count() == 2
    assert page.locator(f"{GRAPH} .pg-graph-none").count() == 1
    page.locator(f"{GRAPH} a .pg-graph-node[data-node='relu']").click()
    page.wait_for_selector(".pg-stage[data-drawn] [data-onnxruntime]")
    assert "/activation" in page.url and "node=relu" in page.url
    assert "relu (Relu)" in page.locator(".pg-stage [data-onnx-node]").inner_text()
    ctx.close()
