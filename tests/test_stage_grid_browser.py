"""A model's token tensor on the stage: a (1, 16, 16) tensor a softmax node is lifted to (1, 16, 16, 1) for is drawn
as one 16 × 16 matrix (protocol.grid), and the cell under the pointer is named by the model's index."""

from __future__ import annotations

import onnx
import pytest
from test_stage_grid import _model

from playground.chromium import browser as B

pytestmark = pytest.mark.browser
GRAPH, STAGE = ".pg-graph", ".pg-stage"


def test_a_token_tensor_is_one_matrix_and_a_hovered_cell_names_its_index(browser, app, tmp_path):
    path = tmp_path / "tokens.onnx"
    onnx.save(_model(), path)  # the same model the protocol tests open
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app.rstrip("/") + "/model")
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-drawn='2']")
    page.locator(f"{GRAPH} a .pg-graph-node[data-node='softmax']").click()
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    assert "/softmax" in page.url and "node=softmax" in page.url
    for which in ("input", "output"):  # each one 16 × 16 matrix: no pager, no planes' labels, the model's shape
        fig = f'{STAGE} [data-figure="{which}"]'
        assert page.locator(f"{fig} .pg-pager").count() == 0
        assert "shape (1, 16, 16) ·" in page.inner_text(f"{fig} .pg-stats")
        cell = page.evaluate(f"() => JSON.parse(document.querySelector('{STAGE} .pg-row').dataset.cells)")[which]
        box = page.locator(f"{fig} canvas").first.bounding_box()
        assert abs(box["width"] - (16 * cell + 2)) <= 1 and abs(box["height"] - (16 * cell + 2)) <= 1, (box, cell)
    # the output's cell (row 5, column 11) under the pointer is named (0, 5, 11), as the model indexes it
    cell = page.evaluate(f"() => JSON.parse(document.querySelector('{STAGE} .pg-row').dataset.cells)")["output"]
    box = page.locator(f'{STAGE} [data-figure="output"] canvas').first.bounding_box()
    x, y = box["x"] + 1 + 11.5 * cell, box["y"] + 1 + 5.5 * cell
    blank = page.inner_html(f'{STAGE} [data-figure="input"] .pg-overlay')
    page.mouse.move(x, y)
    tip = page.inner_text(f"{STAGE} .pg-tip")
    assert "(0, 5, 11)" in tip and "value =" in tip, tip
    assert page.inner_html(f'{STAGE} [data-figure="input"] .pg-overlay') != blank  # the row it reads, outlined
    page.mouse.click(x, y)
    page.wait_for_function(f"() => document.querySelector('{STAGE}').dataset.pick === '0,5,11,0'")  # the layer's
    assert page.inner_text(f"{STAGE} .pg-line").startswith("output(0,5,11) =")  # the picked cell, named as drawn
    ctx.close()
