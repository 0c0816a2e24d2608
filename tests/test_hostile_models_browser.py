"""A model's names in the browser are text, never an object's keys: "__proto__", "constructor" and
"hasOwnProperty" are drawn as three boxes of the graph, each reachable."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from playground.chromium import browser as B

pytestmark = pytest.mark.browser
GRAPH = ".pg-graph"
HOSTILE = ["__proto__", "constructor", "hasOwnProperty"]


def test_node_names_that_are_object_properties_draw_every_box(browser, app, tmp_path):
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name=HOSTILE[0]),
            helper.make_node("Sigmoid", ["a"], ["b"], name=HOSTILE[1]),
            helper.make_node("Tanh", ["b"], ["y"], name=HOSTILE[2]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    path = tmp_path / "proto.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app.rstrip("/") + "/model")
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-drawn='3']")
    drawn = page.eval_on_selector_all(f"{GRAPH} .pg-graph-node", "els => els.map(e => e.dataset.node)")
    assert sorted(drawn) == sorted(HOSTILE) and page.locator(f"{GRAPH} .pg-graph-edge").count() == 2
    page.fill(f"{GRAPH} .pg-graph-search", "constructor")
    page.press(f"{GRAPH} .pg-graph-search", "Enter")
    page.wait_for_selector(f"{GRAPH}[data-centred='constructor']")
    assert not errors, errors
    ctx.close()


def test_a_window_sent_as_its_region_is_outlined_as_one_rectangle_a_plane(browser, app):
    """A Reduce over H, W of 1·2·16·16: each output cell reads its channel's 256 cells, sent as their region; the
    picked cell's window is one rectangle round its plane, and hovering an input cell marks the output it feeds."""
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    query = "reduce.axes=12&reduce.input.kind=random&reduce.input.C=2&reduce.input.H=16&reduce.input.W=16"
    page.goto(f"{app}/reduce?{query}")
    stage = ".pg-stage"
    page.wait_for_selector(f'{stage}[data-drawn] [data-figure="output"] canvas')
    page.wait_for_function(f"() => document.querySelector('{stage}').__stage.answer.cells.complete === true")
    window = page.evaluate(f"() => document.querySelector('{stage}').__stage.answer.cells.reads['0,0,0,0']")
    assert window == {"lo": [0, 0, 0, 0], "hi": [0, 0, 15, 15]}
    marks = page.evaluate(
        f"() => [...document.querySelectorAll('{stage} [data-figure=input] .pg-overlay path')].map(p => p.getAttribute('d'))"
    )
    assert marks and all(d.count("M") == 1 for d in marks), marks  # one rectangle, not 256 squares
    canvas = page.locator(f'{stage} [data-figure="input"] canvas').first
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.9, box["y"] + box["height"] * 0.5)  # a cell of channel 1
    fed = f"() => document.querySelectorAll('{stage} [data-figure=output] .pg-overlay [stroke=\"#0057b8\"]').length"
    page.wait_for_function(f"() => ({fed})() > 0")
    assert not errors, errors
    ctx.close()
