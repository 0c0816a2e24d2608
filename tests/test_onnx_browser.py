"""An ONNX model in the browser: an upload on the home page lists its nodes, a node opens on its layer's stage
with its parameters, its name, ONNX Runtime's badge (or the rule where ONNX differs) and its planes paged; the link
reopens the same configuration in a fresh browser; a link this server cannot follow says so."""

from __future__ import annotations

import json

import onnx
import pytest
from onnx_cases import DIFFERING, node_model, weights

from playground.chromium import browser as B

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"


def _upload(browser, app, model_path, text):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app)
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(model_path))
    page.get_by_text(text).wait_for()
    return ctx, page


def _stage_of_node(page, text):
    page.get_by_text(text).click()
    page.wait_for_selector(f"{STAGE}[data-drawn] [data-onnxruntime]")
    return page


def test_upload_opens_a_node_and_its_link_reopens_it(browser, app, tmp_path):
    path = tmp_path / "two.onnx"
    conv = node_model(
        "Conv", (1, 6, 7, 7), {"w": weights(10, 6, 3, 3), "b": weights(10)}, pads=[1, 1, 1, 1], strides=[2, 2]
    )
    onnx.save(conv, path)
    ctx, page = _upload(browser, app, path, "conv_node · Conv")
    _stage_of_node(page, "conv_node · Conv → Convolution")
    assert page.locator(f"{STAGE} [data-onnx-node]").inner_text() == "two.onnx · conv_node (Conv)"
    assert page.get_attribute(f"{STAGE} [data-onnxruntime]", "data-onnxruntime") == "true"
    query = json.loads(page.get_attribute(STAGE, "data-query"))
    assert query["convolution.num_output_maps"] == "10" and query["convolution.stride_nd.h"] == "2"
    assert query["convolution.kernel"].startswith("@w:")  # 540 values: kept by the server, named by hash
    assert "onnx=" in page.url and "node=conv_node" in page.url
    # six input channels: four planes drawn, the pager walks to the rest
    pager = f'{STAGE} [data-figure="input"] .pg-pager'
    assert "planes 1–4 of 6" in page.inner_text(pager)
    held = (
        "() => [...document.querySelector('.pg-stage').__stage.answer.figures.find((f) => f.which === 'input')"
        ".t.planes.keys()].sort()"
    )
    stats = page.inner_text(f'{STAGE} [data-figure="input"] .pg-stats')
    assert page.evaluate(held) == [0, 1, 2, 3]  # the answer carried the planes drawn, and the whole tensor's stats
    page.click(f"{pager} button[aria-label^='next']")
    page.wait_for_function("s => document.querySelector(s).innerText.includes('5–6 of 6')", arg=pager)
    assert page.evaluate(held) == [0, 1, 2, 3, 4, 5]  # the page turned: its planes asked for by the tensor's id
    assert page.inner_text(f'{STAGE} [data-figure="input"] .pg-stats') == stats
    link = page.url
    ctx.close()

    fresh = B.new_context(browser, viewport={"width": 1920, "height": 1080})
    again = fresh.new_page()
    again.goto(link)
    again.wait_for_selector(f"{STAGE}[data-drawn] [data-onnxruntime]", timeout=60_000)
    assert json.loads(again.get_attribute(STAGE, "data-query")) == query
    assert again.locator(f"{STAGE} [data-onnx-node]").inner_text() == "two.onnx · conv_node (Conv)"
    fresh.close()


def test_a_node_where_onnx_differs_says_which_rule(browser, app, tmp_path):
    path = tmp_path / "ceil.onnx"
    onnx.save(DIFFERING[0][1](), path)
    ctx, page = _upload(browser, app, path, "maxpool_node · MaxPool")
    _stage_of_node(page, "maxpool_node · MaxPool → Pooling")
    badge = page.locator(f"{STAGE} [data-onnxruntime]")
    assert badge.get_attribute("data-onnxruntime") == "false" and "ceil_mode" in badge.inner_text()
    ctx.close()


def test_a_link_to_a_model_this_server_lacks_says_so(browser, app):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(f"{app}/convolution?onnx={'0' * 64}&node=conv")
    page.wait_for_selector(f"{STAGE}[data-drawn]", timeout=60_000)
    assert "is not held by this server" in page.inner_text("body")
    assert page.locator(f"{STAGE} [data-onnx-node]").count() == 0
    ctx.close()
